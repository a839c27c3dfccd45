'use strict';
// Field values: random printable bytes, or with dataintegrity=true the
// deterministic value YCSB derives from the key and the field name.

const CACHE_LIMIT = 1 << 17;
const cache = new Map();

/** What YCSB's buildDeterministicValue makes: "key:field", then, while
 *  shorter than size, ':' and the Java hashCode of everything so far
 *  (colon included), cut to size. A Buffer; cached, since checking a
 *  record computes every field's value and zipfian keys repeat. */
function deterministicValue(key, field, size) {
  const id = `${key}\0${field}\0${size}`;
  let v = cache.get(id);
  if (v !== undefined) return v;
  let s = `${key}:${field}`;
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  while (s.length < size) {
    h = (Math.imul(h, 31) + 58) | 0;          // ':' joins the hash first
    const num = String(h);
    s += ':' + num;
    for (let i = 0; i < num.length; i++) h = (Math.imul(h, 31) + num.charCodeAt(i)) | 0;
  }
  v = Buffer.from(s.slice(0, size), 'latin1');
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(id, v);
  return v;
}

/** size random printable bytes as YCSB's RandomByteIterator draws them:
 *  6 bytes from each random int, ' ' plus bits masked by 31, 63, 95, 31,
 *  63, 95. */
function randomValue(rng, size) {
  const out = Buffer.allocUnsafe(size);
  for (let base = 0; base < size; base += 6) {
    const bytes = rng.nextInt32();
    const left = size - base;
    if (left > 5) out[base + 5] = ((bytes >> 25) & 95) + 32;
    if (left > 4) out[base + 4] = ((bytes >> 20) & 63) + 32;
    if (left > 3) out[base + 3] = ((bytes >> 15) & 31) + 32;
    if (left > 2) out[base + 2] = ((bytes >> 10) & 95) + 32;
    if (left > 1) out[base + 1] = ((bytes >> 5) & 63) + 32;
    out[base] = (bytes & 31) + 32;
  }
  return out;
}

module.exports = { deterministicValue, randomValue };
