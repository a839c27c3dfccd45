'use strict';
// Loads the addon (built by scripts/build.js into build/Release) and hands
// it the error factory. One per thread: each worker loads its own instance.
const path = require('node:path');
const { makeError } = require('./errors');

function load() {
  const file = path.join(__dirname, '..', 'build', 'Release', 'uniheap.node');
  try {
    return require(file);
  } catch (e) {
    if (e.code !== 'MODULE_NOT_FOUND') throw e;
    throw new Error(`uniheap: the addon ${file} is not built: run \`npm install\` in ` +
      'bindings-node (or `make node` in the uniheap checkout)');
  }
}

const addon = load();
const { Session, scratch, bytes, formatVersion, libVersion } = addon.init(makeError);

module.exports = {
  Session,
  // What a call returns besides its value (src/addon.h, "Scratch"):
  // [0] 1 when the value is a reference, [1] its generation, [2] its class.
  scratch: new Uint32Array(scratch),
  // Where a call asked to may leave a bytes value (scratch[0] 2, the call
  // returns its length): copying it from here into a pooled Buffer is
  // several times faster than the addon making a Buffer.
  bytesBuf: Buffer.from(bytes),
  formatVersion,
  libVersion,
  defaultSocket: addon.defaultSocket,
};
