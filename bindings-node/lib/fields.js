'use strict';
// Field types and the accessors of persistent classes.
//
// Reads outside a block are generated JS: the header check of uniheap.h
// ("Direct access for bindings") and one aligned typed-array load, no
// native call. An i64 or reference field (8 bytes) is read as two u32
// loads between two loads of the object's lock word (one f64 load each):
// every store into an object happens while its lock word is locked, and
// unlocking gives it a new version, so the same unlocked word before and
// after proves that no store tore the pair. Anything else (a block is open,
// the object is locked, the header does not match, a closed heap) takes the
// slow path: libuniheap, or the right error. Every write goes to the addon:
// libuniheap locks, logs and persists it.
const { scratch, CLASS } = require('./native');
const {
  kH, kV, kB, kW, kO, kG, isProxy, checkSameHeap,
} = require('./identity');
const {
  live, freedError, classAt, fromNative, takeBytes,
} = require('./internal');
const { closedError, FreedObjectError, TypeMismatchError } = require('./errors');

const T = {
  bool: 1, i8: 2, i16: 3, i32: 4, i64: 5, f32: 6, f64: 7, ref: 8, string: 9, bytes: 10,
  istring: 11, ibytes: 12,
};
const TYPE_NAMES = ['?', 'bool', 'i8', 'i16', 'i32', 'i64', 'f32', 'f64', 'ref', 'string', 'bytes',
  'inline string', 'inline bytes'];

/** An inline string or bytes field ('string:N', 'bytes:N'; FORMAT.md 3.2):
 * its value lives in the object, at most f.capacity bytes. */
function isInline(t) {
  return t === T.istring || t === T.ibytes;
}

const INT_RANGE = {
  [T.bool]: [0, 1], [T.i8]: [-128, 127], [T.i16]: [-32768, 32767],
  [T.i32]: [-2147483648, 2147483647], [T.i64]: [-(2 ** 63), 2 ** 63],
};
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

function isInt(t) {
  return t >= T.bool && t <= T.i64;
}

function isFloat(t) {
  return t === T.f32 || t === T.f64;
}

// ---- reads ----

function unsafeInteger(f, v) {
  return new RangeError(`${f.what} holds ${v}, beyond Number.MAX_SAFE_INTEGER: read it ` +
    `exactly with obj.$getBigInt("${f.name}")`);
}

/** The value of a reference field (off, gen) read in place: null, a
 * string/bytes value, or a proxy. */
function refAt(st, off, gen, f) {
  const cls = classAt(st, off, gen);
  if (cls < 0) {
    throw new FreedObjectError(`${f.what} refers to a freed object (offset ${off})`,
      'UH_EFREED', -7);
  }
  return valueAt(st, off, gen, cls);
}

/** The value of the live object (off, gen) of class cls: a string or
 * bytes value as a string or Buffer, any other object as its proxy. */
function valueAt(st, off, gen, cls) {
  if (cls === CLASS.string || cls === CLASS.bytes) {
    return takeBytes(st.s.stringAt(off, gen, cls === CLASS.string ? T.string : T.bytes, true));
  }
  return st.wrap(off, gen, cls);
}

/** Everything the generated getters do not: blocks (libuniheap validates
 * the read against the block's snapshot), a locked object, errors. */
function slowGet(obj, f) {
  const st = obj[kH];
  if (st.closed) throw closedError();
  if (!live(obj)) throw freedError(obj);
  const s = st.s;
  if (isInt(f.type)) {
    const r = s.getI64(obj[kO], obj[kG], f.index, f.what);
    if (typeof r === 'bigint') throw unsafeInteger(f, r);
    return f.type === T.bool ? r !== 0 : r;
  }
  if (isFloat(f.type)) return s.getF64(obj[kO], obj[kG], f.index, f.what);
  if (f.type === T.ref) return fromNative(st, s.getRef(obj[kO], obj[kG], f.index, f.what));
  if (isInline(f.type)) return s.getInline(obj[kO], obj[kG], f.index, f.type, f.capacity, f.what);
  return takeBytes(s.getStr(obj[kO], obj[kG], f.index, f.type, f.what, true));
}

// The header check before the load, and again after it: a value copied
// while the object was freed (and its slot maybe reused: another
// generation) is not returned.
const HEAD = `const v = this[kV], b = this[kB], w = this[kW];
if (v.u32[(b + 8) >>> 2] !== w || v.i32[(b + 12) >>> 2] >= 0 || this[kH].depth !== 0)
  return slow(this, f);`;
const AGAIN = `if (v.u32[(b + 8) >>> 2] !== w || v.i32[(b + 12) >>> 2] >= 0) return slow(this, f);`;

// The 8 bytes at FO as lo (u32) and hi, between two loads of the lock word.
const PAIR = (hi) => `const lw = v.f64[b >>> 3];
const lo = v.u32[(b + FO) >>> 2], hi = v.${hi}[(b + FO + 4) >>> 2];
if (v.f64[b >>> 3] !== lw || !(lw >= 0)) return slow(this, f);
${AGAIN}`;

const ONE = (load) => `const x = ${load};\n${AGAIN}\nreturn x;`;

const READ = {
  [T.bool]: ONE('v.u8[b + FO] !== 0'),
  [T.i8]: ONE('v.i8[b + FO]'),
  [T.i16]: ONE('v.i16[(b + FO) >>> 1]'),
  [T.i32]: ONE('v.i32[(b + FO) >>> 2]'),
  [T.f32]: ONE('v.f32[(b + FO) >>> 2]'),
  [T.f64]: ONE('v.f64[(b + FO) >>> 3]'),
  [T.i64]: `${PAIR('i32')}
if (hi < 0x200000 && hi >= -0x200000 && (hi !== -0x200000 || lo !== 0)) return hi * 4294967296 + lo;
throw unsafe(f, BigInt.asIntN(64, BigInt(hi >>> 0) << 32n | BigInt(lo)));`,
  [T.ref]: `${PAIR('u32')}
if (lo === 0 && hi === 0) return null;
return refAt(this[kH], (hi & 0xffff) * 4294967296 + lo, hi >>> 16, f);`,
  [T.string]: 'return slow(this, f);',
  [T.bytes]: 'return slow(this, f);',
  [T.istring]: 'return slow(this, f);',
  [T.ibytes]: 'return slow(this, f);',
};

function makeGetter(f) {
  // Only numbers are spliced into the source: the field's byte offset.
  const body = `${HEAD}\n${READ[f.type]}`.replaceAll('FO', String(f.offset));
  const make = new Function('kV', 'kB', 'kW', 'kH', 'slow', 'refAt', 'unsafe', 'f',
    `return function get() {\n${body}\n};`);
  return make(kV, kB, kW, kH, slowGet, refAt, unsafeInteger, f);
}

// ---- writes ----

function checkWrite(obj) {
  if (!live(obj)) throw obj[kH].closed ? closedError() : freedError(obj);
}

function wrongType(f, want, v) {
  const got = v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
  return new TypeError(`${f.what} is a ${TYPE_NAMES[f.type]} field: expected ${want}, not ${got}`);
}

/** The integer to store in an integer field: a number or a bigint, range
 * checked here so that the error names the field. */
function intArg(f, v) {
  const [min, max] = INT_RANGE[f.type];
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new RangeError(`${f.what}: ${v} is not an integer`);
    if (v < min || v > max || (f.type === T.i64 && v === max)) {
      throw new RangeError(`${f.what}: ${v} does not fit ${TYPE_NAMES[f.type]}`);
    }
    return v;
  }
  if (typeof v === 'bigint') {
    const lo = f.type === T.i64 ? I64_MIN : BigInt(min);
    const hi = f.type === T.i64 ? I64_MAX : BigInt(max);
    if (v < lo || v > hi) throw new RangeError(`${f.what}: ${v} does not fit ${TYPE_NAMES[f.type]}`);
    return f.type === T.i64 ? v : Number(v);
  }
  if (typeof v === 'boolean' && f.type === T.bool) return v ? 1 : 0;
  throw wrongType(f, f.type === T.bool ? 'a boolean' : 'a number or bigint', v);
}

function refArg(f, st, v) {
  if (v === null || v === undefined) return null;
  if (!isProxy(v)) {
    throw wrongType(f, 'a persistent object (PObject, PMap, PSortedMap, PList, PArray) or ' +
      'null; make a JS value persistent first, e.g. new PList(heap, values)', v);
  }
  checkSameHeap(v, st, f.what);
  if (f.refClass && !(v instanceof f.refClass)) {
    throw new TypeMismatchError(`${f.what} refers to ${f.refClass.className || f.refClass.name} ` +
      `objects, not ${v.$className}`, 'UH_ETYPE', -8);
  }
  checkWrite(v);
  return v;
}

function makeSetter(f) {
  if (isInt(f.type)) {
    return function set(v) {
      checkWrite(this);
      this[kH].s.setI64(this[kO], this[kG], f.index, intArg(f, v), f.what);
    };
  }
  if (isFloat(f.type)) {
    return function set(v) {
      checkWrite(this);
      if (typeof v !== 'number') throw wrongType(f, 'a number', v);
      this[kH].s.setF64(this[kO], this[kG], f.index, v, f.what);
    };
  }
  if (f.type === T.ref) {
    return function set(v) {
      checkWrite(this);
      const t = refArg(f, this[kH], v);
      this[kH].s.setRef(this[kO], this[kG], f.index, t ? t[kO] : 0, t ? t[kG] : 0, f.what);
    };
  }
  if (isInline(f.type)) {
    const str = f.type === T.istring;
    return function set(v) {
      checkWrite(this);
      if (str ? typeof v !== 'string' : !(v instanceof Uint8Array)) {
        throw wrongType(f, str ? 'a string' : 'a Buffer/Uint8Array', v);
      }
      this[kH].s.setInline(this[kO], this[kG], f.index, f.type, v, f.what);
    };
  }
  const want = f.type === T.string ? 'a string or null' : 'a Buffer/Uint8Array or null';
  return function set(v) {
    checkWrite(this);
    const ok = v === null || v === undefined ||
      (f.type === T.string ? typeof v === 'string' : v instanceof Uint8Array);
    if (!ok) throw wrongType(f, want, v);
    this[kH].s.setStr(this[kO], this[kG], f.index, f.type, v ?? null, f.what);
  };
}

/** Make f's getter and setter (f.offset must be known), and define them
 * as the property f.name of proto unless define is false. */
function install(proto, f, define = true) {
  f.get = makeGetter(f);
  f.set = makeSetter(f);
  if (define) {
    Object.defineProperty(proto, f.name, {
      get: f.get, set: f.set, enumerable: true, configurable: true,
    });
  }
}

/** The exact value of an integer field, as a bigint (any i64). */
function getBigInt(obj, f) {
  const st = obj[kH];
  if (st.closed) throw closedError();
  if (!live(obj)) throw freedError(obj);
  if (!isInt(f.type)) throw new TypeError(`${f.what} is a ${TYPE_NAMES[f.type]} field, not an integer`);
  return BigInt(st.s.getI64(obj[kO], obj[kG], f.index, f.what));
}

module.exports = {
  T, TYPE_NAMES, isInline, install, getBigInt, unsafeInteger, valueAt, scratch,
};
