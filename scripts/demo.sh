#!/usr/bin/env bash
# demo.sh -- what `make demo` runs: processes written in C, Python, Java and
# Node share objects in one persistent heap served by heapd.
#
#   1. start heapd on ./var/demo.heap (created on the first run, durability
#      sync) with its socket at ./var/heapd.sock
#   2. process 1 (C, demo_creator) creates or finds the root "demo.board",
#      adds 1 to its counter, and sleeps until another process changes it
#   3. process 2 (C, demo_updater) finds the same root, reads it in place
#      and adds 10
#   4. a Python process adds 100, a Java process 1000, a Node process
#      10000: each opens the same root (classes it never declared), says
#      what it finds there (the others' updates) and adds its amount in one
#      failure-atomic block
#   5. process 1 is woken by each commit (uh_wait: a futex in the mapping, no
#      polling, no message to heapd) and reads the update in its own mapping
#   6. heapctl shows the heap and its roots; heapd is stopped (always: by
#      the PID this script started, on any exit)
#
# A language whose binding is not built in this tree is left out (said so).
# Run it again: the heap keeps the board, and the counter goes on counting.
# DEMO_VAR names another folder than ./var (the tests use a temporary one).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
VAR=${DEMO_VAR:-$PWD/var}
JAVA=${JAVA25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
HEAP=$VAR/demo.heap
SOCK=$VAR/heapd.sock
LOG=$VAR/heapd.log
READY=$VAR/demo.ready
OUT1=$VAR/demo.process1.out
HEAPD=$BUILD/heapd
HEAPCTL=$BUILD/heapctl
EX=$BUILD/examples/c

for prog in "$HEAPD" "$HEAPCTL" "$EX/demo_creator" "$EX/demo_updater"; do
	if [ ! -x "$prog" ]; then
		echo "demo: $prog is not built; run 'make' first" >&2
		exit 1
	fi
done
mkdir -p "$VAR"
export UNIHEAP_SOCKET=$SOCK

heapd_pid=""
creator_pid=""
# Stop only what this script started, by PID.
cleanup() {
	rm -f "$READY" "$OUT1"
	if [ -n "$creator_pid" ] && kill -0 "$creator_pid" 2>/dev/null; then
		kill "$creator_pid" 2>/dev/null || true
		wait "$creator_pid" 2>/dev/null || true
	fi
	if [ -n "$heapd_pid" ] && kill -0 "$heapd_pid" 2>/dev/null; then
		kill -TERM "$heapd_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$heapd_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$heapd_pid" 2>/dev/null || true
		wait "$heapd_pid" 2>/dev/null || true
		echo "== heapd (pid $heapd_pid) stopped; the heap stays in ${HEAP#$PWD/}" || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if "$HEAPCTL" --socket "$SOCK" health >/dev/null 2>&1; then
	echo "demo: a heapd is already serving $SOCK; stop it first" >&2
	exit 1
fi

step() { printf '\n== %s\n' "$*"; }

if [ -e "$HEAP" ]; then
	step "starting heapd on the existing heap ${HEAP#$PWD/} (log: ${LOG#$PWD/})"
	"$HEAPD" --heap "$HEAP" --socket "$SOCK" 2>>"$LOG" &
else
	step "creating a new heap ${HEAP#$PWD/} (64 MiB, durability sync) and starting heapd (log: ${LOG#$PWD/})"
	"$HEAPD" --heap "$HEAP" --socket "$SOCK" --create --size 64M --durability sync 2>>"$LOG" &
fi
heapd_pid=$!
for _ in $(seq 100); do
	"$HEAPCTL" --socket "$SOCK" health >/dev/null 2>&1 && break
	if ! kill -0 "$heapd_pid" 2>/dev/null; then
		echo "demo: heapd exited; its log says:" >&2
		tail -5 "$LOG" >&2
		heapd_pid=""
		exit 1
	fi
	sleep 0.1
done
echo "heapd is serving ${SOCK#$PWD/} (pid $heapd_pid)"

# The other languages' processes, each with the amount it adds.
langs=()
if ls bindings-python/uniheap/_uniheap*.so >/dev/null 2>&1; then
	langs+=(python)
else
	echo "demo: python left out: its extension is not built (make python)"
fi
java_jar=$(ls bindings-java/target/uniheap-*.jar 2>/dev/null | grep -v -e sources -e javadoc -e tests | head -1 || true)
if [ -n "$java_jar" ] && [ -x "$JAVA" ]; then
	langs+=(java)
else
	echo "demo: java left out: bindings-java is not built in this tree (make java)"
fi
if [ -f bindings-node/package.json ] && ls bindings-node/build/Release/*.node >/dev/null 2>&1; then
	langs+=(node)
else
	echo "demo: node left out: bindings-node is not built in this tree (make node)"
fi
declare -A amount=([python]=100 [java]=1000 [node]=10000)
increase=10
for l in "${langs[@]}"; do
	increase=$((increase + amount[$l]))
done

run_lang() {
	case $1 in
	python) PYTHONPATH=bindings-python${PYTHONPATH:+:$PYTHONPATH} \
		python3 examples/python/demo_board.py "${amount[python]}" ;;
	java) "$JAVA" --enable-native-access=ALL-UNNAMED -Djava.library.path="$BUILD" \
		-cp "$java_jar" examples/java/DemoBoard.java "${amount[java]}" ;;
	node) node examples/node/demo_board.js "${amount[node]}" ;;
	esac
}

step "process 1 creates (or finds) the object graph and updates it"
rm -f "$READY"
# Process 1 keeps running in the background; its output is shown in step
# order (what it printed so far, then the rest once it has finished).
"$EX/demo_creator" "$READY" "$increase" >"$OUT1" 2>&1 &
creator_pid=$!
for _ in $(seq 100); do
	[ -e "$READY" ] && break
	if ! kill -0 "$creator_pid" 2>/dev/null; then
		wait "$creator_pid" || true
		creator_pid=""
		cat "$OUT1"
		echo "demo: process 1 failed" >&2
		exit 1
	fi
	sleep 0.1
done
shown=$(wc -l <"$OUT1")
head -n "$shown" "$OUT1"

step "process 2 (a separate process) reads the same objects and updates them"
"$EX/demo_updater"

for l in "${langs[@]}"; do
	step "a $l process opens the same root, sees the updates so far, adds ${amount[$l]}"
	run_lang "$l"
done

step "process 1, woken by each commit, has seen every update"
rc=0
wait "$creator_pid" || rc=$?
creator_pid=""
tail -n +"$((shown + 1))" "$OUT1"
if [ "$rc" -ne 0 ]; then
	echo "demo: process 1 failed (exit $rc)" >&2
	exit 1
fi

step "heapctl status"
"$HEAPCTL" --socket "$SOCK" status

step "heapctl roots"
"$HEAPCTL" --socket "$SOCK" roots
