#!/bin/sh
# tests/packages/run.sh BUILD: `make test-packages`. Runs each package test
# on what `make deb`, `make wheel`, `make node` and the Maven install made
# from BUILD, every one even when an earlier one failed, and adds up their
# "N passed, N failed" lines into the last line; exit status 1 when any
# check failed or a test did not finish.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "$1" && pwd)
passed=0
failed=0

run() {
	echo "== tests/packages/$1"
	shift
	"$@" 2>&1 | tee "$BUILD/packages-test.log"
	line=$(tail -n 1 "$BUILD/packages-test.log")
	case $line in
	*" passed, "*" failed")
		set -- $line
		passed=$((passed + $1))
		failed=$((failed + $3))
		;;
	*)
		echo "(no summary: counted as one failure)"
		failed=$((failed + 1))
		;;
	esac
}

for deb in "$BUILD"/dist/uniheap_*.deb; do :; done
run deb.sh sh "$HERE/deb.sh" "$deb"
for t in wheel npm maven; do
	[ -f "$HERE/$t.sh" ] && run "$t.sh" sh "$HERE/$t.sh" "$BUILD"
done
rm -f "$BUILD/packages-test.log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
