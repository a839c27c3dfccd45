#!/usr/bin/env bash
# Run the Java binding's JMH benchmark (make bench; make java-bench).
# Starts a private heapd on a fresh heap in tmpfs (/dev/shm when present),
# memory durability, runs every benchmark of target/classes in one JMH run,
# prints JMH's table and the ratios (bench/java/report.py), stops heapd.
# Needs: JAVA_HOME (a JDK 25), UNIHEAP_BUILD (the CMake build folder), the
# classes and target/classpath.txt built by `make java-bench`.
# Extra arguments go to JMH (e.g. a benchmark regex: FieldBench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${UNIHEAP_BUILD:?set UNIHEAP_BUILD to the CMake build folder}
java=${JAVA_HOME:?set JAVA_HOME to a JDK 25}/bin/java
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
dir=$(mktemp -d "$base/uniheap-jbench-XXXXXX")
"$build/heapd" --heap "$dir/heap.uh" --socket "$dir/heapd.sock" --create --size 2G \
	--durability memory >"$dir/heapd.log" 2>&1 &
heapd=$!
cleanup() {
	kill "$heapd" 2>/dev/null && wait "$heapd" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 200); do
	"$build/heapctl" --socket "$dir/heapd.sock" health >/dev/null 2>&1 && break
	kill -0 "$heapd" 2>/dev/null || { cat "$dir/heapd.log"; exit 1; }
	sleep 0.05
done
export UNIHEAP_SOCKET="$dir/heapd.sock" UNIHEAP_LIB="$build/libuniheap.so.0" UNIHEAP_BENCH_DIR="$dir"
echo "bench/java: heap on $base (tmpfs when /dev/shm), durability memory, $(nproc) cores"
"$java" --enable-native-access=ALL-UNNAMED \
	-cp "$here/target/classes:$(cat "$here/target/classpath.txt")" \
	org.openjdk.jmh.Main -rf json -rff "$dir/jmh.json" "$@"
python3 "$here/report.py" "$dir/jmh.json"
