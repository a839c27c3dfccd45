'use strict';
// The number generators of YCSB 0.17.0's CoreWorkload, ported.
//
// Each generator draws from the Random it is given (one per client thread,
// like Java's ThreadLocalRandom), so a fixed `seed` property makes a run
// repeatable. The counters the client threads share (load key sequence,
// acknowledged insert counter) live in counters.js; generators only read
// them. Java's long arithmetic is kept where it shows: fnvhash64 wraps at
// 64 bits (done here on two 32-bit halves, BigInt only for its decimal
// form) and takes a signed abs; the zipfian draw truncates toward zero.

const ZIPFIAN_CONSTANT = 0.99;
// zeta(10^10, 0.99) of the scrambled zipfian, precomputed as YCSB does
// (10^10 terms are too many to sum at start-up).
const SCRAMBLED_ZETAN = 26.46902820178302;
const SCRAMBLED_ITEM_COUNT = 10000000000;
const TWO32 = 4294967296;

// fnvhash64 of the last call, as unsigned halves (no allocation per call).
const fnv = new Uint32Array(2);

/** Computes fnvhash64(v) into fnv[0] (high) and fnv[1] (low) for a
 *  non-negative safe integer v; false if v is outside that range (then
 *  use fnvhash64Big). */
function fnvParts(v) {
  if (!(v >= 0 && v <= Number.MAX_SAFE_INTEGER)) return false;
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  let x = v;
  for (let i = 0; i < 8; i++) {
    lo = (lo ^ (x % 256)) >>> 0;
    x = Math.floor(x / 256);
    // (hi:lo) * (2^40 + 0x1b3) mod 2^64: lo*0x1b3 < 2^41 is exact, its
    // carry goes to hi; the 2^40 term moves lo's low 24 bits into hi.
    const l = lo * 0x1b3;
    hi = (Math.imul(hi, 0x1b3) + Math.floor(l / TWO32) + (lo << 8)) >>> 0;
    lo = l >>> 0;
  }
  if (hi >= 0x80000000) {            // Math.abs of a negative long
    lo = (~lo + 1) >>> 0;
    hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
  }
  fnv[0] = hi;
  fnv[1] = lo;
  return true;
}

const MASK64 = (1n << 64n) - 1n;

/** fnvhash64 as YCSB's Utils.fnvhash64, for any long, as a BigInt. */
function fnvhash64Big(value) {
  let h = 0xCBF29CE484222325n;
  let x = BigInt.asIntN(64, BigInt(value));
  for (let i = 0; i < 8; i++) {
    h = ((h ^ (x & 0xffn)) * 1099511628211n) & MASK64;
    x >>= 8n;                        // arithmetic shift, as Java's >>
  }
  h = BigInt.asIntN(64, h);
  return h < 0n && h !== -(1n << 63n) ? -h : h;
}

/** Decimal string of fnvhash64(v). */
function fnvString(v) {
  if (!fnvParts(v)) return fnvhash64Big(v).toString();
  return ((BigInt(fnv[0]) << 32n) | BigInt(fnv[1])).toString();
}

/** fnvhash64(v) % n for 0 < n <= 2^26 without BigInt, else with it. */
function fnvMod(v, n) {
  if (n <= 67108864 && fnvParts(v)) {
    return ((fnv[0] % n) * (TWO32 % n) + (fnv[1] % n)) % n;
  }
  return Number(fnvhash64Big(v) % BigInt(n));
}

class ConstantIntegerGenerator {
  constructor(value) { this.value = value; }
  nextValue() { return this.value; }
}

/** Uniform over [lb, ub]; Java draws abs(nextLong()) % (ub-lb+1), the
 *  same distribution as 53 random bits scaled to the interval. */
class UniformLongGenerator {
  constructor(rng, lb, ub) {
    if (ub < lb) throw new RangeError(`uniform generator: upper bound ${ub} below lower bound ${lb}`);
    this.rng = rng;
    this.lb = lb;
    this.ub = ub;
    this.interval = ub - lb + 1;
  }

  nextValue() {
    return this.lb + Math.floor(this.rng.nextDouble() * this.interval);
  }
}

/** sum over i in [start, n) of 1/(i+1)^theta, added to initialsum. */
function zetastatic(n, theta, start = 0, initialsum = 0) {
  let sum = initialsum;
  for (let i = start; i < n; i++) sum += 1 / Math.pow(i + 1, theta);
  return sum;
}

/** Zipfian over [min, max] (Gray et al., SIGMOD 1994), min most popular.
 *  zetan is extended incrementally when nextLong is asked for more items
 *  (as the latest generator does); eta keeps the constructor's count. */
class ZipfianGenerator {
  constructor(rng, min, max, theta = ZIPFIAN_CONSTANT, zetan = undefined) {
    this.rng = rng;
    this.items = max - min + 1;
    this.base = min;
    this.theta = theta;
    this.zeta2theta = zetastatic(2, theta);
    this.alpha = 1 / (1 - theta);
    this.zetan = zetan === undefined ? zetastatic(this.items, theta) : zetan;
    this.countforzeta = this.items;
    this.eta = this.computeEta();
    this.halfPowTheta = Math.pow(0.5, theta);
    this.nextValue();                  // YCSB draws once at construction
  }

  computeEta() {
    return (1 - Math.pow(2 / this.items, 1 - this.theta)) / (1 - this.zeta2theta / this.zetan);
  }

  nextLong(itemcount) {
    if (itemcount > this.countforzeta) {
      this.zetan = zetastatic(itemcount, this.theta, this.countforzeta, this.zetan);
      this.countforzeta = itemcount;
      this.eta = this.computeEta();
    }
    const u = this.rng.nextDouble();
    const uz = u * this.zetan;
    if (uz < 1) return this.base;
    if (uz < 1 + this.halfPowTheta) return this.base + 1;
    return this.base + Math.trunc(itemcount * Math.pow(this.eta * u - this.eta + 1, this.alpha));
  }

  nextValue() {
    return this.nextLong(this.items);
  }
}

/** Zipfian popularity scattered over [min, max]: a zipfian over 10^10
 *  items (precomputed zeta), then fnvhash64 modulo the item count. */
class ScrambledZipfianGenerator {
  constructor(rng, min, max) {
    this.min = min;
    this.max = max;
    this.itemcount = max - min + 1;
    this.gen = new ZipfianGenerator(rng, 0, SCRAMBLED_ITEM_COUNT, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN);
  }

  nextValue() {
    return this.min + fnvMod(this.gen.nextValue(), this.itemcount);
  }
}

/** Recent keys most popular (workload D): last - zipfian(last), last
 *  being the basis counter's last acknowledged value at each draw. */
class SkewedLatestGenerator {
  constructor(rng, basis) {
    this.basis = basis;
    this.zipfian = new ZipfianGenerator(rng, 0, basis.lastValue() - 1);
    this.nextValue();
  }

  nextValue() {
    const max = this.basis.lastValue();
    return max - this.zipfian.nextLong(max);
  }
}

/** One of several values with weights (the operation mix). */
class DiscreteGenerator {
  constructor(rng) {
    this.rng = rng;
    this.values = [];
  }

  addValue(weight, value) {
    this.values.push([weight, value]);
  }

  nextValue() {
    let sum = 0;
    for (const [w] of this.values) sum += w;
    let val = this.rng.nextDouble();
    for (const [w, v] of this.values) {
      const pw = w / sum;
      if (val < pw) return v;
      val -= pw;
    }
    // Rounding left val just above the last share: that is the value.
    return this.values[this.values.length - 1][1];
  }
}

module.exports = {
  ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN, SCRAMBLED_ITEM_COUNT,
  fnvhash64Big, fnvString, fnvMod, zetastatic,
  ConstantIntegerGenerator, UniformLongGenerator, ZipfianGenerator, ScrambledZipfianGenerator,
  SkewedLatestGenerator, DiscreteGenerator,
};
