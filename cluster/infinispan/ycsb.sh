#!/bin/sh
# YCSB A-D and F through the official client on an embedded Infinispan
# cache (org.uniheap.infinispan.ycsb.InfinispanDB), one node, with each
# store in turn and the same cache settings: the uniheap store (a heapd of
# its own, memory durability), SoftIndexFileStore and no store. The heap
# file and SIFS's files are on the same file system (ISPN_YCSB_DIR, default
# /dev/shm, else the temporary folder). Prints one line per store and
# workload: "store workload throughput(ops/s) seconds-of-the-run-JVM".
#
# Run by make ispn-ycsb (after make ispn); environment:
#   JAVA             a JDK 25 java (make passes JAVA25_HOME's)
#   UNIHEAP_BUILD    the CMake build folder (heapd, libuniheap)
#   ISPN_YCSB_RECORDS (10000)  ISPN_YCSB_OPS (20000)  ISPN_YCSB_THREADS (2)
#   ISPN_YCSB_WORKLOADS ("a b c d f")  ISPN_YCSB_STORES ("uniheap sifs none")
#   ISPN_YCSB_MEMORY  entries kept in memory (-1: all; e.g. 10% of the
#                     records makes the store serve most reads)
#   ISPN_YCSB_PRELOAD true: each run's cache preloads the store at start; the
#                     fourth column is then telling: the run JVM's wall time
#                     in seconds (with ISPN_YCSB_OPS=1, a node's restart)
#   ISPN_YCSB_JVMOPTS options for the client JVMs (e.g. a JFR recording:
#                     -XX:StartFlightRecording=filename=/tmp/ycsb-%p.jfr)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
records=${ISPN_YCSB_RECORDS:-10000}
ops=${ISPN_YCSB_OPS:-20000}
threads=${ISPN_YCSB_THREADS:-2}
workloads=${ISPN_YCSB_WORKLOADS:-a b c d f}
stores=${ISPN_YCSB_STORES:-uniheap sifs none}
memory=${ISPN_YCSB_MEMORY:--1}
preload=${ISPN_YCSB_PRELOAD:-false}
base=${ISPN_YCSB_DIR:-/dev/shm}
[ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/uniheap-ispn-ycsb-XXXXXX")
heapd_pid=""
cleanup() {
	if [ -n "$heapd_pid" ]; then kill "$heapd_pid" 2>/dev/null; wait "$heapd_pid" 2>/dev/null; fi
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

cp="$here/target/classes:$(cat "$here/target/classpath.txt")"
export UNIHEAP_LIB="$UNIHEAP_BUILD/libuniheap.so.0"

start_heapd() {
	rm -f "$work/heap.uh"
	"$UNIHEAP_BUILD/heapd" --heap "$work/heap.uh" --socket "$work/heapd.sock" --create \
		--size "$(( records * 2 / 1000 + 256 ))M" --durability memory >"$work/heapd.log" 2>&1 &
	heapd_pid=$!
	i=0
	while [ ! -S "$work/heapd.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}

stop_heapd() {
	kill "$heapd_pid" && wait "$heapd_pid" 2>/dev/null || true
	heapd_pid=""
}

ycsb() { # store phase workload
	"$JAVA" ${ISPN_YCSB_JVMOPTS:-} --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
		-Djava.util.logging.config.file="$here/src/test/resources/logging.properties" \
		-cp "$cp" site.ycsb.Client "$2" -db org.uniheap.infinispan.ycsb.InfinispanDB \
		-P "$top/bench/ycsb/workloads/workload$3" -p recordcount="$records" \
		-p operationcount="$ops" -threads "$threads" -p ispn.store="$1" \
		-p ispn.socket="$work/heapd.sock" -p ispn.dir="$work/sifs" -p ispn.memory="$memory" \
		-p ispn.preload="$preload" \
		2>"$work/client.err"
}

for store in $stores; do
	for w in $workloads; do
		if [ "$store" = uniheap ]; then start_heapd; fi
		rm -rf "$work/sifs"
		if [ "$store" != none ]; then
			ycsb "$store" -load "$w" >"$work/load.out" || { cat "$work/client.err" >&2; exit 1; }
		fi
		t0=$(date +%s%N)
		ycsb "$store" -t "$w" >"$work/run.out" || { cat "$work/client.err" >&2; exit 1; }
		secs=$(( ($(date +%s%N) - t0) / 1000000 ))
		secs=$(printf '%d.%03d' $((secs / 1000)) $((secs % 1000)))
		tput=$(sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p' "$work/run.out")
		if [ -z "$tput" ]; then
			echo "$store workload$w: no throughput in the client's report" >&2
			tail -n 20 "$work/run.out" "$work/client.err" >&2
			exit 1
		fi
		echo "$store workload$w $tput $secs"
		if [ "$store" = uniheap ]; then stop_heapd; fi
	done
done
