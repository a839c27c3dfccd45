'use strict';
// Persistent classes: every field type and its boundaries, the i64
// number/bigint rule, refs and cycles, both declaration forms, generic
// proxies, util.inspect, references as bigints.
const test = require('node:test');
const assert = require('node:assert/strict');
const { inspect } = require('node:util');
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

const ALL = {
  flag: 'bool', tiny: 'i8', small: 'i16', mid: 'i32', big: 'i64', ratio: 'f32', wide: 'f64',
  name: 'string', raw: 'bytes', other: 'ref',
};

test('every field type round-trips its boundaries', () => {
  const K = heap.defineClass('t.obj.Kinds', ALL);
  const k = new K();
  const cases = {
    flag: [true, false],
    tiny: [-128, 127, 0],
    small: [-32768, 32767],
    mid: [-(2 ** 31), 2 ** 31 - 1],
    big: [Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 0, -1, 2 ** 32, -(2 ** 32), 2 ** 32 - 1],
    ratio: [0.5, -2, 3.25],
    wide: [Math.PI, -0, Infinity, -Infinity, Number.MIN_VALUE, Number.MAX_VALUE],
    name: ['', 'ascii', 'pünkt ✓ 🐍', 'x'.repeat(5000), null],
    raw: [Buffer.alloc(0), Buffer.from([0, 1, 255, 0]), null],
  };
  for (const [f, values] of Object.entries(cases)) {
    for (const v of values) {
      k[f] = v;
      assert.deepEqual(k[f], v, `${f} = ${inspect(v)}`);
      heap.atomic(() => assert.deepEqual(k[f], v, `${f} in a block`));
    }
  }
  k.wide = NaN;
  assert.ok(Number.isNaN(k.wide));
  k.ratio = 0.1;
  assert.equal(k.ratio, Math.fround(0.1));
  k.flag = 1;
  assert.equal(k.flag, true);
  k.raw = new Uint8Array([7, 8]);
  assert.ok(Buffer.isBuffer(k.raw));
  assert.deepEqual([...k.raw], [7, 8]);
});

test('i64: a number when safe, RangeError beyond, bigint accessor for the full range', () => {
  const K = heap.defineClass('t.obj.Big', { v: 'i64' });
  const k = new K();
  for (const b of [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n, -(2n ** 53n), 2n ** 53n - 1n]) {
    k.v = b;
    assert.equal(k.$getBigInt('v'), b);
    const safe = b <= BigInt(Number.MAX_SAFE_INTEGER) && b >= BigInt(Number.MIN_SAFE_INTEGER);
    if (safe) {
      assert.equal(k.v, Number(b));
    } else {
      assert.throws(() => k.v, (e) => e instanceof RangeError && /\$getBigInt\("v"\)/.test(e.message));
      assert.throws(() => heap.atomic(() => k.v), RangeError);
    }
  }
  k.v = 2 ** 62;		// an exact double beyond 2^53 is accepted
  assert.equal(k.$getBigInt('v'), 2n ** 62n);
  assert.throws(() => { k.v = 2 ** 63; }, RangeError);
  assert.throws(() => { k.v = 2n ** 63n; }, RangeError);
  assert.throws(() => { k.v = 1.5; }, RangeError);
  assert.throws(() => { k.v = '1'; }, TypeError);
});

test('out-of-range values name the field and leave it unchanged', () => {
  const K = heap.defineClass('t.obj.Small', { a: 'i8', b: 'i16', c: 'i32', d: 'bool' });
  const k = new K({ a: 1, b: 2, c: 3 });
  for (const [f, v] of [['a', 128], ['a', -129], ['b', 32768], ['c', 2 ** 31], ['d', 2], ['a', 300n]]) {
    assert.throws(() => { k[f] = v; }, (e) => e instanceof RangeError && e.message.includes(`t.obj.Small.${f}`));
  }
  assert.deepEqual([k.a, k.b, k.c, k.d], [1, 2, 3, false]);
});

test('refs, typed refs and cycles', () => {
  const Node = heap.defineClass('t.obj.Node', { value: 'i64', next: 'ref:t.obj.Node', any: 'ref' });
  const a = new Node({ value: 1 });
  const b = new Node({ value: 2, next: a });
  a.next = b;		// a cycle
  assert.ok(a.next.next.$equals(a));
  assert.equal(a.next.next.next.value, 2);
  a.any = new uniheap.PList(heap, [1, 2]);
  assert.ok(a.any instanceof uniheap.PList);
  a.any = b;
  assert.ok(a.any.$equals(b));
  a.any = null;
  assert.equal(a.any, null);
  const Other = heap.defineClass('t.obj.Other', { x: 'i32' });
  assert.throws(() => { a.next = new Other(); }, uniheap.TypeMismatchError);
  assert.throws(() => { a.next = 5; }, TypeError);
  const Holder = heap.defineClass('t.obj.Holder', { items: 'ref:PList', node: { type: 'ref', target: Node } });
  const h = new Holder({ items: new uniheap.PList(heap), node: a });
  assert.ok(h.node.$equals(a));
  assert.throws(() => { h.items = new uniheap.PMap(heap); }, uniheap.TypeMismatchError);
});

test('class-based declarations with inheritance and methods', () => {
  class Shape extends uniheap.PObject {
    static className = 't.obj.Shape';
    static fields = { x: 'f64', y: 'f64' };
    move(dx, dy) {
      this.x += dx;
      this.y += dy;
    }
  }
  class Circle extends Shape {
    static className = 't.obj.Circle';
    static fields = { r: 'f64' };
    area() {
      return Math.PI * this.r * this.r;
    }
  }
  const c = new Circle(heap, { x: 1, y: 2, r: 3 });
  c.move(1, 1);
  assert.deepEqual([c.x, c.y, c.r], [2, 3, 3]);
  assert.equal(c.area(), Math.PI * 9);
  heap.roots.set('t.obj.circle', c);
  const again = heap.roots.get('t.obj.circle');
  assert.ok(again instanceof Circle && again instanceof Shape);
  assert.equal(again.$className, 't.obj.Circle');
  const layout = heap.classes().find((cl) => cl.name === 't.obj.Circle');
  assert.deepEqual(layout.fields.map((f) => [f.name, f.type]), [['x', 'f64'], ['y', 'f64'], ['r', 'f64']]);
});

test('references as bigints, proxies compared with $equals', () => {
  const P = heap.defineClass('t.obj.P', { n: 'i32' });
  const p = new P({ n: 7 });
  const q = heap.proxy(p.$ref);
  assert.ok(q.$equals(p));
  assert.equal(q.n, 7);
  assert.equal(typeof p.$ref, 'bigint');
  assert.equal(p.$offset, Number(p.$ref & 0xffffffffffffn));
  assert.equal(p.$generation, Number(p.$ref >> 48n));
  assert.ok(p.$heap === heap);
  assert.equal(p.$classId, heap.classes().find((c) => c.name === 't.obj.P').id);
});

test('generic proxies for classes this thread never declared', () => {
  // Another process declares the class and publishes an object.
  const script = `
    const u = require(${JSON.stringify(require.resolve('..'))});
    const h = u.connect();
    const G = h.defineClass('t.obj.Remote', { label: 'string', count: 'i32', peer: 'ref' });
    const g = new G({ label: 'from afar', count: 41 });
    g.peer = g;
    h.roots.set('t.obj.remote', g);
    h.close();`;
  const r = require('node:child_process').spawnSync(process.execPath, ['-e', script],
    { env: { ...process.env, UNIHEAP_SOCKET: d.sock }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const g = heap.roots.get('t.obj.remote');
  assert.ok(g instanceof uniheap.PObject);
  assert.equal(g.$className, 't.obj.Remote');
  assert.equal(g.label, 'from afar');
  g.count += 1;
  assert.equal(g.count, 42);
  assert.ok(g.peer.$equals(g));
  assert.equal(g.$get('count'), 42);
  const text = inspect(g);
  assert.match(text, /t\.obj\.Remote @\d+/);
  assert.match(text, /label: 'from afar'/);
  assert.match(text, /count: 42/);
  assert.throws(() => new g.constructor(heap, {}), TypeError);
});

test('util.inspect of objects and collections', () => {
  const I = heap.defineClass('t.obj.Inspect', { a: 'i32', s: 'string' });
  const o = new I({ a: 5, s: 'hi' });
  assert.equal(inspect(o), `t.obj.Inspect @${o.$offset} { a: 5, s: 'hi' }`);
  const m = new uniheap.PMap(heap, [['k', 1]]);
  assert.match(inspect(m), /^PMap\(1\) @\d+ \{ 'k' => 1 \}$/);
  const l = new uniheap.PList(heap, [1, 'x', o]);
  assert.match(inspect(l), /^PList\(3\) @\d+ \[ 1, 'x', <t\.obj\.Inspect @\d+> \]$/);
});
