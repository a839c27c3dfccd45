'use strict';
// The byte encoding of a record for the stores that keep bytes (LMDB; and
// Chronicle Map on the Java side), the same in every language:
//
//   repeated, in field order:  u16 LE name length | name (UTF-8)
//                              u32 LE value length | value

function encode(record) {
  const names = Object.keys(record);
  let size = 0;
  const nameBufs = names.map((n) => Buffer.from(n, 'utf8'));
  for (let i = 0; i < names.length; i++) size += 6 + nameBufs[i].length + record[names[i]].length;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (let i = 0; i < names.length; i++) {
    const v = record[names[i]];
    out.writeUInt16LE(nameBufs[i].length, o);
    o += 2 + nameBufs[i].copy(out, o + 2);
    out.writeUInt32LE(v.length, o);
    o += 4;
    o += Buffer.isBuffer(v) ? v.copy(out, o) : out.write(String(v), o, 'latin1');
  }
  return out;
}

/** The record's fields (only those in fields when given), as Buffers that
 *  copy the data (an LMDB buffer is valid only until the next call). */
function decode(data, fields = null) {
  const out = {};
  for (let i = 0; i < data.length;) {
    const n = data.readUInt16LE(i);
    const name = data.toString('utf8', i + 2, i + 2 + n);
    i += 2 + n;
    const v = data.readUInt32LE(i);
    i += 4;
    if (fields === null || fields.includes(name)) out[name] = Buffer.from(data.subarray(i, i + v));
    i += v;
  }
  return out;
}

module.exports = { encode, decode };
