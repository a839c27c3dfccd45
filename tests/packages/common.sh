# tests/packages/common.sh: sourced by each package test (deb.sh, wheel.sh,
# npm.sh, maven.sh). Gives a temporary folder ($TMP, removed at exit),
# check (one counted assertion), a heapd on a fresh heap and socket in
# $TMP that is always stopped, and summary (the "N passed, N failed" line
# and the exit status). Only the PIDs started here are ever signalled.

TMP=$(mktemp -d "${TMPDIR:-/tmp}/uniheap-pkgtest.XXXXXX")
PASSED=0
FAILED=0
HEAPD_PID=

cleanup() {
	stop_heapd
	rm -rf "$TMP"
}
trap cleanup EXIT

# check NAME CMD [ARGS...]: runs CMD, its output into $TMP/last.log
# (shown when it fails).
check() {
	name=$1
	shift
	if "$@" >"$TMP/last.log" 2>&1; then
		echo "ok   - $name"
		PASSED=$((PASSED + 1))
	else
		echo "FAIL - $name"
		sed 's/^/       /' "$TMP/last.log" | tail -40
		FAILED=$((FAILED + 1))
	fi
}

# start_heapd HEAPD HEAPCTL: a heapd (the given program) on $TMP/heap and
# $TMP/heapd.sock, returned once heapctl status answers; UNIHEAP_SOCKET is
# exported for the clients.
start_heapd() {
	"$1" --heap "$TMP/heap" --create --size 64M --socket "$TMP/heapd.sock" \
		>"$TMP/heapd.log" 2>&1 &
	HEAPD_PID=$!
	export UNIHEAP_SOCKET="$TMP/heapd.sock"
	i=0
	while [ $i -lt 300 ]; do
		if [ -S "$TMP/heapd.sock" ] && "$2" status >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$HEAPD_PID" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	cat "$TMP/heapd.log"
	return 1
}

stop_heapd() {
	if [ -n "$HEAPD_PID" ]; then
		kill "$HEAPD_PID" 2>/dev/null
		wait "$HEAPD_PID" 2>/dev/null
		HEAPD_PID=
	fi
}

summary() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}
