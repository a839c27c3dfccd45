'use strict';
// Typed-array windows over the mapping (an external ArrayBuffer each), and
// views of bytes values in it.
//
// Field reads outside blocks load from typed arrays, never from a DataView:
// an element load of an Int32Array or Float64Array is one aligned machine
// load in every tier of V8, while DataView's builtins assemble multi-byte
// values from single bytes, which a concurrent writer could tear. A typed
// array holds at most 2^32 elements, and Node makes no external
// ArrayBuffer above 4 GiB, so the mapping is seen through windows, each an
// ArrayBuffer of its own (src/session.cc, buffer()): window k covers
// [k * 2^31, k * 2^31 + 2^32) (clipped to the reservation), and an object at offset o is read through window
// floor(o / 2^31), where its offset in the window, o - k * 2^31, is below
// 2^31 and every field of it (objects are far smaller than 2^31 bytes)
// lies inside the window. Offsets inside a window fit `>>> 2` arithmetic.

let STEP = 2 ** 31;
let SPAN = 2 ** 32;

class Window {
  constructor(session, reserved, start) {
    const len = Math.min(SPAN, reserved - start);
    const buffer = session.buffer(start, len);
    this.start = start;
    this.buffer = buffer;
    this.u8 = new Uint8Array(buffer, 0, len);
    this.i8 = new Int8Array(buffer, 0, len);
    this.i16 = new Int16Array(buffer, 0, Math.floor(len / 2));
    this.u32 = new Uint32Array(buffer, 0, Math.floor(len / 4));
    this.i32 = new Int32Array(buffer, 0, Math.floor(len / 4));
    this.f32 = new Float32Array(buffer, 0, Math.floor(len / 4));
    this.f64 = new Float64Array(buffer, 0, Math.floor(len / 8));
  }
}

// A heap that grows (FORMAT.md 1.1): the windows span the most it may
// grow to (`reserved`; its base never moves, src/session.cc), but only
// the first `size` bytes are mapped. A reference past them is checked by
// libuniheap (reach()), which maps the part the heap grew by first;
// windows cover the reservation, so proxies and views made before stay as
// they are.
class Mapping {
  constructor(reserved, size, session) {
    this.reserved = reserved;
    this.size = size;
    this.s = session;
    this.windows = [];
  }

  /** The window to read the object at offset off through (made once). */
  window(off) {
    const k = Math.floor(off / STEP);
    return this.windows[k] || (this.windows[k] = new Window(this.s, this.reserved, k * STEP));
  }

  /** True once the object header at (off, gen) lies in what is mapped,
   * after libuniheap mapped what the heap has grown by, if it had. */
  reach(off, gen) {
    if (off + 16 <= this.size) return true;
    const n = this.s.mapped(off, gen);
    if (n > this.size) this.size = n;
    return off + 16 <= this.size;
  }
}

const { liveAt } = require('./internal');
const { refOf } = require('./identity');

const kMake = Symbol('uniheap.makeView');

/** A zero-copy view of a bytes value (PMap.view): a Uint8Array over the
 * value's bytes where they lie in the mapping, on the ArrayBuffer of the
 * window that holds its header. It reads the mapping in place, so: it is empty (its buffer
 * detached) once its heap is closed, never a read of unmapped memory, and
 * the buffer keeps the session, so a heap not closed stays mapped while a
 * view is reachable (src/session.cc, buffer()). Its bytes are the value's
 * while the value lives: a set that replaces the value, or a delete, frees
 * it (in any process), and the slot may then hold another object, whose
 * bytes the view shows. `valid` is true while the object holding the
 * bytes (a bytes object, or the entry in which a hash map keeps a value
 * of up to 128 bytes) is still there (its header's class and generation:
 * uniheap.h, "direct"); copy,
 * then check valid, for a consistent copy. Writes through a view bypass
 * blocks and locks (on a read-only connection they fault): never write to
 * one. */
class BytesView extends Uint8Array {
  #st;
  #w;		// the window the header is read through
  #b;		// the header's offset in that window
  #word;	// the class word it must hold: the holder's class | generation << 16
  #ref;

  // subarray(), slice(), map() ... make plain Uint8Arrays.
  static get [Symbol.species]() {
    return Uint8Array;
  }

  /** The view of r = [payload offset, length, object offset, generation,
   * class] (the addon's mapView()): the object is the one holding the
   * bytes, a bytes object or the hash-map entry that keeps a short value. */
  static [kMake](st, r) {
    // The header's window holds the payload too: it starts less than 2^31
    // before the header and spans 2^32 bytes, so a value of up to 2^31
    // bytes past its header fits (a Uint8Array could not hold more).
    const off = r[2];
    const w = st.map.window(off);
    const v = new BytesView(w.buffer, r[0] - w.start, r[1]);
    v.#st = st;
    v.#w = w;
    v.#b = off - w.start;
    v.#word = (r[4] | r[3] << 16) >>> 0;
    v.#ref = refOf(off, r[3]);
    return v;
  }

  /** True while the object holding the bytes the view shows is still
   * there (not freed); false once the heap is closed. */
  get valid() {
    const st = this.#st;
    if (st === undefined || st.closed) return false;
    return liveAt(this.#w, this.#b, this.#word);
  }

  /** The reference of the object holding the bytes (offset | generation
   * << 48): the bytes object, or the hash-map entry of a short value. */
  get $ref() {
    return this.#ref;
  }
}

/** Tests only: smaller windows, so that tests exercise several of them on
 * a small heap. Call before connect(). */
function setWindowStepForTests(step) {
  STEP = step;
  SPAN = 2 * step;
}

module.exports = { Mapping, BytesView, kMake, setWindowStepForTests };
