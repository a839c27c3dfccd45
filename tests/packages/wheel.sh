#!/bin/sh
# tests/packages/wheel.sh BUILD: installs the wheel of BUILD/dist into a
# fresh venv outside the checkout (pip --no-index: offline), then runs the
# Python example of README.md ("Using it from Python") twice against a
# heapd on a temporary heap: the second run sees what the first committed.
# Checks that the venv's copy is the one imported (extension, libuniheap
# beside it, .pyi stubs), never the checkout's. heapd is the checkout's
# build: this tests the wheel, not the daemon.
set -u
. "$(dirname "$0")/common.sh"

BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-python3}
WHEEL=$(ls "$BUILD"/dist/uniheap-*.whl | tail -n 1)
VENV="$TMP/venv"

check "python3 -m venv" "$PY" -m venv "$VENV"
check "pip install --no-index $(basename "$WHEEL")" \
	"$VENV/bin/pip" install -q --no-index --disable-pip-version-check "$WHEEL"
check "heapd starts on a temporary heap" start_heapd "$BUILD/heapd" "$BUILD/heapctl"

mkdir "$TMP/app"
"$PY" "$SRC/tests/packages/readme_block.py" "$SRC/README.md" "Using it from Python" python \
	>"$TMP/app/tour.py"
# Run where the checkout is not on any path; the variables that could point
# back into the checkout are cleared.
inapp() {
	(cd "$TMP/app" && env -u PYTHONPATH -u UNIHEAP_BUILD -u LD_LIBRARY_PATH "$@")
}
check "the venv's uniheap is imported, with libuniheap beside it" \
	inapp "$VENV/bin/python" -c "
import os, uniheap, uniheap._uniheap as ext
pkg = os.path.dirname(uniheap.__file__)
assert pkg.startswith('$VENV/'), pkg
maps = open('/proc/self/maps').read()
lib = [l.split()[-1] for l in maps.splitlines() if 'libuniheap.so' in l]
assert lib and all(os.path.dirname(p) == pkg for p in lib), lib
assert os.path.exists(os.path.join(pkg, '__init__.pyi')), 'no stubs'
assert os.path.exists(os.path.join(pkg, 'py.typed')), 'no py.typed'
"
check "README tour, first run" \
	sh -c "cd '$TMP/app' && env -u PYTHONPATH -u UNIHEAP_BUILD '$VENV/bin/python' tour.py | grep -q 'x=1, y=2'"
check "README tour, second run sees the first's commit" \
	sh -c "cd '$TMP/app' && env -u PYTHONPATH -u UNIHEAP_BUILD '$VENV/bin/python' tour.py | grep -q 'x=2, y=4'"
check "pip uninstall leaves no file of the package" \
	sh -c "'$VENV/bin/pip' uninstall -q -y uniheap && ! ls '$VENV'/lib/python*/site-packages/uniheap 2>/dev/null"
summary
