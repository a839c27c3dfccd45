'use strict';
// Heap: a session with heapd and the heap mapped into this process; its
// roots and its blocks, and waits for changes (lib/wait.js).
//
// Blocks follow libuniheap (and the Python binding): they nest by joining
// the outermost one; a lost conflict rolls the block back at once and every
// later operation in it fails the same way until it ends; an exception that
// leaves an inner atomic() level dooms the whole block. atomic(fn) re-runs
// fn after a lost conflict, waiting libuniheap's randomized backoff
// (uh_retry_wait) between tries. A block never spans an await: an async fn,
// or one that returns a promise, is refused and its block rolled back.
const { inspect, types } = require('node:util');
const native = require('./native');
const {
  kO, kG, kState, kWrap, isProxy, checkSameHeap, refParts,
} = require('./identity');
const {
  check, fromNative,
} = require('./internal');
const { Mapping } = require('./views');
const { proxyType, defineClass } = require('./objects');
const {
  UniheapError, ConflictError, FreedObjectError, HeapFullError, closedError,
} = require('./errors');
const { TYPE_NAMES, isInline, valueAt } = require('./fields');
const wait = require('./wait');
const { fullGc } = require('./collect');

const DEFAULT_TRIES = 100;
// Proxies pinned before a full V8 collection is forced: V8's young
// collections release most dead proxies well before (src/pins.h).
const COLLECT_MIN = 65536;

// After each full V8 collection, every open State unpins the proxies V8
// found dead (src/pins.h), so that a program that stops making proxies
// does not keep the last ones' objects pinned until it makes more: a
// sentinel object registered here dies in the next full collection, and
// its callback (from the event loop) sweeps and registers a new one. The
// held value is a WeakRef: a Heap dropped without close() is still
// collected (and its session ended).
const fullGcs = new FinalizationRegistry((ref) => {
  const st = ref.deref();
  if (st === undefined || st.closed) return;
  st.s.sweepPins();
  watchFullGc(ref);
});

function watchFullGc(ref) {
  fullGcs.register({}, ref);
}

/** What every proxy of one Heap shares (proxies hold it, not the Heap). */
class State {
  constructor(heap, session) {
    this.heap = heap;
    this.s = session;
    this.depth = 0;		// nesting of the open block, 0 outside blocks
    this.doomed = false;	// an exception left an inner atomic() level
    this.closed = false;
    this.maxTries = DEFAULT_TRIES;
    const info = session.info();
    this.map = new Mapping(Math.max(info.maxSize, info.heapSize), info.heapSize, session);
    this.types = new Map();	// class id -> proxy class
    this.ids = new Map();	// declared class -> class id
    this.registering = new Set();
    // above this many pinned proxies, a full V8 collection (collect())
    this.collectAt = COLLECT_MIN;
    watchFullGc(new WeakRef(this));
  }

  /** Run a full V8 collection and unpin the proxies it found dead: when
   * more proxies are pinned than collectAt (lib/identity.js), or a block
   * found the heap full (atomic()). The next threshold is twice the
   * proxies left, so a program holding many pays for it only as they grow. */
  collect() {
    fullGc();
    const left = this.closed ? 0 : this.s.sweepPins();
    this.collectAt = Math.max(COLLECT_MIN, 2 * left);
  }

  /** The proxy of the object (off, gen) of class cls. */
  wrap(off, gen, cls) {
    let C = this.types.get(cls);
    if (C === undefined) {
      C = proxyType(this, cls);
      this.types.set(cls, C);
    }
    return C[kWrap](this, off, gen, cls);
  }
}

function isThenable(r) {
  return r !== null && (typeof r === 'object' || typeof r === 'function') &&
    typeof r.then === 'function';
}

function asyncRefused() {
  return new TypeError('atomic(fn): fn is an async function; a block cannot span an await ' +
    '(its locks would be held while other code runs): pass a synchronous function and do ' +
    'the awaiting outside the block');
}

function promiseRefused() {
  return new TypeError('atomic(fn): fn returned a promise (a thenable); a block cannot span ' +
    'an await, so the block was rolled back: pass a synchronous function');
}

class Roots {
  #st;

  constructor(st) {
    this.#st = st;
  }

  #open() {
    if (this.#st.closed) throw closedError();
    return this.#st;
  }

  static #name(name) {
    if (typeof name !== 'string') {
      throw new TypeError(`root names are strings, not ${typeof name}`);
    }
    return name;
  }

  /** The object under name, or undefined. */
  get(name) {
    const st = this.#open();
    return fromNative(st, st.s.rootGet(Roots.#name(name)));
  }

  has(name) {
    return this.get(name) !== undefined;
  }

  /** Publish obj under name (inside a block: with the block). */
  set(name, obj) {
    const st = this.#open();
    Roots.#name(name);
    if (!isProxy(obj)) {
      throw new TypeError('a root names a persistent object (PObject, PMap, PSortedMap, PList, ' +
        `PArray), not ${obj === null ? 'null' : typeof obj}; use roots.delete(name) to remove one`);
    }
    checkSameHeap(obj, st);
    check(obj);
    st.s.rootSet(name, obj[kO], obj[kG]);
    return this;
  }

  /** Remove a root; false when there was none. */
  delete(name) {
    return this.#open().s.rootDel(Roots.#name(name));
  }

  get size() {
    return this.#open().s.rootCount();
  }

  * keys() {
    yield* this.#open().s.rootNames();
  }

  * values() {
    for (const k of this.keys()) {
      const v = this.get(k);
      if (v !== undefined) yield v;
    }
  }

  * entries() {
    for (const k of this.keys()) {
      const v = this.get(k);
      if (v !== undefined) yield [k, v];
    }
  }

  [Symbol.iterator]() {
    return this.entries();
  }

  forEach(fn, thisArg) {
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }

  [inspect.custom]() {
    return this.#st.closed ? 'Roots <closed>' : `Roots(${this.size})`;
  }
}

class Heap {
  #st;
  #roots;

  /** Use connect(). */
  constructor(socket, readonly, timeout = null) {
    const s = new native.Session(socket, readonly, timeout);
    this.#st = new State(this, s);
    this.#roots = new Roots(this.#st);
  }

  get [kState]() {
    return this.#st;
  }

  /** The heap's named durable roots, Map-like: name -> object. */
  get roots() {
    return this.#roots;
  }

  get closed() {
    return this.#st.closed;
  }

  get readonly() {
    return this.#open().s.info().readonly;
  }

  /** Tries of atomic(fn) before it gives up with ConflictError (100). */
  get maxTries() {
    return this.#st.maxTries;
  }

  set maxTries(n) {
    if (!Number.isInteger(n) || n < 1 || n > 1e6) {
      throw new RangeError(`maxTries must be an integer 1..1000000, not ${n}`);
    }
    this.#st.maxTries = n;
  }

  #open() {
    if (this.#st.closed) throw closedError();
    return this.#st;
  }

  /** Detach from heapd and unmap (when no other session of this process
   * uses the mapping). Pending waits are cancelled first (they reject
   * with HeapClosedError); an open block is rolled back; proxies then
   * throw HeapClosedError. Idempotent. */
  close() {
    const st = this.#st;
    if (st.closed) return;
    st.closed = true;
    st.depth = 0;
    st.s.close();
  }

  [Symbol.dispose]() {
    this.close();
  }

  /** Heap facts: heapSize (bytes mapped), formatVersion, durability,
   * session, readonly, name, path; curSize, maxSize and usedSize (the
   * heap's size now, the most it may grow to, bytes in arenas). */
  info() {
    return this.#open().s.info();
  }

  /** This session's libuniheap counters. */
  stats() {
    return this.#open().s.stats();
  }

  /** Check every object reachable from the roots; returns how many. */
  check() {
    return this.#open().s.heapCheck();
  }

  /** The heap's class table. */
  classes() {
    const s = this.#open().s;
    return s.classIds().map((id) => {
      const [, name, kind, payloadSize, fields] = s.classInfo(id);
      return {
        id, name, kind, payloadSize,
        // an inline field's capacity comes in the ref-class word
        fields: fields.map(([n, t, offset, word]) => ({
          name: n, type: TYPE_NAMES[t] || String(t), offset,
          refClass: isInline(t) ? 0 : word, capacity: isInline(t) ? word : 0,
        })),
      };
    });
  }

  /** defineClass(name, { field: type, ... }) -> a PObject subclass bound to
   * this heap (new C({...}) makes objects); defineClass(C) registers a
   * class declared with static className and fields. Registration happens
   * now: ClassMismatchError if the heap has the name with another layout. */
  defineClass(nameOrClass, fields) {
    return defineClass(this, this.#open(), nameOrClass, fields);
  }

  /** The object (or string/bytes value) a persistent reference names. */
  proxy(ref) {
    const st = this.#open();
    if (typeof ref !== 'bigint') throw new TypeError('proxy(ref): ref is a bigint (obj.$ref)');
    if (ref <= 0n || ref >= 1n << 64n) {
      throw new FreedObjectError(`${ref} is not a reference`, 'UH_EFREED', -7);
    }
    const [off, gen] = refParts(ref);
    return valueAt(st, off, gen, st.s.objClass(off, gen));
  }

  /** Free a persistent object (at commit when inside a block). */
  free(obj) {
    const st = this.#open();
    if (!isProxy(obj)) throw new TypeError('free() takes a persistent object');
    checkSameHeap(obj, st);
    check(obj);
    st.s.free(obj[kO], obj[kG]);
  }

  // ---- waiting for changes (lib/wait.js) ----

  /** Stands for the roots in token(), changed(), watch(), waitSync()
   * (the same as uniheap.ROOTS). */
  get ROOTS() {
    return wait.ROOTS;
  }

  /** The change token of obj (an object, a collection, or ROOTS): a
   * bigint that every commit changing it moves. */
  token(obj) {
    return wait.token(this.#st, obj);
  }

  /** Resolves obj's new token once it differs from since (default: the
   * token now), or null once timeout ms pass; signal: an AbortSignal
   * (rejects with AbortError). Never blocks the event loop. */
  changed(obj, options) {
    return wait.changed(this.#st, obj, options);
  }

  /** for await (const tok of heap.watch(obj, { signal })): a new token
   * after each change of obj, from now on. */
  watch(obj, options) {
    return wait.watch(this.#st, obj, options);
  }

  /** Block until obj's token differs from since (default: the token
   * now): the new token, or null once timeout ms pass. */
  waitSync(obj, options) {
    return wait.waitSync(this.#st, obj, options);
  }

  // ---- blocks ----

  /** True inside a block. */
  get inBlock() {
    return this.#st.depth > 0;
  }

  /** Begin a block, or one more nesting level of the open one. */
  begin() {
    const st = this.#open();
    st.s.begin();
    if (st.depth++ === 0) st.doomed = false;
  }

  /** End one nesting level; the outermost commits (ConflictError: the
   * block was rolled back). */
  commit() {
    const st = this.#open();
    if (st.depth === 0) throw new UniheapError('commit(): no block is open', 'UH_ESTATE', -16);
    if (st.depth > 1) {
      st.depth--;
      try {
        st.s.commit();	// leaves one level; a doomed block stays doomed
      } catch (e) {
        if (!(e instanceof UniheapError)) throw e;
      }
      return;
    }
    st.depth = 0;
    if (st.doomed) {
      st.doomed = false;
      st.s.abort();
      throw new UniheapError('atomic(): the block was rolled back because an exception left ' +
        'a nested atomic() block', 'UH_ESTATE', -16);
    }
    st.s.commit();
  }

  /** Roll the whole block back (every nesting level). */
  abort() {
    const st = this.#open();
    if (st.depth === 0) throw new UniheapError('abort(): no block is open', 'UH_ESTATE', -16);
    st.depth = 0;
    st.doomed = false;
    st.s.abort();
  }

  #rollback() {
    const st = this.#st;
    st.depth = 0;
    st.doomed = false;
    if (!st.closed) st.s.abort();
  }

  /** Run fn(heap) in a block and commit it; re-run it after a lost
   * conflict (up to maxTries). Returns fn's result. Inside a block it joins
   * it (the outermost atomic() retries). fn must be synchronous and safe to
   * re-run: only its heap effects are rolled back. */
  atomic(fn) {
    const st = this.#open();
    if (typeof fn !== 'function') throw new TypeError('atomic(fn): fn must be a function');
    if (types.isAsyncFunction(fn)) throw asyncRefused();
    if (st.depth > 0) return this.#nested(fn);
    let collected = false;
    for (let tries = 0; ; tries++) {
      if (tries > 0) st.s.retryWait(tries);
      this.begin();
      let r;
      try {
        r = fn(this);
      } catch (e) {
        this.#rollback();
        if (e instanceof ConflictError && tries + 1 < st.maxTries) continue;
        // The heap may be full of objects only dead proxies hold: release
        // their pins (a full V8 collection) and run the block once more;
        // its lease then runs heapd's cycles again.
        if (e instanceof HeapFullError && !collected && !st.closed) {
          collected = true;
          st.collect();
          continue;
        }
        throw e;
      }
      if (isThenable(r)) {
        this.#rollback();
        throw promiseRefused();
      }
      try {
        this.commit();
      } catch (e) {
        if (e instanceof ConflictError && tries + 1 < st.maxTries) continue;
        throw e;
      }
      return r;
    }
  }

  #nested(fn) {
    const st = this.#st;
    this.begin();
    let r;
    try {
      r = fn(this);
    } catch (e) {
      st.doomed = true;
      if (!st.closed) this.commit();
      throw e;
    }
    if (isThenable(r)) {
      st.doomed = true;
      this.commit();
      throw promiseRefused();
    }
    this.commit();
    return r;
  }

  [inspect.custom]() {
    if (this.#st.closed) return 'Heap <closed>';
    const i = this.info();
    return `Heap '${i.name}' ${i.durability} ${i.heapSize} bytes`;
  }
}

/** Attach to heapd and map its heap. options: { socket, readonly,
 * timeout } (or the socket path alone); the socket defaults to
 * $UNIHEAP_SOCKET, else libuniheap's default (defaultSocket()). timeout:
 * milliseconds to wait for a heapd that is not running yet (no socket, or
 * refused), trying again until it answers; 0 fails at once; default
 * $UNIHEAP_CONNECT_TIMEOUT_MS, else 5000. connect() is synchronous: the
 * thread waits. In a worker thread the session shares the process's
 * mapping of the heap. */
function connect(options = {}) {
  const o = typeof options === 'string' ? { socket: options } : options;
  if (o === null || typeof o !== 'object') {
    throw new TypeError('connect(options): options is { socket, readonly, timeout } or a socket path');
  }
  const { socket = null, readonly = false, timeout = null } = o;
  if (socket !== null && typeof socket !== 'string') {
    throw new TypeError('connect(): socket must be a path (string)');
  }
  if (timeout !== null && !(Number.isFinite(timeout) && timeout >= 0)) {
    throw new RangeError('connect(): timeout must be 0 or more milliseconds (or null)');
  }
  const ms = timeout === null ? null : Math.min(Math.ceil(timeout), 2 ** 31 - 1);
  return new Heap(socket, Boolean(readonly), ms);
}

module.exports = { Heap, Roots, connect };
