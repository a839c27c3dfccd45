'use strict';
// Records read and written through a map key in one addon call each
// (src/records.cc): PMap.getFields(key), PMap.setField(key, field, value)
// and PSortedMap.rangeFields(from, to, { limit }).
//
// The addon copies a record's whole payload (every field, inline values
// included, at one instant) into the bytes buffer; it is decoded here with
// the field offsets of the record's class (FORMAT.md 3.2: a record's
// layout is the same in every language), into { name: value } as
// obj.$fields() gives it. A class with a field whose value lives in another
// object (a ref, or a string or bytes field that is not inline) has no such
// decoder: its records are read through their proxy, with obj.$fields().
const { scratch, bytesBuf } = require('./native');
const { T, unsafeInteger } = require('./fields');
const { layoutOf, proxyType } = require('./objects');

/** The layout of the record class cls in the heap of st (the addon read
 * a record of it: a record class). */
function layoutIn(st, cls) {
  return layoutOf(st.types.get(cls) ?? proxyType(st, cls));
}

/** Whether every field of L is decoded from the payload alone. */
function flat(L) {
  if (L.flat === undefined) {
    L.flat = L.fields.every((f) => f.type !== T.ref && f.type !== T.string && f.type !== T.bytes);
    L.hasBytes = L.fields.some((f) => f.type === T.ibytes);
  }
  return L.flat;
}

// Buffer's own subclass (what Buffer.from and subarray make): a view made
// with it directly skips subarray's species lookup, twice as fast.
const FastBuffer = Buffer[Symbol.species];

/** The inline bytes value of field f at p of b (the length word, then the
 * value; capacity cap), a view of b's memory: ArrayBuffer ab from byte
 * base on (b.buffer and b.byteOffset, passed in: the buffer getter is a
 * slow runtime call). */
function ibytesAt(f, cap, b, ab, base, p) {
  const n = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
  if (n > cap) throw tooLong(f);
  return new FastBuffer(ab, base + p + 4, n);
}

/** The inline string value of field f at p of b, decoded. */
function istringAt(f, cap, b, p) {
  const n = b.readUInt32LE(p);
  if (n > cap) throw tooLong(f);
  return b.toString('utf8', p + 4, p + 4 + n);
}

function tooLong(f) {
  return new RangeError(`${f.what}: an inline field holds more than its capacity`);
}

/** The i64 at p of b, a number (RangeError beyond 2^53 - 1, as a getter). */
function i64At(f, b, p) {
  const lo = b.readUInt32LE(p);
  const hi = b.readInt32LE(p + 4);
  if (hi < 0x200000 && hi >= -0x200000 && (hi !== -0x200000 || lo !== 0)) return hi * 4294967296 + lo;
  throw unsafeInteger(f, b.readBigInt64LE(p));
}

function valueAt(f, b, p) {
  switch (f.type) {
    case T.bool: return b[p] !== 0;
    case T.i8: return b.readInt8(p);
    case T.i16: return b.readInt16LE(p);
    case T.i32: return b.readInt32LE(p);
    case T.i64: return i64At(f, b, p);
    case T.f32: return b.readFloatLE(p);
    case T.f64: return b.readDoubleLE(p);
    default: throw new TypeError(`${f.what}: not decoded from a payload`);
  }
}

// Where a payload starts in its object (the object header's size,
// UH_OBJHDR_SIZE): field offsets count from the object's start.
const OBJHDR = 16;

/** The decoder of flat layout L (made once): (b, ab, base, at) ->
 * { name: value } of the payload at `at` of Buffer b (b.buffer ab from
 * b.byteOffset base on), its bytes values views of b. It is
 * generated as one object literal (a property store per field by a
 * computed name costs several times more), inline values read by calls
 * of their own with the capacity as a constant (one shared reader of
 * every field type was a megamorphic call site). */
function decoderOf(L) {
  if (L.decoder) return L.decoder;
  const props = L.fields.map((f, i) => {
    const p = `at + ${f.offset - OBJHDR}`;
    const read = f.type === T.ibytes ? `ibytesAt(F[${i}], ${f.capacity}, b, ab, base, ${p})`
      : f.type === T.istring ? `istringAt(F[${i}], ${f.capacity}, b, ${p})`
        : `valueAt(F[${i}], b, ${p})`;
    return `${JSON.stringify(f.name)}: ${read}`;
  });
  L.decoder = new Function('ibytesAt', 'istringAt', 'valueAt', 'F',
    `return (b, ab, base, at) => ({ ${props.join(', ')} });`)(ibytesAt, istringAt, valueAt, L.fields);
  return L.decoder;
}

/** The fields of the len-byte payload at `at` of the bytes buffer, of
 * layout L. Bytes values are views of one copy of the payload (one copy
 * and a view per value cost less than a Buffer and a copy per value). */
function decode(L, at, len) {
  if (!L.hasBytes) return decoderOf(L)(bytesBuf, null, 0, at);
  const copy = Buffer.allocUnsafe(len);
  bytesBuf.copy(copy, 0, at, at + len);
  return decoderOf(L)(copy, copy.buffer, copy.byteOffset, 0);
}

// getFields copies a record straight into a chunk of this size, then the
// next one after it, 8-byte aligned; its bytes values are views of the
// chunk, which lives while one of them does (as a Buffer from
// Buffer.allocUnsafe keeps Node's pool chunk). A chunk taken up is
// replaced by a new one.
const CHUNK = 32 * 1024;
let chunk = Buffer.allocUnsafeSlow(CHUNK);	// all of its ArrayBuffer
let chunkAB = chunk.buffer;
let chunkAt = 0;

/** The fields of the record under key in map m (sorted: a PSortedMap),
 * or undefined when key is missing. slow(): get(key).$fields(). */
function getFields(st, o, g, sorted, kind, key, slow) {
  let n = st.s.mapGetRecord(o, g, sorted, kind, key, chunkAB, chunkAt);
  if (n === -1 && chunkAt > 0) {	// no room left: a new chunk, and read it again
    chunk = Buffer.allocUnsafeSlow(CHUNK);
    chunkAB = chunk.buffer;
    chunkAt = 0;
    n = st.s.mapGetRecord(o, g, sorted, kind, key, chunkAB, 0);
  }
  if (n === -1) return viaBytes(st, o, g, sorted, kind, key, slow);	// larger than a chunk
  if (n === undefined) return undefined;
  const L = layoutIn(st, scratch[2]);
  if (!flat(L)) return slow();
  const at = chunkAt;
  if (L.hasBytes) chunkAt = (at + n + 7) & ~7;	// else nothing views it: reused
  return decoderOf(L)(chunk, chunkAB, 0, at);
}

/** getFields for a record larger than a chunk: through the (larger)
 * bytes buffer, then copied; through its proxy when it is larger still. */
function viaBytes(st, o, g, sorted, kind, key, slow) {
  const n = st.s.mapGetRecord(o, g, sorted, kind, key);
  if (n === undefined) return undefined;
  if (n >= 0) {
    const L = layoutIn(st, scratch[2]);
    if (flat(L)) return decode(L, 0, n);
  }
  return slow();
}

/** setField's value check: what the addon takes. */
function checkFieldValue(field, value) {
  if (typeof value !== 'string' && !(value instanceof Uint8Array)) {
    throw new TypeError(`setField: the value of '${field}' must be a string or a ` +
      'Buffer/Uint8Array');
  }
}

// rangeFields asks for this many records per call (the addon's most).
const RANGE_BATCH = 32;

/** [key, fields] of the records of a sorted-map scan (state from mapIter,
 * up to the exclusive bound `to`), at most limit of them. slow(key):
 * get(key).$fields() for a record the addon could not copy. */
function rangeFields(st, o, g, kind, state, to, limit, slow) {
  const out = [];
  while (out.length < limit) {
    const r = st.s.rangeRecords(o, g, state, Math.min(RANGE_BATCH, limit - out.length), kind, to);
    if (r === null) break;
    let at = 0;
    for (let i = 0; i < r.length; i += 3) {
      const len = r[i + 1];
      if (len < 0) {
        const v = slow(r[i]);
        if (v !== undefined) out.push([r[i], v]);
        continue;
      }
      const L = layoutIn(st, r[i + 2]);
      out.push([r[i], flat(L) ? decode(L, at, len) : slow(r[i])]);
      at = (at + len + 7) & ~7;
    }
  }
  return out;
}

module.exports = {
  getFields, rangeFields, checkFieldValue,
};
