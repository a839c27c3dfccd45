#!/usr/bin/env node
// The package's install script: nothing to do when an addon is there (the
// prebuilt one for this platform the package carries, or a local build);
// otherwise builds it (scripts/build.js: node-gyp against an installed
// uniheap). npm 11 runs a dependency's install script only when the user
// allows it, so the prebuilt addon must be, and is, the normal path.
'use strict';

const path = require('node:path');
const { addonPath } = require('../lib/addon-path');

try {
  addonPath();
} catch (e) {
  if (e.code !== 'UNIHEAP_NO_ADDON') throw e;
  require(path.join(__dirname, 'build.js'));
}
