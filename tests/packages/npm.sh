#!/bin/sh
# tests/packages/npm.sh BUILD: packs bindings-node (npm pack, with the
# prebuilt addon `make node` put in prebuilds/), installs the tarball into
# a temporary project with `npm install --offline` and no compiler on PATH,
# then runs README.md's Node example ("Using it from Node.js") with require
# and again as an ES module with import, against a heapd on a temporary
# heap; finally removes the prebuilt addon from the installed copy and
# checks that loading says what to run. heapd is the checkout's build.
set -u
. "$(dirname "$0")/common.sh"

BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-python3}
APP="$TMP/app"
mkdir -p "$APP" "$TMP/bin" "$TMP/cache"

check "npm pack bindings-node" \
	sh -c "cd '$SRC/bindings-node' && npm pack -q --pack-destination '$TMP' >'$TMP/pack.out'"
TARBALL="$TMP/$(tail -n 1 "$TMP/pack.out")"
check "the tarball carries the prebuilt addon for linux-x64" \
	sh -c "tar -tzf '$TARBALL' | grep -qx package/prebuilds/linux-x64/uniheap.node &&
		tar -tzf '$TARBALL' | grep -qx package/prebuilds/linux-x64/libuniheap.so.0"

# Only node, npm and a shell on PATH: no cc, c++, make or python for node-gyp.
for p in node npm sh; do ln -s "$(command -v $p)" "$TMP/bin/$p"; done
printf '{ "name": "app", "version": "1.0.0", "private": true }\n' >"$APP/package.json"
check "npm install --offline of the tarball, no compiler on PATH" \
	sh -c "cd '$APP' && env PATH='$TMP/bin' npm install --offline --no-audit --no-fund \
		--loglevel=error '$TARBALL'"
check "no addon was compiled at install: the prebuilt one is used" \
	sh -c "[ ! -e '$APP/node_modules/uniheap/build' ] && cd '$APP' && env -u UNIHEAP_BUILD \
		node -e \"const p = require('uniheap/package.json') && require.resolve('uniheap');
		const a = require('$APP/node_modules/uniheap/lib/addon-path.js').addonPath();
		if (!a.endsWith('/prebuilds/linux-x64/uniheap.node')) throw new Error(a);\""

check "heapd starts on a temporary heap" start_heapd "$BUILD/heapd" "$BUILD/heapctl"
"$PY" "$SRC/tests/packages/readme_block.py" "$SRC/README.md" "Using it from Node.js" js \
	>"$APP/tour.js"
sed "s/^const uniheap = require('uniheap');/import * as uniheap from 'uniheap';/" \
	"$APP/tour.js" >"$APP/tour.mjs"
check "the ES module tour imports uniheap with import" grep -q "^import \* as uniheap" "$APP/tour.mjs"
check "README tour with require" \
	sh -c "cd '$APP' && env -u UNIHEAP_BUILD node tour.js | grep -q 'x: 1, y: 2'"
check "README tour with import sees the first run's commit" \
	sh -c "cd '$APP' && env -u UNIHEAP_BUILD node tour.mjs | grep -q 'x: 2, y: 4'"
check "import { connect } and require give the same function" \
	sh -c "cd '$APP' && node --input-type=module -e \"
		import { connect } from 'uniheap'; import { createRequire } from 'node:module';
		const r = createRequire(process.cwd() + '/');
		if (connect !== r('uniheap').connect) process.exit(1);\""
stop_heapd

rm -rf "$APP/node_modules/uniheap/prebuilds"
check "without an addon, require says what to run" \
	sh -c "cd '$APP' && ! node -e \"require('uniheap')\" 2>'$TMP/err' &&
		grep -q 'npm rebuild uniheap' '$TMP/err'"
summary
