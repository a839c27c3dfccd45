'use strict';
// The Node port draws what YCSB 0.17.0 draws. Pinned values (FNV hashes,
// zipfian constants, key names, deterministic values) were printed by
// YCSB's own classes in site.ycsb:core:0.17.0; distribution checks use a
// fixed seed and tolerances far wider than the sampling error.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const { AcknowledgedCounter, Counter, SharedAcknowledgedCounter } = require('../lib/counters');
const g = require('../lib/generators');
const { Measurements } = require('../lib/measurements');
const { loadProperties } = require('../lib/properties');
const { Random } = require('../lib/random');
const { deterministicValue, randomValue } = require('../lib/values');
const { CoreWorkload, makeCounters, operationChooser } = require('../lib/workload');

const WORKLOADS = path.join(__dirname, '..', '..', 'workloads');

function workload(name, seed = 1, overrides = {}) {
  const p = name ? loadProperties(path.join(WORKLOADS, `workload${name}`)) : {};
  Object.assign(p, { recordcount: '1000', operationcount: '1000' }, overrides);
  return new CoreWorkload(p, new Random(seed), ...makeCounters(p, false), new Measurements());
}

function counts(draws) {
  const c = new Map();
  for (const d of draws) c.set(d, (c.get(d) || 0) + 1);
  return c;
}

function mostCommon(draws) {
  return [...counts(draws)].sort((a, b) => b[1] - a[1])[0][0];
}

function draw(n, f) {
  return Array.from({ length: n }, f);
}

const approx = (a, b, tol, what = '') => assert.ok(Math.abs(a - b) <= tol, `${what} ${a} not within ${tol} of ${b}`);

test('fnvhash64 check values', () => {
  assert.equal(g.fnvString(0), '6284781860667377211');
  assert.equal(g.fnvString(1), '8517097267634966620');
  assert.equal(g.fnvString(1000), '5952875239596136740');
  assert.equal(g.fnvString(123456789), '2350796791908741607');
  assert.equal(g.fnvhash64Big(-1), 8289690350564177859n);   // arithmetic shift of a negative long
  assert.equal(g.fnvString(-1), '8289690350564177859');
});

test('fnvhash64 fast path agrees with the BigInt one', () => {
  const rng = new Random(3);
  for (let i = 0; i < 20000; i++) {
    const v = Math.floor(rng.nextDouble() * 2 ** 53);
    assert.equal(g.fnvString(v), g.fnvhash64Big(v).toString());
    const n = 1 + Math.floor(rng.nextDouble() * 2 ** 26);
    assert.equal(g.fnvMod(v, n), Number(g.fnvhash64Big(v) % BigInt(n)));
  }
});

test('key names are hashed and padded', () => {
  const w = workload();
  assert.equal(w.buildKeyName(0), 'user6284781860667377211');
  assert.equal(w.buildKeyName(1), 'user8517097267634966620');
  assert.equal(w.buildKeyName(999), 'user2071219101098386137');
  assert.equal(workload(null, 1, { zeropadding: '21' }).buildKeyName(0), 'user006284781860667377211');
  assert.equal(workload(null, 1, { insertorder: 'ordered', zeropadding: '6' }).buildKeyName(42), 'user000042');
});

test('the load inserts keys in counter order', () => {
  const keys = [];
  const db = {
    insert(table, key, values) {
      assert.equal(table, 'usertable');
      assert.deepEqual(Object.keys(values).sort(), Array.from({ length: 10 }, (_, i) => `field${i}`).sort());
      assert.ok(Object.values(values).every((v) => v.length === 100));
      keys.push(key);
      return 'OK';
    },
  };
  const w = workload('a', 1, { insertstart: '10' });
  for (let i = 0; i < 5; i++) assert.equal(w.doInsert(db), true);
  assert.deepEqual(keys, [10, 11, 12, 13, 14].map((k) => w.buildKeyName(k)));
});

test('zipfian constants', () => {
  const z = new g.ZipfianGenerator(new Random(1), 0, 999);
  approx(z.zeta2theta, 1.5034777750283594, 1e-15);
  approx(z.zetan, 7.728953217284729, 1e-13);
  approx(z.eta, 0.07480608670689805, 1e-15);
  const big = new g.ZipfianGenerator(new Random(1), 0, 99999);
  approx(big.zetan, 12.778338062551246, 1e-12);
  approx(big.eta, 0.11622472739519558, 1e-14);
});

test('zipfian extends zetan but keeps eta of its item count', () => {
  const z = new g.ZipfianGenerator(new Random(1), 0, 999);
  z.nextLong(1500);
  approx(z.zetan, g.zetastatic(1500, 0.99), 1e-12);
  approx(z.eta, (1 - Math.pow(2 / 1000, 0.01)) / (1 - z.zeta2theta / z.zetan), 1e-15);
});

test('zipfian popularity and bounds', () => {
  const z = new g.ZipfianGenerator(new Random(7), 100, 1099);
  const d = draw(100000, () => z.nextValue());
  assert.ok(Math.min(...d) >= 100 && Math.max(...d) <= 1099);
  const c = counts(d);
  approx(c.get(100) / d.length, 1 / z.zetan, 0.01, 'P(base)');
  approx(c.get(101) / d.length, Math.pow(0.5, 0.99) / z.zetan, 0.01, 'P(base+1)');
  assert.equal(mostCommon(d), 100);
});

test('scrambled zipfian uses the fixed zetan and stays in range', () => {
  const s = new g.ScrambledZipfianGenerator(new Random(3), 0, 999);
  assert.equal(s.gen.zetan, 26.46902820178302);
  assert.equal(s.gen.items, 10000000001);
  const d = draw(50000, () => s.nextValue());
  assert.ok(Math.min(...d) >= 0 && Math.max(...d) <= 999);
  assert.equal(mostCommon(d), Number(g.fnvhash64Big(0) % 1000n));
});

test('request keys never exceed the last insert', () => {
  const w = workload('a', 1, { recordcount: '200', operationcount: '1000', insertproportion: '0.5' });
  assert.equal(w.keychooser.itemcount, 1201);
  for (let i = 0; i < 5000; i++) {
    const k = w.nextKeynum();
    assert.ok(k >= 0 && k <= 199);
  }
});

test('skewed latest bounds follow the acknowledged inserts', () => {
  const basis = new AcknowledgedCounter(1000);
  const latest = new g.SkewedLatestGenerator(new Random(5), basis);
  let d = draw(20000, () => latest.nextValue());
  assert.ok(Math.min(...d) >= 0 && Math.max(...d) <= 999);
  assert.equal(mostCommon(d), 999);
  for (let i = 0; i < 10; i++) basis.acknowledge(basis.nextValue());
  d = draw(20000, () => latest.nextValue());
  assert.ok(Math.min(...d) >= 0 && Math.max(...d) <= 1009);
  assert.equal(mostCommon(d), 1009);
});

test('uniform long bounds', () => {
  const u = new g.UniformLongGenerator(new Random(2), -3, 3);
  const c = counts(draw(70000, () => u.nextValue()));
  assert.deepEqual([...c.keys()].sort((a, b) => a - b), [-3, -2, -1, 0, 1, 2, 3]);
  for (const n of c.values()) approx(n / 70000, 1 / 7, 0.01);
});

test('scan length range', () => {
  let lengths = draw(20000, () => workload('e').scanlength.nextValue());
  const w = workload('e');
  lengths = draw(20000, () => w.scanlength.nextValue());
  assert.equal(Math.min(...lengths), 1);
  assert.equal(Math.max(...lengths), 100);
  const z = workload('e', 1, { scanlengthdistribution: 'zipfian' });
  lengths = draw(20000, () => z.scanlength.nextValue());
  assert.ok(Math.min(...lengths) === 1 && Math.max(...lengths) <= 100);
  assert.equal(mostCommon(lengths), 1);
});

for (const [name, expected] of [
  ['a', { READ: 0.5, UPDATE: 0.5 }], ['b', { READ: 0.95, UPDATE: 0.05 }], ['c', { READ: 1 }],
  ['d', { READ: 0.95, INSERT: 0.05 }], ['e', { SCAN: 0.95, INSERT: 0.05 }],
  ['f', { READ: 0.5, READMODIFYWRITE: 0.5 }]]) {
  test(`operation mix of workload ${name}`, () => {
    const chooser = operationChooser(loadProperties(path.join(WORKLOADS, `workload${name}`)), new Random(11));
    const n = 100000;
    const c = counts(draw(n, () => chooser.nextValue()));
    assert.deepEqual([...c.keys()].sort(), Object.keys(expected).sort());
    for (const [op, p] of Object.entries(expected)) approx(c.get(op) / n, p, 0.006, op);
  });
}

test('a seed repeats the run', () => {
  const ops = (seed) => {
    const w = workload('a', seed);
    return draw(200, () => `${w.operationchooser.nextValue()}:${w.nextKeynum()}`).join(',');
  };
  assert.equal(ops(9), ops(9));
  assert.notEqual(ops(9), ops(10));
});

test('deterministic values match YCSB', () => {
  assert.equal(deterministicValue('user6284781860667377211', 'field0', 100).toString(),
    'user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:-169193395:-1039977118:-10');
  assert.equal(deterministicValue('user1', 'field9', 100).toString(),
    'user1:field9:-1268390937:701431326:1606534939:-534149429:-1854609471:-1563934887:1739619784:-7954596');
  assert.equal(deterministicValue('user1', 'field9', 10).toString(), 'user1:fiel');
});

test('random values are printable, with YCSB\'s per-position alphabets', () => {
  const v = randomValue(new Random(8), 120000);
  assert.equal(v.length, 120000);
  let min = 255;
  let max = 0;
  const sets = Array.from({ length: 6 }, () => new Set());
  for (let i = 0; i < v.length; i++) {
    min = Math.min(min, v[i]);
    max = Math.max(max, v[i]);
    sets[i % 6].add(v[i]);
  }
  assert.ok(min >= 32 && max <= 127);
  assert.deepEqual(sets.map((s) => s.size), [32, 64, 64, 32, 64, 64]);
});

test('verifyRow flags a wrong byte and an empty row', () => {
  const w = workload('c', 1, { dataintegrity: 'true' });
  const key = w.buildKeyName(3);
  const good = w.buildValues(key);
  w.verifyRow(key, good);
  const bad = { ...good, field4: Buffer.concat([good.field4.subarray(0, 99), Buffer.from('?')]) };
  w.verifyRow(key, bad);
  w.verifyRow(key, {});
  assert.deepEqual([...w.measurements.returns.get('VERIFY')].sort(), [['ERROR', 1], ['OK', 1], ['UNEXPECTED_STATE', 1]]);
});

for (const Make of [AcknowledgedCounter, SharedAcknowledgedCounter]) {
  test(`${Make.name} advances over contiguous acknowledgements`, () => {
    const c = new Make(100);
    assert.equal(c.lastValue(), 99);
    const [a, b, d] = [c.nextValue(), c.nextValue(), c.nextValue()];
    assert.deepEqual([a, b, d], [100, 101, 102]);
    c.acknowledge(b);
    assert.equal(c.lastValue(), 99);
    c.acknowledge(a);
    assert.equal(c.lastValue(), 101);
    c.acknowledge(d);
    assert.equal(c.lastValue(), 102);
  });
}

test('counter', () => {
  const c = new Counter(5);
  assert.equal(c.lastValue(), 4);
  assert.deepEqual([c.nextValue(), c.nextValue(), c.nextValue()], [5, 6, 7]);
  assert.equal(c.lastValue(), 7);
});
