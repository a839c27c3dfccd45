#!/bin/sh
# YCSB A-D and F through the official client on an embedded Infinispan
# cache (org.uniheap.infinispan.ycsb.InfinispanDB), on one node or three,
# with each store in turn and the same cache settings: the uniheap store
# (a heapd per node, memory durability), SoftIndexFileStore and no store
# (ISPN_YCSB_SYNC=1: both stores make each write durable before it returns).
# Three nodes (ISPN_YCSB_NODES=3): the client's JVM and two Node JVMs on
# 127.0.0.1, a distributed cache with 2 owners, JGroups over loopback TCP
# (src/test/resources/jgroups-loopback.xml, ports from ISPN_YCSB_PORT,
# default 7950..7952); the two nodes serve from before the load to after
# the run, so the run's client joins a cluster holding the table. The heap
# file and SIFS's files are on the same file system (ISPN_YCSB_DIR, default
# /dev/shm, else the temporary folder). Prints one line per store and
# workload: "store workload throughput(ops/s) seconds-of-the-run-JVM", and
# "N not-ok" when N operations of the load or run returned anything but OK
# (a read that finds no record is cheaper than one that does: such a run's
# throughput is not comparable; the statuses go to stderr).
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
#   ISPN_YCSB_NODES   1 (default) or 3
#   ISPN_YCSB_SYNC    1: every write durable on return, in both stores: the
#                     heap in the sync class (heapd --durability sync) and
#                     SoftIndexFileStore with syncWrites; default 0: the
#                     memory class and SoftIndexFileStore's defaults (no
#                     write waits for the disk)
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
nodes=${ISPN_YCSB_NODES:-1}
sync=${ISPN_YCSB_SYNC:-0}
durability=memory
[ "$sync" = 1 ] && durability=sync
port=${ISPN_YCSB_PORT:-7950}
jgroups="$here/src/test/resources/jgroups-loopback.xml"
hosts=""
i=0
while [ $i -lt "$nodes" ]; do
	hosts="$hosts${hosts:+,}127.0.0.1[$((port + i))]"
	i=$((i + 1))
done
base=${ISPN_YCSB_DIR:-/dev/shm}
[ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/uniheap-ispn-ycsb-XXXXXX")
heapd_pids=""
node_pids=""
cleanup() {
	stop_nodes
	stop_heapds
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# The binding's jar of this tree first (make ispn-ycsb has just packaged
# it), ahead of the local Maven repository's copy in classpath.txt: that copy
# is whatever tree installed last, possibly a binding that needs functions
# this build's libuniheap lacks, or one that changes between the load's JVM
# and the run's.
binding=$(ls "$top"/bindings-java/target/uniheap-*.jar 2>/dev/null |
	grep -v -e '-tests\.jar$' -e '-sources\.jar$' -e '-javadoc\.jar$' | head -n 1)
[ -n "$binding" ] || { echo "no binding jar in bindings-java/target (make java)" >&2; exit 1; }
cp="$here/target/classes:$binding:$(cat "$here/target/classpath.txt")"
export UNIHEAP_LIB="$UNIHEAP_BUILD/libuniheap.so.0"

start_heapd() { # node
	rm -f "$work/heap$1.uh"
	"$UNIHEAP_BUILD/heapd" --heap "$work/heap$1.uh" --socket "$work/heapd$1.sock" --create \
		--size "$(( records * 2 / 1000 + 256 ))M" --durability "$durability" >"$work/heapd$1.log" 2>&1 &
	heapd_pids="$heapd_pids $!"
	i=0
	while [ ! -S "$work/heapd$1.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}

stop_heapds() {
	for p in $heapd_pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
	heapd_pids=""
}

jvm() { # [--exec] class args: a JVM; --exec in a background job, so that $! is its pid
	run=""
	if [ "$1" = --exec ]; then run=exec; shift; fi
	$run "$JAVA" ${ISPN_YCSB_JVMOPTS:-} --enable-native-access=ALL-UNNAMED \
		--sun-misc-unsafe-memory-access=allow \
		-Djava.util.logging.config.file="$here/src/test/resources/logging.properties" \
		-Djgroups.hosts="$hosts" -Djava.net.preferIPv4Stack=true -cp "$cp" "$@"
}

start_nodes() { # store: the other nodes (1 .. nodes-1), each until it is a member
	n=1
	while [ $n -lt "$nodes" ]; do
		jvm --exec -Djgroups.tcp.port=$((port + n)) org.uniheap.infinispan.ycsb.Node \
			ispn.store="$1" ispn.memory="$memory" ispn.nodes="$nodes" ispn.jgroups="$jgroups" \
			ispn.sync="$sync" \
			ispn.node="node$n" ispn.socket="$work/heapd$n.sock" ispn.dir="$work/sifs$n" \
			>"$work/node$n.out" 2>"$work/node$n.err" &
		node_pids="$node_pids $!"
		i=0
		while ! grep -q ready "$work/node$n.out" 2>/dev/null; do
			if [ $i -ge 1200 ]; then echo "node$n did not start" >&2; cat "$work/node$n.err" >&2; exit 1; fi
			sleep 0.1; i=$((i + 1))
		done
		n=$((n + 1))
	done
}

stop_nodes() {
	for p in $node_pids; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
	node_pids=""
}

ycsb() { # store phase workload
	jvm -Djgroups.tcp.port="$port" site.ycsb.Client "$2" \
		-db org.uniheap.infinispan.ycsb.InfinispanDB \
		-P "$top/bench/ycsb/workloads/workload$3" -p recordcount="$records" \
		-p operationcount="$ops" -threads "$threads" -p ispn.store="$1" \
		-p ispn.socket="$work/heapd0.sock" -p ispn.dir="$work/sifs0" -p ispn.memory="$memory" \
		-p ispn.preload="$preload" -p ispn.nodes="$nodes" -p ispn.jgroups="$jgroups" \
		-p ispn.node=node0 -p ispn.sync="$sync" 2>"$work/client.err"
}

not_ok() { # client reports: how many operations returned anything but OK
	cat "$@" 2>/dev/null | sed -n 's/^\[[A-Z-]*\], Return=\([A-Z_]*\), \([0-9]*\)$/\1 \2/p' |
		awk '$1 != "OK" { n += $2 } END { print n + 0 }'
}

# Workload after workload, each store in turn: on a shared machine whose
# load drifts, the stores of one workload run minutes apart at most.
for w in $workloads; do
	for store in $stores; do
		rm -rf "$work"/sifs* "$work/load.out"
		if [ "$store" = uniheap ]; then
			n=0
			while [ $n -lt "$nodes" ]; do start_heapd $n; n=$((n + 1)); done
		fi
		start_nodes "$store"
		if [ "$store" != none ] || [ "$nodes" -gt 1 ]; then
			ycsb "$store" -load "$w" >"$work/load.out" || { cat "$work/client.err" >&2; exit 1; }
		fi
		t0=$(date +%s%N)
		ycsb "$store" -t "$w" >"$work/run.out" || { cat "$work/client.err" >&2; exit 1; }
		secs=$(( ($(date +%s%N) - t0) / 1000000 ))
		secs=$(printf '%d.%03d' $((secs / 1000)) $((secs % 1000)))
		tput=$(sed -n 's/^\[OVERALL\], Throughput(ops\/sec), //p' "$work/run.out")
		if [ -z "$tput" ]; then
			echo "$store workload$w: no throughput in the client's report" >&2
			grep -m3 -B2 -A12 "Exception" "$work/client.err" >&2 || tail -n 20 "$work/run.out" "$work/client.err" >&2
			exit 1
		fi
		# An operation that did not find its record (or failed) is cheaper
		# than one that did: a run with any makes no comparable figure.
		bad=$(not_ok "$work/load.out" "$work/run.out")
		flag=""
		if [ "$bad" -gt 0 ]; then
			flag=" $bad not-ok"
			echo "$store workload$w: $bad operations not OK (load and run):" >&2
			grep -h 'Return=' "$work/load.out" "$work/run.out" | grep -v 'Return=OK' >&2
		fi
		echo "$store workload$w $tput $secs$flag"
		stop_nodes
		stop_heapds
	done
done
