'use strict';
// Typed-array windows over the mapping (one external ArrayBuffer).
//
// Field reads outside blocks load from typed arrays, never from a DataView:
// an element load of an Int32Array or Float64Array is one aligned machine
// load in every tier of V8, while DataView's builtins assemble multi-byte
// values from single bytes, which a concurrent writer could tear. A typed
// array holds at most 2^32 elements, so a heap larger than that is seen
// through windows: window k covers [k * 2^31, k * 2^31 + 2^32) (clipped to
// the heap), and an object at offset o is read through window
// floor(o / 2^31), where its offset in the window, o - k * 2^31, is below
// 2^31 and every field of it (objects are far smaller than 2^31 bytes)
// lies inside the window. Offsets inside a window fit `>>> 2` arithmetic.

let STEP = 2 ** 31;
let SPAN = 2 ** 32;

class Window {
  constructor(buffer, start, size) {
    const len = Math.min(SPAN, size - start);
    this.start = start;
    this.u8 = new Uint8Array(buffer, start, len);
    this.i8 = new Int8Array(buffer, start, len);
    this.i16 = new Int16Array(buffer, start, Math.floor(len / 2));
    this.u32 = new Uint32Array(buffer, start, Math.floor(len / 4));
    this.i32 = new Int32Array(buffer, start, Math.floor(len / 4));
    this.f32 = new Float32Array(buffer, start, Math.floor(len / 4));
    this.f64 = new Float64Array(buffer, start, Math.floor(len / 8));
  }
}

class Mapping {
  constructor(buffer, size) {
    this.buffer = buffer;
    this.size = size;
    this.windows = [];
  }

  /** The window to read the object at offset off through (made once). */
  window(off) {
    const k = Math.floor(off / STEP);
    return this.windows[k] || (this.windows[k] = new Window(this.buffer, k * STEP, this.size));
  }
}

/** Tests only: smaller windows, so that tests exercise several of them on
 * a small heap. Call before connect(). */
function setWindowStepForTests(step) {
  STEP = step;
  SPAN = 2 * step;
}

module.exports = { Mapping, setWindowStepForTests };
