'use strict';
// The key counters the client threads share.
//
// In the Java client all threads share one CoreWorkload, hence one load key
// sequence (CounterGenerator) and one insert key sequence for the run
// (AcknowledgedCounterGenerator: a key becomes readable only once every
// smaller key was inserted). The Node port runs its threads as
// worker_threads; the shared counters keep their state in
// SharedArrayBuffers that the main thread creates and hands to each worker.
// Key numbers are Java ints in YCSB (intValue()), so Int32 cells suffice.

// As YCSB: at most 2^20 insert keys handed out but not yet acknowledged.
const WINDOW_SIZE = 1 << 20;
const WINDOW_MASK = WINDOW_SIZE - 1;

class Counter {
  constructor(start) { this.next = start; }
  nextValue() { return this.next++; }
  lastValue() { return this.next - 1; }
}

/** lastValue() is the highest value below which every value was
 *  acknowledged. */
class AcknowledgedCounter extends Counter {
  constructor(start) {
    super(start);
    this.limit = start - 1;
    this.acked = new Set();
  }

  lastValue() { return this.limit; }

  acknowledge(value) {
    if (this.acked.size >= WINDOW_SIZE) throw new Error('too many unacknowledged insertion keys');
    this.acked.add(value);
    while (this.acked.has(this.limit + 1)) {
      this.limit++;
      this.acked.delete(this.limit);
    }
  }
}

/** Counter over a SharedArrayBuffer: new SharedCounter(start) in the main
 *  thread, SharedCounter.attach(c.shared()) in a worker. */
class SharedCounter {
  constructor(start, buffer) {
    this.cell = new Int32Array(buffer || new SharedArrayBuffer(4));
    if (!buffer) this.cell[0] = start;
  }

  static attach(state) { return new SharedCounter(0, state.buffer); }
  shared() { return { buffer: this.cell.buffer }; }
  nextValue() { return Atomics.add(this.cell, 0, 1); }
  lastValue() { return Atomics.load(this.cell, 0) - 1; }
}

/** AcknowledgedCounter over shared memory. As YCSB's, acknowledge() marks
 *  its slot in a window and advances the limit only if it gets the lock at
 *  once; a slot a concurrent advance missed is picked up by the next one. */
class SharedAcknowledgedCounter extends SharedCounter {
  constructor(start, state) {
    super(start, state && state.buffer);
    // [0] limit, [1] lock (0 free, 1 held)
    this.meta = new Int32Array(state ? state.meta : new SharedArrayBuffer(8));
    this.window = new Uint8Array(state ? state.window : new SharedArrayBuffer(WINDOW_SIZE));
    if (!state) this.meta[0] = start - 1;
  }

  static attach(state) { return new SharedAcknowledgedCounter(0, state); }

  shared() {
    return { buffer: this.cell.buffer, meta: this.meta.buffer, window: this.window.buffer };
  }

  lastValue() { return Atomics.load(this.meta, 0); }

  acknowledge(value) {
    const slot = value & WINDOW_MASK;
    if (Atomics.load(this.window, slot)) throw new Error('too many unacknowledged insertion keys');
    Atomics.store(this.window, slot, 1);
    if (Atomics.compareExchange(this.meta, 1, 0, 1) !== 0) return;
    try {
      let index = Atomics.load(this.meta, 0) + 1;
      for (let n = 0; n < WINDOW_SIZE; n++) {     // round the window at most once
        const s = index & WINDOW_MASK;
        if (!Atomics.load(this.window, s)) break;
        Atomics.store(this.window, s, 0);
        index++;
      }
      Atomics.store(this.meta, 0, index - 1);
    } finally {
      Atomics.store(this.meta, 1, 0);
    }
  }
}

module.exports = { WINDOW_SIZE, Counter, AcknowledgedCounter, SharedCounter, SharedAcknowledgedCounter };
