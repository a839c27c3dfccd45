'use strict';
// What every proxy shares besides its identity (lib/identity.js): the
// liveness check of uniheap.h ("Direct access for bindings"), and the
// conversion of values to and from the addon's calling convention.
const { scratch, bytesBuf } = require('./native');
const { FreedObjectError, closedError } = require('./errors');
const {
  kH, kV, kB, kW, kO, kG, isProxy, checkSameHeap,
} = require('./identity');


const TWO32 = 4294967296;

/** True while the object whose header is at offset b of window v is live
 * with class word word (class | generation << 16): the class word at +8
 * matches and the valid bit (bit 31 of the word at +12) is set. False too
 * once the heap is closed (its typed arrays are detached: empty). */
function liveAt(v, b, word) {
  return v.u32[(b + 8) >>> 2] === word && v.i32[(b + 12) >>> 2] < 0;
}

/** True while obj's object is the one it was made for (liveAt). */
function live(obj) {
  return liveAt(obj[kV], obj[kB], obj[kW]);
}

function freedError(obj) {
  return new FreedObjectError(`the object at offset ${obj[kO]} has been freed`,
    'UH_EFREED', -7);
}

/** Throw HeapClosedError or FreedObjectError unless obj can be used. */
function check(obj) {
  if (obj[kH].closed) throw closedError();
  if (!live(obj)) throw freedError(obj);
}

/** The class id of the live object at (off, gen) read from its header, or
 * -1 when that is not a live object of that generation. */
function classAt(st, off, gen) {
  if (off + 16 > st.map.size && !st.map.reach(off, gen)) return -1;
  const w = st.map.window(off);
  const b = off - w.start;
  const word = w.u32[(b + 8) >>> 2];
  if (word >>> 16 !== gen || w.i32[(b + 12) >>> 2] >= 0) return -1;
  return word & 0xffff;
}

/** What the addon returned: a reference (offset, with generation and class
 * in the scratch words) becomes a proxy, a bytes value left in the bytes
 * buffer (its length returned) a Buffer; anything else is the value. */
function fromNative(st, r) {
  if (typeof r === 'number' && scratch[0] !== 0) {
    if (scratch[0] === 2) return takeBytes(r);
    scratch[0] = 0;
    return st.wrap(r, scratch[1], scratch[2]);
  }
  return r;
}

/** The n bytes a call left in the bytes buffer, as a Buffer of their own;
 * anything else the call returned (a string, a Buffer, null) as it is. */
function takeBytes(n) {
  if (typeof n !== 'number' || scratch[0] !== 2) return n;
  scratch[0] = 0;
  const b = Buffer.allocUnsafe(n);
  bytesBuf.copy(b, 0, 0, n);
  return b;
}

/** Bytes [at, at + n) of the bytes buffer, which a batch call left there,
 * as a Buffer of their own. */
function bytesAt(at, n) {
  const b = Buffer.allocUnsafe(n);
  bytesBuf.copy(b, 0, at, at + n);
  return b;
}

// A value for the addon: (value, hint, generation). Proxies go as their
// offset with hint -2 and their generation; everything else as it is (the
// addon checks and converts it, hint -1). toNative() returns the value and
// leaves hint and generation in conv, to be passed right after it.
const conv = { hint: -1, gen: 0 };

/** A number to store as an f64 even when it is integral (JS has one
 * number type; Python, Java and C tell 3 from 3.0): uniheap.f64(3). */
class F64 {
  constructor(value) {
    if (typeof value !== 'number') throw new TypeError(`f64(value): value must be a number, not ${typeof value}`);
    this.value = value;
    Object.freeze(this);
  }
}

function toNative(st, v, what) {
  if (v instanceof F64) {
    conv.hint = 7;
    conv.gen = 0;
    return v.value;
  }
  if (isProxy(v)) {
    checkSameHeap(v, st, what);
    check(v);
    conv.hint = -2;
    conv.gen = v[kG];
    return v[kO];
  }
  conv.hint = -1;
  conv.gen = 0;
  return v;
}

module.exports = {
  TWO32,
  liveAt, live, check, freedError, classAt, fromNative, takeBytes, bytesAt, toNative, conv,
  F64,
};
