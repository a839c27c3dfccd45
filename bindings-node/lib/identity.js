'use strict';
// A proxy's identity: which object of which heap connection it names, and
// the one place that reads it. Every proxy (PObject and the collections)
// holds, under symbol keys (never enumerable, never a field name):
//   kH  the session state of its Heap (lib/heap.js, class State)
//   kV  the mapping window its object is read through (lib/views.js)
//   kB  the object's offset inside that window
//   kW  the class word its header must hold: classId | generation << 16
//   kO  the object's offset in the heap file (bits 0..47 of its reference)
//   kG  its generation (bits 48..63)
// A reference is never one JS number: offset and generation travel apart,
// and meet only in a bigint (refOf) for the user. Identity is the base
// class of both proxy families, so the $ accessors exist once. A Heap
// hands its State out under kState; a proxy class makes its proxies with
// its static kWrap (State.wrap picks the class by class id).
// Every proxy pins its object for the online GC (uh_pin) when made, with a
// weak reference to the proxy beside the pin (src/pins.h): once V8 has
// collected the proxy, young collections included, the next sweep of the
// session's pins unpins it, without waiting for the event loop, so a
// synchronous loop that makes and drops proxies releases their objects as
// it runs. The pins are swept each time their count has doubled, after each
// full V8 collection (lib/heap.js), and past State.collectAt pinned proxies
// (V8 collected too few) after a full V8 collection forced then
// (State.collect), as when a block finds the heap full. After close() the
// session holds no pins (lib/heap.js, src/session.cc).
const { inspect } = require('node:util');

const kH = Symbol('uniheap.state');
const kV = Symbol('uniheap.window');
const kB = Symbol('uniheap.base');
const kW = Symbol('uniheap.word');
const kO = Symbol('uniheap.offset');
const kG = Symbol('uniheap.generation');
const kState = Symbol('uniheap.heapState');	// Heap -> State
const kWrap = Symbol('uniheap.wrap');		// static: (state, off, gen, cls) -> proxy

/** Give obj the identity of the object at (off, gen) of class cls in the
 * heap of st. */
function initProxy(obj, st, off, gen, cls) {
  const w = st.map.window(off);
  obj[kH] = st;
  obj[kV] = w;
  obj[kB] = off - w.start;
  obj[kW] = (cls | gen << 16) >>> 0;
  obj[kO] = off;
  obj[kG] = gen;
  if (!st.closed && st.s.pin(obj, off, gen) > st.collectAt) st.collect();
  return obj;
}

function isProxy(v) {
  return v !== null && typeof v === 'object' && v[kH] !== undefined;
}

/** The persistent reference (offset, generation) as a bigint. */
function refOf(off, gen) {
  return BigInt(gen) << 48n | BigInt(off);
}

/** A reference bigint as [offset, generation]. */
function refParts(ref) {
  return [Number(ref & 0xffffffffffffn), Number(ref >> 48n)];
}

/** Throw TypeError unless obj is a proxy of the connection st (what, if
 * given, names the operation in the message). */
function checkSameHeap(obj, st, what) {
  if (obj[kH] === st) return;
  const msg = 'the object belongs to another heap connection';
  throw new TypeError(what ? `${what}: ${msg}` : msg);
}

/** A proxy as a nested value of inspect(): <class @offset>. */
function inspectShort(v) {
  return isProxy(v) ? { [inspect.custom]: () => `<${v.$className} @${v.$offset}>` } : v;
}

/** The identity accessors every proxy has ($className is each family's). */
class Identity {
  static [kWrap](st, off, gen, cls) {
    return initProxy(Object.create(this.prototype), st, off, gen, cls);
  }

  /** The Heap this proxy belongs to. */
  get $heap() {
    return this[kH].heap;
  }

  /** The object's offset in the heap file (bits 0..47 of its reference). */
  get $offset() {
    return this[kO];
  }

  /** The object's generation (bits 48..63 of its reference). */
  get $generation() {
    return this[kG];
  }

  /** The persistent reference, exact: heap.proxy(ref) turns it back. */
  get $ref() {
    return refOf(this[kO], this[kG]);
  }

  get $classId() {
    return this[kW] & 0xffff;
  }

  /** True when other names the same object of the same connection. */
  $equals(other) {
    return isProxy(other) && other[kH] === this[kH] && other[kO] === this[kO] &&
      other[kG] === this[kG];
  }
}

module.exports = {
  kH, kV, kB, kW, kO, kG, kState, kWrap,
  Identity, initProxy, isProxy, refOf, refParts, checkSameHeap, inspectShort,
};
