#!/usr/bin/env bash
# demo.sh -- what `make demo` runs: two separate processes share objects in
# one persistent heap served by heapd.
#
#   1. start heapd on ./var/demo.heap (created on the first run, durability
#      sync) with its socket at ./var/heapd.sock
#   2. process 1 (demo_creator) creates or finds the root "demo.board", adds
#      1 to its counter, and waits
#   3. process 2 (demo_updater) finds the same root, reads it in place and
#      adds 10
#   4. process 1 sees the update in its own mapping
#   5. heapctl shows the heap and its roots; heapd is stopped (always: by
#      the PID this script started, on any exit)
#
# Run it again: the heap keeps the board, and the counter goes on counting.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}
VAR=$PWD/var
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

step "process 1 creates (or finds) the object graph and updates it"
rm -f "$READY"
# Process 1 keeps running in the background; its output is shown in step
# order (what it printed so far, then the rest once it has finished).
"$EX/demo_creator" "$READY" >"$OUT1" 2>&1 &
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

step "process 1, still running, notices the update"
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
