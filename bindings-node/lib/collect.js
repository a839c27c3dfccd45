'use strict';
// A full V8 collection on demand, for the pins of dead proxies (FORMAT.md
// 9.3): a proxy pins its object until V8 has collected it (src/pins.h),
// and a program that makes proxies faster than V8 collects them would
// otherwise hold their objects pinned. Node gives gc() only to programs run
// with --expose-gc; without it, the flag is set for as long as it takes a
// new vm context to receive gc(), then cleared again, so that no other
// context of the program gets one. Done once, when first needed; null
// when the runtime refuses (then only V8's own collections release pins).
const v8 = require('node:v8');
const vm = require('node:vm');

let gcFn;

function fullGc() {
  if (gcFn === undefined) {
    gcFn = typeof globalThis.gc === 'function' ? globalThis.gc : null;
    if (gcFn === null) {
      try {
        v8.setFlagsFromString('--expose-gc');
        gcFn = vm.runInNewContext('gc');
      } catch {
        gcFn = null;
      } finally {
        v8.setFlagsFromString('--no-expose-gc');
      }
    }
  }
  if (gcFn === null) return false;
  gcFn();
  return true;
}

module.exports = { fullGc };
