'use strict';
// A seedable random source per client thread (Java's client uses
// ThreadLocalRandom, which cannot be seeded; Math.random cannot either).
// xoshiro128** (Blackman & Vigna), seeded through splitmix32 from a string.

function splitmix32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

function hashString(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

class Random {
  /** seed: any string or number; undefined draws one from the OS. */
  constructor(seed) {
    const init = seed === undefined
      ? require('node:crypto').randomBytes(4).readUInt32LE(0)
      : hashString(String(seed));
    const next = splitmix32(init);
    this.s = new Uint32Array([next(), next(), next(), next()]);
    if (!(this.s[0] | this.s[1] | this.s[2] | this.s[3])) this.s[0] = 1;
  }

  /** 32 random bits as an unsigned number. */
  nextU32() {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** 32 random bits as a signed int (Java's nextInt()). */
  nextInt32() {
    return this.nextU32() | 0;
  }

  /** Uniform in [0, 1) with 53 random bits (Java's nextDouble()). */
  nextDouble() {
    return ((this.nextU32() >>> 5) * 67108864 + (this.nextU32() >>> 6)) / 9007199254740992;
  }
}

function rotl(x, k) {
  return (x << k) | (x >>> (32 - k));
}

module.exports = { Random };
