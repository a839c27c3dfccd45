'use strict';
// Proxies of the persistent data types. Every operation is one addon call
// into libuniheap's data types, atomic on its own or joining an open block.
//   PMap        the Map interface; keys all strings, all bytes or all integers
//   PSortedMap  the same in key order, plus range(), first(), last()
//   PList       array-like, growable (index access through a JS Proxy)
//   PArray      array-like, fixed length, one element type
// String and bytes values belong to the slot that holds them: replacing or
// removing one frees it. A replaced object (a reference) never is.
const { inspect } = require('node:util');
const { scratch, CLASS } = require('./native');
const {
  kH, kO, kG, kState, kWrap, Identity, initProxy, isProxy, inspectShort,
} = require('./identity');
const {
  check, fromNative, toNative, conv, bytesAt,
} = require('./internal');
const { T, TYPE_NAMES } = require('./fields');
const { builtins, inlineRecord, packInline } = require('./objects');
const { closedError } = require('./errors');
const { BytesView, kMake: kMakeView } = require('./views');
const records = require('./records');

const KEY_KINDS = { string: 1, bytes: 2, int: 3 };
const KEY_NAMES = ['?', 'string', 'bytes', 'int'];
const kKind = Symbol('uniheap.keyKind');
const kTarget = Symbol('uniheap.target');
const CHUNK = 256;	// steps per block when a new collection is filled

function stateOf(heap, what) {
  if (!heap || !heap[kState]) {
    throw new TypeError(`${what}: the first argument must be a Heap (from uniheap.connect())`);
  }
  const st = heap[kState];
  if (st.closed) throw closedError();
  return st;
}

/** Run step(item) for every item, in blocks of CHUNK (joins an open
 * block). The collection is unreachable until published, so a failure half
 * way leaves nothing visible. */
function fill(st, items, step) {
  if (st.depth > 0) {
    for (const it of items) step(it);
    return;
  }
  const iter = items[Symbol.iterator]();
  let done = false;
  while (!done) {
    st.heap.atomic(() => {
      for (let n = 0; n < CHUNK; n++) {
        const r = iter.next();
        if (r.done) {
          done = true;
          return;
        }
        step(r.value);
      }
    });
  }
}

/** Base of the collection proxies (the $ accessors of identity are
 * Identity's). */
class PCollection extends Identity {
  get $className() {
    return this.constructor.name;
  }
}

function afterNew(obj, st, off, cls) {
  scratch[0] = 0;
  return initProxy(obj, st, off, scratch[1], cls);
}

// ---- maps ----

// Objects made by wrapping (Object.create) have no private brands: shared
// code of the proxies lives in functions, not private methods.

function keyKind(m) {
  check(m);
  let k = m[kKind];
  if (k === undefined) {
    k = m[kH].s.mapKeyKind(m[kO], m[kG], m.constructor.sorted);
    m[kKind] = k;
  }
  return k;
}

// Puts and removes on sorted maps by this JS thread (each worker has its
// own): a scan drops the entries it read ahead when this moved since
// (scanSorted).
let smapWrites = 0;

// A sorted map is read a batch of entries per native call (uh_smap_next_n:
// what as many single steps would return, from one leaf read at one
// instant): 4 first, then twice as many each call up to BATCH_MAX, so that
// a short scan reads little ahead. Keys and values become JS values during
// the call, as a single step's would right after it. Entries read ahead are
// dropped, and the scan goes on from the last key it gave, when this
// thread has put to or removed from a sorted map since they were read: a
// scan sees the thread's own writes as single steps would.
const BATCH_FIRST = 4;
const BATCH_MAX = 32;

// to: the exclusive end key (undefined: none); libuniheap stops the scan
// there (uh_smap_next_until), so keys are not compared here.
function* scanSorted(st, o, g, kind, from, reverse, to) {
  const s = st.s;
  let state = s.mapIter(o, g, true, kind, from, reverse);
  let batch = BATCH_FIRST;
  let last;
  let restart = false;
  for (;;) {
    const kv = s.iterNextN(o, g, state, batch, kind, to);
    if (kv === null) return;
    for (let i = 1; i < kv.length; i += 2) {   // a value of its own (native iterNextN)
      const v = kv[i];
      if (Array.isArray(v)) kv[i] = v.length === 3 ? st.wrap(v[0], v[1], v[2]) : bytesAt(v[0], v[1]);
    }
    const writes = smapWrites;
    batch = Math.min(2 * batch, BATCH_MAX);
    for (let i = 0; i < kv.length; i += 2) {
      if (restart) {
        restart = false;
        if (compareKeys(kind, kv[i], last) === 0) continue;
      }
      if (i > 0 && smapWrites !== writes) {
        // This process wrote since the batch was read: read on from last.
        state = s.mapIter(o, g, true, kind, last, reverse);
        restart = true;
        break;
      }
      if (st.closed) throw closedError();
      last = kv[i];
      yield [kv[i], kv[i + 1]];
    }
  }
}

// A hash map: one entry per native call.
function* scanHash(st, o, g, kind) {
  const s = st.s;
  const state = s.mapIter(o, g, false, kind);
  for (;;) {
    if (st.closed) throw closedError();
    const kv = s.iterNext(o, g, false, state);
    if (kv === null) return;
    kv[1] = fromNative(st, kv[1]);
    yield kv;
  }
}

function* scan(m, from, to, reverse, mode) {
  const kind = keyKind(m);
  const st = m[kH];
  const entries = m.constructor.sorted ? scanSorted(st, m[kO], m[kG], kind, from, reverse, to)
    : scanHash(st, m[kO], m[kG], kind);
  for (const kv of entries) {
    yield mode === 0 ? kv[0] : mode === 1 ? kv[1] : kv;
  }
}

class PMap extends PCollection {
  static sorted = false;

  /** new PMap(heap, entries?, { key: 'string' | 'bytes' | 'int' }) */
  constructor(heap, entries, options = {}) {
    super();
    const C = new.target;
    const st = stateOf(heap, `new ${C.name}`);
    const key = options.key === undefined ? 'string' : options.key;
    const kind = KEY_KINDS[key];
    if (!Object.hasOwn(KEY_KINDS, key)) {
      throw new TypeError(`${C.name} keys are 'string', 'bytes' or 'int', not ${inspect(key)}`);
    }
    afterNew(this, st, st.s.mapNew(kind, C.sorted), builtins.get(C));
    this[kKind] = kind;
    if (entries !== undefined && entries !== null) {
      fill(st, entries, (kv) => this.set(kv[0], kv[1]));
    }
  }

  /** 'string', 'bytes' or 'int', fixed at creation. */
  get keyType() {
    return KEY_NAMES[keyKind(this)];
  }

  get size() {
    check(this);
    return this[kH].s.mapLen(this[kO], this[kG], this.constructor.sorted);
  }

  get(key) {
    const kind = keyKind(this);
    const st = this[kH];
    return fromNative(st, st.s.mapGet(this[kO], this[kG], this.constructor.sorted, kind, key, true));
  }

  /** A zero-copy, read-only-by-contract Uint8Array (a BytesView) of the
   * bytes value under key, where it lies in the mapping; undefined when the
   * key is missing, TypeError when the value is not bytes. It shows the
   * value while the value lives (view.valid says whether it still does)
   * and is empty once the heap is closed (lib/views.js). */
  view(key) {
    const kind = keyKind(this);
    const st = this[kH];
    const r = st.s.mapView(this[kO], this[kG], this.constructor.sorted, kind, key);
    return r === undefined ? undefined : BytesView[kMakeView](st, r);
  }

  /** The fields of the record (a PObject) stored under key, as
   * get(key).$fields() gives them ({ name: value }, every field at one
   * instant), without making a proxy of the record: the lookup and the
   * copy of the whole record are one native call. undefined when key is
   * missing; TypeMismatchError when the value is not a record. */
  getFields(key) {
    const kind = keyKind(this);
    const st = this[kH];
    return records.getFields(st, this[kO], this[kG], this.constructor.sorted, kind, key,
      () => this.get(key)?.$fields());
  }

  /** Replace inline field `field` ('bytes:N' or 'string:N') of the record
   * stored under key, as get(key)[field] = value would, without making a
   * proxy of the record: the lookup and the write are one native call,
   * in the open block or atomic and durable on its own. Returns false
   * when key is missing (nothing written). TypeMismatchError when the
   * value is not a record or the field is not inline; InvalidValueError
   * (UH_EINVAL) when the record has no such field; ValueRangeError when
   * value exceeds the field's capacity. */
  setField(key, field, value) {
    const kind = keyKind(this);
    records.checkFieldValue(field, value);
    return this[kH].s.mapSetField(this[kO], this[kG], this.constructor.sorted, kind, key,
      field, value);
  }

  /** Store a new record of class C (a declared PObject class) with the
   * field values `values` under key, as set(key, new C(heap, values))
   * would, without a proxy: the allocation, the field writes and the put
   * are one native call, in the open block or atomic and durable on its
   * own. Every value must go to an inline field as it is (a Uint8Array
   * to 'bytes:N', a string to 'string:N'; fields not given are empty):
   * TypeError otherwise, and for a field C does not have. With freeOld,
   * the object key held is freed in the same step (only when nothing
   * else refers to it). Returns this. */
  putRecord(key, C, values, freeOld = false) {
    const kind = keyKind(this);
    const st = this[kH];
    // A class this heap knows already: its values go packed in the bytes
    // buffer, one copy each, rather than as arrays the addon reads element
    // by element. Else (or values that do not pack) the arrays' way.
    const cid = st.ids.get(C);
    const n = cid === undefined ? -1 : packInline(C, values);
    if (n >= 0) {
      if (this.constructor.sorted) smapWrites++;
      st.s.mapPutRecordPacked(this[kO], this[kG], this.constructor.sorted, kind, key, cid, n,
        freeOld);
      return this;
    }
    const r = inlineRecord(st, C, values, 'putRecord');
    if (r === null) {
      throw new TypeError('putRecord: every value must go to an inline field ' +
        "('bytes:N' a Uint8Array, 'string:N' a string); use set(key, new C(heap, values))");
    }
    if (this.constructor.sorted) smapWrites++;
    st.s.mapPutRecord(this[kO], this[kG], this.constructor.sorted, kind, key, r.cid, r.idx,
      r.values, freeOld);
    return this;
  }

  has(key) {
    const kind = keyKind(this);
    const st = this[kH];
    // Through the bytes buffer: a bytes value found is not made a Buffer.
    const r = st.s.mapGet(this[kO], this[kG], this.constructor.sorted, kind, key, true);
    scratch[0] = 0;
    return r !== undefined;
  }

  set(key, value) {
    const kind = keyKind(this);
    const st = this[kH];
    const v = toNative(st, value, 'PMap.set');
    if (this.constructor.sorted) smapWrites++;
    st.s.mapPut(this[kO], this[kG], this.constructor.sorted, kind, key, v, conv.hint, conv.gen);
    return this;
  }

  delete(key) {
    const kind = keyKind(this);
    if (this.constructor.sorted) smapWrites++;
    return this[kH].s.mapRemove(this[kO], this[kG], this.constructor.sorted, kind, key, false);
  }

  /** Remove key and return its value (undefined when absent), atomically. */
  take(key) {
    const kind = keyKind(this);
    const st = this[kH];
    if (this.constructor.sorted) smapWrites++;
    const r = st.s.mapRemove(this[kO], this[kG], this.constructor.sorted, kind, key, true);
    return r === undefined ? undefined : fromNative(st, r);
  }

  clear() {
    const keys = [...this.keys()];
    fill(this[kH], keys, (k) => this.delete(k));
  }

  /** Structural check of the map (libuniheap's); throws naming a problem. */
  check() {
    check(this);
    this[kH].s.mapCheck(this[kO], this[kG], this.constructor.sorted);
  }

  keys() {
    return scan(this, undefined, undefined, false, 0);
  }

  values() {
    return scan(this, undefined, undefined, false, 1);
  }

  entries() {
    return scan(this, undefined, undefined, false, 2);
  }

  [Symbol.iterator]() {
    return this.entries();
  }

  forEach(fn, thisArg) {
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }

  /** Sorted maps: entries with from <= key < to (reverse: from >= key > to);
   * undefined leaves that end open. */
  range(from, to, { reverse = false } = {}) {
    if (!this.constructor.sorted) throw new TypeError('range() needs a PSortedMap');
    return scan(this, from, to, reverse, 2);
  }

  get [Symbol.toStringTag]() {
    return this.constructor.name;
  }

  [inspect.custom](depth, options, insp) {
    let n;
    try {
      n = this.size;
    } catch (e) {
      return `${this.constructor.name} @${this[kO]} <${e.name}>`;
    }
    const head = `${this.constructor.name}(${n}) @${this[kO]}`;
    if (depth < 0) return `[${head}]`;
    const shown = new Map();
    for (const [k, v] of this.entries()) {
      if (shown.size >= (options.maxArrayLength ?? 100)) break;
      shown.set(k, inspectShort(v));
    }
    return `${head} ${insp(shown, { ...options, depth: 1 }).replace(/^Map\(\d+\) /, '')}`;
  }
}

// Code point order of two strings (UTF-8 byte order, as the heap sorts):
// UTF-16 units compare alike except surrogates, which stand for code
// points above every other unit.
function cmpStrings(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x += x < 0xe000 ? 0x2000 : -0x800;
    if (y >= 0xd800) y += y < 0xe000 ? 0x2000 : -0x800;
    return x - y;
  }
  return a.length - b.length;
}

function compareKeys(kind, a, b) {
  if (kind === KEY_KINDS.string) return cmpStrings(a, b);
  if (kind === KEY_KINDS.bytes) return Buffer.compare(a, b);
  return a < b ? -1 : a > b ? 1 : 0;
}

class PSortedMap extends PMap {
  static sorted = true;

  /** [key, fields] of the records under from <= key < to (undefined
   * leaves that end open), at most limit of them, each record's fields as
   * getFields gives them: a record copied per entry, up to 32 per native
   * call. Each record is read at its own instant; in a block, all at the
   * block's snapshot. */
  rangeFields(from, to, { limit = Infinity } = {}) {
    if (!(limit >= 0)) throw new RangeError(`rangeFields: limit must be >= 0, not ${inspect(limit)}`);
    const kind = keyKind(this);
    const st = this[kH];
    if (limit === 0) return [];
    const state = st.s.mapIter(this[kO], this[kG], true, kind, from, false);
    return records.rangeFields(st, this[kO], this[kG], kind, state, to, limit,
      (k) => this.get(k)?.$fields());
  }

  /** The [key, value] of the smallest key, or undefined when empty. */
  first() {
    for (const kv of this.range(undefined, undefined)) return kv;
    return undefined;
  }

  /** The [key, value] of the largest key, or undefined when empty. */
  last() {
    for (const kv of this.range(undefined, undefined, { reverse: true })) return kv;
    return undefined;
  }
}

// ---- lists and arrays ----

/** Index i (negative: from the end) of a sequence of length len, or -1. */
function seqIndex(i, len, what) {
  if (!Number.isInteger(i)) throw new TypeError(`${what}: index must be an integer, not ${inspect(i)}`);
  const j = i < 0 ? i + len : i;
  return j >= 0 && j < len ? j : -1;
}

const INDEX_RE = /^(?:0|[1-9][0-9]*)$/;

// Index access (list[i], list[i] = v, i in list) through a JS Proxy; every
// other property goes to the proxy object itself.
const indexHandler = {
  get(t, p, r) {
    if (typeof p === 'string' && INDEX_RE.test(p)) return t.at(Number(p));
    const v = Reflect.get(t, p, t);
    return typeof v === 'function' && p !== 'constructor' ? v.bind(t) : v;
  },
  set(t, p, v, r) {
    if (typeof p === 'string' && INDEX_RE.test(p)) {
      t.set(Number(p), v);
      return true;
    }
    return Reflect.set(t, p, v, t);
  },
  has(t, p) {
    if (typeof p === 'string' && INDEX_RE.test(p)) return Number(p) < t.length;
    return Reflect.has(t, p);
  },
};

function indexed(obj) {
  obj[kTarget] = obj;
  return new Proxy(obj, indexHandler);
}

class PSequence extends PCollection {
  static isArray = false;
  static [kWrap](st, off, gen, cls) {
    return indexed(initProxy(Object.create(this.prototype), st, off, gen, cls));
  }

  get length() {
    check(this);
    return this[kH].s.seqLen(this[kO], this[kG], this.constructor.isArray);
  }

  /** The value at index i (negative: from the end); undefined outside. */
  at(i) {
    const n = this.length;
    const j = seqIndex(i, n, 'at()');
    if (j < 0) return undefined;
    const st = this[kH];
    return fromNative(st, st.s.seqGet(this[kO], this[kG], this.constructor.isArray, j));
  }

  /** Replace the value at index i (negative: from the end). */
  set(i, value) {
    const n = this.length;
    const j = seqIndex(i, n, 'set()');
    if (j < 0) {
      throw new RangeError(`index ${i} is out of range for a ${this.constructor.name} of ` +
        `length ${n}${this.constructor.isArray ? '' : ' (use push() to grow it)'}`);
    }
    const st = this[kH];
    const v = toNative(st, value, `${this.constructor.name}.set`);
    const hint = conv.hint === -1 ? this.elemHint() : conv.hint;
    st.s.seqSet(this[kO], this[kG], this.constructor.isArray, j, v, hint, conv.gen);
    return this;
  }

  elemHint() {
    return -1;
  }

  * values() {
    const st = this[kH];
    for (let i = 0; ; i++) {
      check(this);
      const r = st.s.seqGet(this[kO], this[kG], this.constructor.isArray, i);
      if (r === undefined) return;
      yield fromNative(st, r);
    }
  }

  [Symbol.iterator]() {
    return this.values();
  }

  * keys() {
    const n = this.length;
    for (let i = 0; i < n; i++) yield i;
  }

  * entries() {
    let i = 0;
    for (const v of this.values()) yield [i++, v];
  }

  forEach(fn, thisArg) {
    let i = 0;
    for (const v of this.values()) fn.call(thisArg, v, i++, this);
  }

  toArray() {
    return [...this.values()];
  }

  indexOf(value) {
    let i = 0;
    for (const v of this.values()) {
      if (same(v, value)) return i;
      i++;
    }
    return -1;
  }

  includes(value) {
    return this.indexOf(value) >= 0;
  }

  get [Symbol.toStringTag]() {
    return this.constructor.name;
  }

  [inspect.custom](depth, options, insp) {
    let n;
    try {
      n = this.length;
    } catch (e) {
      return `${this.constructor.name} @${this[kO]} <${e.name}>`;
    }
    const head = `${this.constructor.name}(${n}) @${this[kO]}`;
    if (depth < 0) return `[${head}]`;
    const shown = [];
    for (const v of this.values()) {
      if (shown.length >= (options.maxArrayLength ?? 100)) break;
      shown.push(inspectShort(v));
    }
    return `${head} ${insp(shown, { ...options, depth: 1 })}`;
  }
}

function same(a, b) {
  if (isProxy(a)) return a.$equals(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  return Object.is(a, b) || (a === b);
}

function listInsert(l, i, value, what) {
  const st = l[kH];
  check(l);
  const v = toNative(st, value, what);
  st.s.listInsert(l[kO], l[kG], i, v, conv.hint, conv.gen);
}

class PList extends PSequence {
  /** new PList(heap, iterable?) */
  constructor(heap, iterable) {
    super();
    const st = stateOf(heap, 'new PList');
    afterNew(this, st, st.s.listNew(), builtins.get(PList));
    const self = indexed(this);
    if (iterable !== undefined && iterable !== null) fill(st, iterable, (v) => this.push(v));
    return self;
  }

  /** Append values; returns the new length. */
  push(...values) {
    for (const v of values) listInsert(this, -1, v, 'PList.push');
    return this.length;
  }

  /** Insert value before index i (negative: from the end; clamped). */
  insert(i, value) {
    const n = this.length;
    if (!Number.isInteger(i)) throw new TypeError(`insert(): index must be an integer, not ${inspect(i)}`);
    let j = i < 0 ? i + n : i;
    j = j < 0 ? 0 : j > n ? n : j;
    listInsert(this, j, value, 'PList.insert');
  }

  unshift(...values) {
    values.forEach((v, k) => this.insert(k, v));
    return this.length;
  }

  /** Remove and return the value at index i (negative: from the end);
   * undefined when out of range. */
  removeAt(i) {
    const n = this.length;
    if (!Number.isInteger(i)) throw new TypeError(`removeAt(): index must be an integer, not ${inspect(i)}`);
    const j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) return undefined;
    const st = this[kH];
    return fromNative(st, st.s.listPop(this[kO], this[kG], j));
  }

  pop() {
    return this.removeAt(-1);
  }

  shift() {
    return this.removeAt(0);
  }
}

const ELEM_TYPES = new Map(TYPE_NAMES.map((n, i) => [n, i]).filter(([, i]) => i > 0));

class PArray extends PSequence {
  static isArray = true;

  /** new PArray(heap, elemType, lengthOrValues): elemType one of i8, i16,
   * i32, i64, f32, f64, bool, string, bytes, ref. */
  constructor(heap, elemType, lengthOrValues) {
    super();
    const st = stateOf(heap, 'new PArray');
    const type = ELEM_TYPES.get(elemType);
    if (type === undefined) {
      throw new TypeError(`unknown element type ${inspect(elemType)}: one of ` +
        `${[...ELEM_TYPES.keys()].join(', ')}`);
    }
    let values = null;
    let len = lengthOrValues;
    if (typeof len !== 'number') {
      if (len === null || typeof len !== 'object' || !(Symbol.iterator in len)) {
        throw new TypeError('new PArray(heap, elemType, length or values)');
      }
      values = [...len];
      len = values.length;
    }
    if (!Number.isSafeInteger(len) || len < 0) {
      throw new RangeError(`array length must be an integer >= 0, not ${len}`);
    }
    afterNew(this, st, st.s.arrayNew(type, len), builtins.get(PArray));
    const self = indexed(this);
    if (values && values.length) fill(st, values.entries(), ([i, v]) => this.set(i, v));
    return self;
  }

  /** The element type name ('i64', 'string', ...). */
  get elemType() {
    check(this);
    return TYPE_NAMES[this[kH].s.arrayElemType(this[kO], this[kG])];
  }

  elemHint() {
    const t = this[kH].s.arrayElemType(this[kO], this[kG]);
    return t === T.ref ? -1 : t;
  }
}

builtins.set(PArray, CLASS.array);
builtins.set(PList, CLASS.list);
builtins.set(PMap, CLASS.map);
builtins.set(PSortedMap, CLASS.sortedMap);

module.exports = { PCollection, PMap, PSortedMap, PList, PArray, kTarget };
