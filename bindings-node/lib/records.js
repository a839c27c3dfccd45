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

/** An inline value at p of the bytes buffer (the length word, then the
 * value); a bytes value as a view of copy, which holds the payload's bytes
 * from the bytes buffer's offset `at` on. */
function inlineAt(f, p, copy, at) {
  const n = bytesBuf.readUInt32LE(p);
  if (n > f.capacity) {
    throw new RangeError(`${f.what}: an inline field holds more than its capacity`);
  }
  if (f.type === T.istring) return bytesBuf.toString('utf8', p + 4, p + 4 + n);
  return copy.subarray(p + 4 - at, p + 4 - at + n);
}

/** The i64 at p, a number (RangeError beyond 2^53 - 1, as a getter). */
function i64At(f, p) {
  const lo = bytesBuf.readUInt32LE(p);
  const hi = bytesBuf.readInt32LE(p + 4);
  if (hi < 0x200000 && hi >= -0x200000 && (hi !== -0x200000 || lo !== 0)) return hi * 4294967296 + lo;
  throw unsafeInteger(f, bytesBuf.readBigInt64LE(p));
}

function valueAt(f, p, copy, at) {
  switch (f.type) {
    case T.ibytes:
    case T.istring: return inlineAt(f, p, copy, at);
    case T.bool: return bytesBuf[p] !== 0;
    case T.i8: return bytesBuf.readInt8(p);
    case T.i16: return bytesBuf.readInt16LE(p);
    case T.i32: return bytesBuf.readInt32LE(p);
    case T.i64: return i64At(f, p);
    case T.f32: return bytesBuf.readFloatLE(p);
    case T.f64: return bytesBuf.readDoubleLE(p);
    default: throw new TypeError(`${f.what}: not decoded from a payload`);
  }
}

// Where a payload starts in its object (the object header's size,
// UH_OBJHDR_SIZE): field offsets count from the object's start.
const OBJHDR = 16;

/** The decoder of flat layout L (made once): (at, copy) -> { name: value }
 * of the payload at `at` of the bytes buffer, generated as one object
 * literal (a property store per field by a computed name costs several
 * times more). */
function decoderOf(L) {
  if (L.decoder) return L.decoder;
  const props = L.fields.map((f, i) => `${JSON.stringify(f.name)}: valueAt(F[${i}], ` +
    `at + ${f.offset - OBJHDR}, copy, at)`);
  L.decoder = new Function('valueAt', 'F', `return (at, copy) => ({ ${props.join(', ')} });`)(
    valueAt, L.fields);
  return L.decoder;
}

/** The fields of the len-byte payload at `at` of the bytes buffer, of
 * layout L. Bytes values are views of one copy of the payload (one copy
 * and a view per value cost less than a Buffer and a copy per value). */
function decode(L, at, len) {
  let copy = null;
  if (L.hasBytes) {
    copy = Buffer.allocUnsafe(len);
    bytesBuf.copy(copy, 0, at, at + len);
  }
  return decoderOf(L)(at, copy);
}

/** The fields of the record under key in map m (sorted: a PSortedMap),
 * or undefined when key is missing. slow(): get(key).$fields(). */
function getFields(st, o, g, sorted, kind, key, slow) {
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
