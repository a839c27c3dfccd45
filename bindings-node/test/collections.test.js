'use strict';
// Every data type against a JS model under random operations: PMap against
// Map (string, bytes and integer keys), PSortedMap against a sorted array,
// PList against Array, PArray against a fixed-length Array; values of every
// kind; roots as a Map.
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, useHeap, rng } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

function keyOf(kind, r) {
  const n = Math.floor(r() * 300);
  if (kind === 'string') return n % 7 === 0 ? `k✓${n}` : `k${n}`;
  if (kind === 'bytes') return Buffer.from([n & 0xff, n >> 8, 0]);
  return n % 11 === 0 ? -n * 1e12 : n - 150;
}

function modelKey(kind, k) {
  return kind === 'bytes' ? k.toString('hex') : k;
}

function valueOf(r, objs) {
  switch (Math.floor(r() * 8)) {
    case 0: return Math.floor(r() * 2 ** 40) - 2 ** 39;
    case 1: return r() * 100 - 50;
    case 2: return `v${Math.floor(r() * 1000)}`;
    case 3: return Buffer.from([1, 2, Math.floor(r() * 256)]);
    case 4: return r() < 0.5;
    case 5: return null;
    case 6: return objs[Math.floor(r() * objs.length)];
    default: return 2n ** 60n + BigInt(Math.floor(r() * 1000));
  }
}

function same(a, b) {
  if (a instanceof uniheap.PObject) return a.$equals(b);
  if (Buffer.isBuffer(a)) return Buffer.isBuffer(b) && a.equals(b);
  return Object.is(a, b);
}

function assertSameValue(got, want, what) {
  assert.ok(same(got, want), `${what}: got ${String(got)}, want ${String(want)}`);
}

test('PMap against Map under random operations (string, bytes, int keys)', () => {
  const Obj = heap.defineClass('t.coll.Obj', { n: 'i32' });
  const objs = [new Obj({ n: 1 }), new Obj({ n: 2 })];
  for (const [seed, kind] of [[1, 'string'], [2, 'bytes'], [3, 'int']]) {
    const r = rng(seed);
    const m = new uniheap.PMap(heap, undefined, { key: kind });
    const model = new Map();
    assert.equal(m.keyType, kind);
    for (let i = 0; i < 1500; i++) {
      const k = keyOf(kind, r);
      const mk = modelKey(kind, k);
      const op = r();
      if (op < 0.5) {
        const v = valueOf(r, objs);
        assert.equal(m.set(k, v), m);
        model.set(mk, [k, v]);
      } else if (op < 0.7) {
        assert.equal(m.delete(k), model.delete(mk));
      } else if (op < 0.75) {
        const had = model.get(mk);
        const v = m.take(k);
        model.delete(mk);
        if (had) assertSameValue(v, had[1], 'take');
        else assert.equal(v, undefined);
      } else {
        assert.equal(m.has(k), model.has(mk));
        if (model.has(mk)) assertSameValue(m.get(k), model.get(mk)[1], `get ${mk}`);
        else assert.equal(m.get(k), undefined);
      }
    }
    assert.equal(m.size, model.size);
    const seen = new Map([...m].map(([k, v]) => [modelKey(kind, k), v]));
    assert.equal(seen.size, model.size);
    for (const [mk, [, v]] of model) assertSameValue(seen.get(mk), v, `entry ${mk}`);
    m.check();
    let n = 0;
    m.forEach((v, k, self) => {
      assert.equal(self, m);
      n++;
    });
    assert.equal(n, model.size);
    m.clear();
    assert.equal(m.size, 0);
  }
});

test('map gets outside blocks are answered optimistically, without a block', () => {
  const m = new uniheap.PMap(heap, undefined, { key: 'string' });
  m.set('a', 1);
  const before = heap.stats();
  assert.equal(m.get('a'), 1);
  assert.equal(m.has('b'), false);
  const after = heap.stats();
  assert.equal(after.optReads - before.optReads, 2);
  assert.equal(after.commits + after.emptyCommits, before.commits + before.emptyCommits);
});

test('PSortedMap against a sorted array, ranges both ways', () => {
  for (const [seed, kind] of [[4, 'int'], [5, 'string'], [6, 'bytes']]) {
    const r = rng(seed);
    const m = new uniheap.PSortedMap(heap, undefined, { key: kind });
    const model = new Map();
    for (let i = 0; i < 1200; i++) {
      const k = keyOf(kind, r);
      if (r() < 0.7) {
        m.set(k, i);
        model.set(modelKey(kind, k), [k, i]);
      } else {
        assert.equal(m.delete(k), model.delete(modelKey(kind, k)));
      }
    }
    const cmp = kind === 'bytes' ? Buffer.compare
      : kind === 'int' ? (a, b) => a - b
      : (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    const sorted = [...model.values()].sort((a, b) => cmp(a[0], b[0]));
    const got = [...m.entries()];
    assert.equal(got.length, sorted.length);
    got.forEach(([k, v], i) => {
      assert.equal(cmp(k, sorted[i][0]), 0, `key ${i}`);
      assert.equal(v, sorted[i][1]);
    });
    assert.deepEqual(m.first()[1], sorted[0][1]);
    assert.deepEqual(m.last()[1], sorted.at(-1)[1]);
    for (let t = 0; t < 20; t++) {
      const a = keyOf(kind, r);
      const b = keyOf(kind, r);
      const [lo, hi] = cmp(a, b) <= 0 ? [a, b] : [b, a];
      const fwd = [...m.range(lo, hi)].map((kv) => kv[1]);
      assert.deepEqual(fwd, sorted.filter(([k]) => cmp(k, lo) >= 0 && cmp(k, hi) < 0).map((e) => e[1]));
      const back = [...m.range(hi, lo, { reverse: true })].map((kv) => kv[1]);
      assert.deepEqual(back, sorted.filter(([k]) => cmp(k, hi) <= 0 && cmp(k, lo) > 0)
        .map((e) => e[1]).reverse());
    }
    m.check();
  }
  const empty = new uniheap.PSortedMap(heap);
  assert.equal(empty.first(), undefined);
  assert.equal(empty.last(), undefined);
  assert.throws(() => new uniheap.PMap(heap).range(), TypeError);
});

// The entry one scan step after `last` in the model map as it is now.
function stepAfter(model, last, reverse) {
  let best;
  for (const k of model.keys()) {
    if (last !== undefined && (reverse ? k >= last : k <= last)) continue;
    if (best === undefined || (reverse ? k > best : k < best)) best = k;
  }
  return best === undefined ? undefined : [best, model.get(best)];
}

test('a PSortedMap scan reads batches, yet sees its own writes between steps as single steps would', () => {
  for (const [seed, reverse, inBlock] of [[1, false, false], [2, true, false], [3, false, true], [4, true, true]]) {
    const r = rng(seed);
    const m = new uniheap.PSortedMap(heap, undefined, { key: 'int' });
    const model = new Map();
    for (let k = 0; k < 2000; k += 4) {
      m.set(k, `v${k}`);
      model.set(k, `v${k}`);
    }
    const scan = () => {
      const iter = reverse ? m.range(undefined, undefined, { reverse: true }) : m.entries();
      let last;
      let steps = 0;
      for (;;) {
        const want = stepAfter(model, last, reverse);
        const got = iter.next();
        if (want === undefined) {
          assert.ok(got.done, `step ${steps}: an entry past the end`);
          return steps;
        }
        assert.deepEqual(got.value, want, `step ${steps} after ${last}`);
        last = got.value[0];
        steps++;
        for (let w = Math.floor(r() * 3); w > 0; w--) {   // 0-2 writes per step
          const dist = [1, 2, 3, 5, 40, 400][Math.floor(r() * 6)];
          const near = last + (r() < 0.5 ? -dist : dist);
          const op = r();
          if (op < 0.45) {
            m.set(near, `w${steps}`);
            model.set(near, `w${steps}`);
          } else if (op < 0.8 && model.has(near)) {
            assert.ok(m.delete(near));
            model.delete(near);
          } else if (model.size > 0) {
            const keys = [...model.keys()];
            const k = keys[Math.floor(r() * keys.length)];
            m.set(k, `r${steps}`);
            model.set(k, `r${steps}`);
          }
        }
      }
    };
    const steps = inBlock ? heap.atomic(scan) : scan();
    assert.ok(steps > 400, `${steps} steps`);
    const sorted = [...model.entries()].sort((a, b) => a[0] - b[0]);
    assert.deepEqual([...m.entries()], sorted);
    m.check();
  }
});

test('PSortedMap scan batches carry every kind of value, each on its own', () => {
  const m = new uniheap.PSortedMap(heap, undefined, { key: 'int' });
  const Obj = heap.defineClass('t.coll.Batched', { n: 'i32' });
  const objs = [new Obj({ n: 1 }), new Obj({ n: 2 })];
  const big = Buffer.alloc(40 * 1024, 7);   // two of them overflow the bytes buffer
  const want = [];
  for (let k = 0; k < 300; k++) {
    const v = [objs[k % 2], Buffer.from([k & 0xff, 1, 2]), k * 3, `s${k}`, null, 2n ** 62n + BigInt(k),
      k % 50 === 0 ? big : true, 1.5][k % 8];
    m.set(k, v);
    want.push([k, v]);
  }
  const got = [...m.entries()];
  assert.equal(got.length, want.length);
  got.forEach(([k, v], i) => {
    assert.equal(k, want[i][0]);
    assertSameValue(v, want[i][1], `value of ${k}`);
  });
  const b1 = got[1][1];
  const b9 = got[9][1];
  b1[0] = 99;                                  // a Buffer of its own
  assert.equal(b9[0], 9);
  assert.equal(m.get(1)[0], 1);
  assert.equal(got[0][1].n, 1);
  const list = new uniheap.PList(heap, [5]);
  m.set(1000, list);
  assert.deepEqual([...m.range(1000)][0][1].toArray(), [5]);
});

test('PSortedMap scans that stop early, keys and values alone, range ends inside a batch', () => {
  const m = new uniheap.PSortedMap(heap, undefined, { key: 'int' });
  for (let k = 0; k < 500; k++) m.set(k, k * 10);
  const it = m.range(100);
  assert.deepEqual([it.next().value, it.next().value, it.next().value], [[100, 1000], [101, 1010], [102, 1020]]);
  assert.deepEqual([...m.keys()].slice(0, 70), Array.from({ length: 70 }, (_, i) => i));
  assert.deepEqual([...m.values()].slice(-3), [4970, 4980, 4990]);
  assert.deepEqual([...m.range(10, 47)], Array.from({ length: 37 }, (_, i) => [i + 10, (i + 10) * 10]));
  assert.deepEqual([...m.range(300, 290, { reverse: true })],
    Array.from({ length: 10 }, (_, i) => [300 - i, (300 - i) * 10]));
  const rest = m.range(0, 400);
  assert.deepEqual(rest.next().value, [0, 0]);
  for (const k of [...m.keys()]) m.delete(k);   // the rest of its batch is gone now
  assert.ok(rest.next().done);
});

test('PList against Array under random operations', () => {
  const r = rng(7);
  const Obj = heap.defineClass('t.coll.Item', { n: 'i32' });
  const objs = [new Obj({ n: 3 })];
  const l = new uniheap.PList(heap, [1, 'two']);
  const model = [1, 'two'];
  for (let i = 0; i < 1500; i++) {
    const op = r();
    const v = valueOf(r, objs);
    if (op < 0.35) {
      assert.equal(l.push(v), model.push(v));
    } else if (op < 0.45 && model.length) {
      assertSameValue(l.pop(), model.pop(), 'pop');
    } else if (op < 0.55) {
      const at = Math.floor(r() * (model.length + 1));
      l.insert(at, v);
      model.splice(at, 0, v);
    } else if (op < 0.65 && model.length) {
      const at = Math.floor(r() * model.length);
      assertSameValue(l.removeAt(at), model.splice(at, 1)[0], 'removeAt');
    } else if (op < 0.8 && model.length) {
      const at = Math.floor(r() * model.length);
      l[at] = v;
      model[at] = v;
    } else if (model.length) {
      const at = Math.floor(r() * model.length);
      assertSameValue(l[at], model[at], `[${at}]`);
      assertSameValue(l.at(-1 - at), model.at(-1 - at), `at(${-1 - at})`);
    }
  }
  assert.equal(l.length, model.length);
  const all = l.toArray();
  model.forEach((v, i) => assertSameValue(all[i], v, `item ${i}`));
  assert.equal(l[model.length], undefined);
  assert.equal(l.at(model.length), undefined);
  assert.ok(0 in l);
  assert.ok(!(model.length in l));
  assert.throws(() => { l[model.length + 5] = 1; }, RangeError);
  assert.equal(l.shift(), model.shift());
  l.unshift('a', 'b');
  model.unshift('a', 'b');
  assert.deepEqual(l.toArray().slice(0, 3), model.slice(0, 3));
  assert.equal(l.indexOf(objs[0]), model.findIndex((x) => same(x, objs[0])));
  assert.equal(new uniheap.PList(heap).pop(), undefined);
});

test('PArray of every element type', () => {
  const cases = [
    ['i8', [-128, 127, 0]], ['i16', [-32768, 32767]], ['i32', [2 ** 31 - 1, -(2 ** 31)]],
    ['i64', [Number.MAX_SAFE_INTEGER, -1]], ['f32', [0.5, -1.25]], ['f64', [Math.E, -0]],
    ['bool', [true, false]], ['string', ['a', '', null, '✓']],
    ['bytes', [Buffer.from('x'), null]],
  ];
  for (const [t, values] of cases) {
    const a = new uniheap.PArray(heap, t, values);
    assert.equal(a.elemType, t);
    assert.equal(a.length, values.length);
    values.forEach((v, i) => assert.deepEqual(a[i], v, `${t}[${i}]`));
    a[0] = values[1];
    assert.deepEqual(a.at(0), values[1]);
  }
  const z = new uniheap.PArray(heap, 'i32', 4);
  assert.deepEqual(z.toArray(), [0, 0, 0, 0]);
  assert.throws(() => { z[4] = 1; }, RangeError);
  assert.throws(() => { z[0] = 2 ** 31; }, uniheap.ValueRangeError);
  assert.throws(() => { z[0] = 'x'; }, TypeError);
  assert.throws(() => new uniheap.PArray(heap, 'i128', 1), TypeError);
  const R = heap.defineClass('t.coll.R', { n: 'i32' });
  const refs = new uniheap.PArray(heap, 'ref', 2);
  refs[1] = new R({ n: 9 });
  assert.equal(refs[0], null);
  assert.equal(refs[1].n, 9);
});

test('roots behave like a Map', () => {
  const R = heap.defineClass('t.coll.Root', { n: 'i32' });
  const before = heap.roots.size;
  const a = new R({ n: 1 });
  assert.equal(heap.roots.set('t.coll.a', a), heap.roots);
  heap.roots.set('t.coll.m', new uniheap.PMap(heap));
  assert.equal(heap.roots.size, before + 2);
  assert.ok(heap.roots.has('t.coll.a'));
  assert.equal(heap.roots.get('t.coll.a').n, 1);
  assert.ok([...heap.roots.keys()].includes('t.coll.m'));
  assert.ok(new Map(heap.roots).get('t.coll.m') instanceof uniheap.PMap);
  assert.equal(heap.roots.delete('t.coll.a'), true);
  assert.equal(heap.roots.delete('t.coll.a'), false);
  assert.equal(heap.roots.get('t.coll.a'), undefined);
});

test('bytes values of every size come back as Buffers of their own', () => {
  // Up to 64 KiB they pass through the addon's bytes buffer; beyond, as a Buffer.
  const m = new uniheap.PMap(heap);
  const B = heap.defineClass('test.BytesHolder', { data: 'bytes' });
  const sizes = [0, 1, 100, 65536, 65537, 200000];
  for (const n of sizes) {
    const v = Buffer.alloc(n);
    for (let i = 0; i < n; i++) v[i] = (i * 31 + n) & 0xff;
    m.set(`k${n}`, v);
    const o = new B({ data: v });
    const a = m.get(`k${n}`);
    const b = m.get(`k${n}`);
    assert.ok(Buffer.isBuffer(a));
    assert.deepEqual(a, v);
    assert.deepEqual(o.data, v);
    assert.equal(m.has(`k${n}`), true);
    if (n > 0) {
      a[0] ^= 0xff;	// a copy: neither the heap nor another read changes
      assert.deepEqual(b, v);
      assert.deepEqual(m.get(`k${n}`), v);
    }
  }
  assert.equal(m.has('absent'), false);
  assert.equal(m.get('absent'), undefined);
});

test('a proxy made from the class id in an object\'s header is the data type that made it', () => {
  const made = [
    [new uniheap.PMap(heap), uniheap.PMap],
    [new uniheap.PSortedMap(heap), uniheap.PSortedMap],
    [new uniheap.PList(heap), uniheap.PList],
    [new uniheap.PArray(heap, 'i64', 1), uniheap.PArray],
  ];
  for (const [c, C] of made) {
    const again = heap.proxy(c.$ref);
    assert.equal(again.constructor, C);
    assert.equal(again.$classId, c.$classId);
    assert.ok(again.$equals(c));
  }
  const l = new uniheap.PList(heap, ['s', Buffer.from([1, 2])]);
  assert.equal(l[0], 's');
  assert.deepEqual(l[1], Buffer.from([1, 2]));
});
