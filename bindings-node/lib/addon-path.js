'use strict';
// Where the addon file is, in the order node-gyp-build uses: a local build
// (build/Release/uniheap.node: `make node`, `npm run build`, or the build
// an install script made) first, so that a checkout's or a rebuilt addon
// wins; else the one prebuilt for this platform that the package carries
// (prebuilds/<platform>-<arch>/uniheap.node, with its libuniheap.so.0
// beside it, which it finds through its $ORIGIN rpath). Node-API keeps one
// addon good for every Node version >= 20, so the folder names no Node ABI;
// the prebuilt is for glibc (Debian 12 or newer: its libgrpc++, libprotobuf
// and libpmem2 must be installed, e.g. by the uniheap Debian package).
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const PLATFORM = `${process.platform}-${process.arch}`;

function candidates() {
  return [
    path.join(ROOT, 'build', 'Release', 'uniheap.node'),
    path.join(ROOT, 'prebuilds', PLATFORM, 'uniheap.node'),
  ];
}

/** The addon's path; throws, saying what to run, when there is none. */
function addonPath() {
  const found = candidates().find((f) => fs.existsSync(f));
  if (found) return found;
  const err = new Error(
    `uniheap: no addon for ${PLATFORM}: this package carries no prebuilt one for it, and ` +
    'none was built (npm runs the install script of a dependency only when allowed). Build ' +
    'it with `npm rebuild uniheap --foreground-scripts` in your project (needs a C++ ' +
    'compiler and an installed uniheap that pkg-config finds), or `make node` in a uniheap ' +
    'checkout');
  err.code = 'UNIHEAP_NO_ADDON';
  throw err;
}

module.exports = { addonPath, PLATFORM, ROOT };
