'use strict';
// Loads the addon (a local build, else the package's prebuilt one: see
// addon-path.js) and hands it the error factory. One per thread: each
// worker loads its own instance.
const { addonPath } = require('./addon-path');
const { makeError } = require('./errors');

const addon = require(addonPath());
const {
  Session, scratch, bytes, formatVersion, libVersion, classIds,
} = addon.init(makeError);

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
  // The built-in class ids (uniheap.h's UH_CLASS_*): string, bytes, array,
  // list, map, sortedMap.
  CLASS: Object.freeze(classIds),
  defaultSocket: addon.defaultSocket,
};
