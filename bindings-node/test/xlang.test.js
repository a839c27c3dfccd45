'use strict';
// Node with C and Python on one heap. C -> Node: tests/c/prog_py_xlang
// creates classes and objects Node never declared; Node reads them through
// generic proxies, updates them, and C checks the updates ("verify").
// Node -> C: Node creates what prog_py_xlang "check-py" checks. Both ways
// goes a hash map of string and bytes values of 0 to 129 bytes (kept in
// their entries up to 128 bytes, as objects beyond). Node and Python: one
// class declared in both with one layout is one class, objects pass both
// ways; a mismatch is ClassMismatchError and changes nothing.
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, runProg, runPython } = require('./helpers');

let d;
let heap;
test.beforeEach(async () => {
  d = await new HeapD().start();
  heap = uniheap.connect({ socket: d.sock });
});
test.afterEach(async () => {
  heap?.close();
  await d.destroy();
});

const LABELS = ['point-0', 'pünkt ✓', ''];

// The hash map of short and long values prog_py_xlang makes ("xlang.inline",
// create) and checks ("pyx.inline", check-py): for n in INL_LENS, "s<n>" ->
// inlText(n), "b<n>" -> inlBytes(n); a map keeps those of up to 128 bytes
// in their entries, the 129-byte ones as objects.
const INL_LENS = [0, 1, 128, 129];
const inlText = (n) => 'é'.repeat(n >> 1) + (n % 2 ? 'x' : '');
const inlBytes = (n) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) % 256));
const inlEntries = () => INL_LENS.flatMap((n) => [[`s${n}`, inlText(n)], [`b${n}`, inlBytes(n)]]);

test('C objects through generic proxies, updated from Node, checked by C', () => {
  let r = runProg('prog_py_xlang', 'create', d.sock);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const p0 = heap.roots.get('xlang.points');
  assert.equal(p0.$className, 'xlang.Point');
  const points = [];
  for (let p = p0; p !== null; p = p.next) points.push(p);
  assert.equal(points.length, 3);
  points.forEach((p, i) => {
    assert.deepEqual([p.x, p.y, p.w, p.label], [i + 1, -10 * (i + 1), 1.5 * (i + 1), LABELS[i]]);
  });
  const kinds = heap.roots.get('xlang.kinds');
  assert.deepEqual([kinds.flag, kinds.tiny, kinds.small, kinds.mid, kinds.ratio],
    [true, -128, 32767, -(2 ** 31), 0.5]);
  assert.throws(() => kinds.big, RangeError);
  assert.equal(kinds.$getBigInt('big'), 2n ** 63n - 1n);
  assert.deepEqual([...kinds.raw], [0, 1, 255, 0]);
  const index = heap.roots.get('xlang.index');
  assert.ok(index instanceof uniheap.PMap);
  assert.ok(index.get('origin').$equals(p0));
  assert.deepEqual([index.get('count'), index.get('name'), index.get('ratio'), index.get('yes')],
    [3, 'points', 0.25, true]);
  // Short and long string and bytes values C put with uh_map_put_bytes, by
  // get and by iteration.
  const inl = heap.roots.get('xlang.inline');
  for (const [k, v] of inlEntries()) assert.deepEqual(inl.get(k), v, k);
  assert.deepEqual(new Map(inl), new Map(inlEntries()));

  heap.atomic(() => {
    for (const p of points) {
      p.x += 100;
      p.w *= 2;
      p.label += '/py';
    }
    points[2].next = points[0];
    kinds.flag = false;
    kinds.tiny = 127;
    kinds.mid = 2 ** 31 - 1;
    kinds.ratio = -2.25;
    kinds.raw = Buffer.from('py\0bytes');
    kinds.big = -(2n ** 63n);
    index.set('count', 4);
    index.set('py', 'from python');
    index.delete('yes');
    assert.throws(() => { kinds.small = 32768; }, RangeError);	// C's field types
    assert.throws(() => { kinds.raw = 'not bytes'; }, TypeError);
  });
  r = runProg('prog_py_xlang', 'verify', d.sock);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, / 0 failed/);
});

test('what Node creates, C reads (prog_py_xlang check-py)', () => {
  class Person extends uniheap.PObject {
    static className = 'pyx.Person';
    static fields = {
      name: 'string', age: 'i32', score: 'f64', active: 'bool', tag: 'bytes', friend: 'ref',
      level: 'i8', rank: 'i16', weight: 'f32', id: 'i64',
    };
  }
  heap.atomic(() => {
    const alice = new Person(heap, {
      name: 'Alice', age: 30, score: 97.5, active: true, tag: Buffer.from([0, 65, 0]),
      level: -5, rank: 1000, weight: 0.5, id: 2 ** 40,
    });
    const bob = new Person(heap, {
      name: 'Bøb 🐍', age: 40, score: -1.25, active: false, tag: Buffer.alloc(0),
      friend: alice, level: 127, rank: -32768, weight: -2.0, id: -1,
    });
    alice.friend = bob;
    heap.roots.set('pyx.alice', alice);
    heap.roots.set('pyx.map', new uniheap.PMap(heap, Object.entries({
      alice, bob, n: 42, pi: 3.5, s: 'text ✓', b: Buffer.from([0, 255]), t: true, none: null,
    })));
    const imap = new uniheap.PMap(heap, undefined, { key: 'int' });
    for (let i = -5; i < 100; i++) imap.set(i, i * i);
    heap.roots.set('pyx.imap', imap);
    const smap = new uniheap.PSortedMap(heap, undefined, { key: 'bytes' });
    for (const i of [...Array(50).keys()].sort(() => 0.5 - Math.random())) {
      smap.set(Buffer.from(`k${String(i).padStart(3, '0')}`), i);
    }
    heap.roots.set('pyx.smap', smap);
    heap.roots.set('pyx.list', new uniheap.PList(heap, [1, 'two', uniheap.f64(3), null, alice]));
    heap.roots.set('pyx.arr', new uniheap.PArray(heap, 'i32', [0, -1, 2, -3, 4]));
    heap.roots.set('pyx.inline', new uniheap.PMap(heap, inlEntries()));
  });
  const r = runProg('prog_py_xlang', 'check-py', d.sock);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /check-py: \d+ passed, 0 failed/);
  assert.equal(heap.roots.get('pyx.list').at(2), 3);
});

test('one class declared in Node and Python is one class; objects pass both ways', () => {
  const Account = heap.defineClass('t.x.Account', { owner: 'string', balance: 'i64', tags: 'ref:PList' });
  const a = new Account({ owner: 'ada', balance: 100, tags: new uniheap.PList(heap, ['x']) });
  heap.roots.set('t.x.ada', a);
  const py = runPython(`
import uniheap
class Account(uniheap.PObject, name="t.x.Account"):
    owner = uniheap.string()
    balance = uniheap.i64()
    tags = uniheap.ref(uniheap.PList)
with uniheap.connect() as h:
    a = h.roots["t.x.ada"]
    assert type(a) is Account, type(a)
    assert (a.owner, a.balance, list(a.tags)) == ("ada", 100, ["x"])
    with h.atomic():
        a.balance += 23
        a.tags.append("from python")
        h.roots["t.x.bob"] = Account(h, owner="bob", balance=-7)
print("ok")
`, d);
  assert.equal(py.status, 0, py.stderr);
  assert.equal(a.balance, 123);
  assert.deepEqual(a.tags.toArray(), ['x', 'from python']);
  const bob = heap.roots.get('t.x.bob');
  assert.ok(bob instanceof Account);
  assert.deepEqual([bob.owner, bob.balance], ['bob', -7]);
  assert.equal(heap.classes().filter((c) => c.name === 't.x.Account').length, 1);
});

test('records with inline fields: Node writes, Python reads and writes, Node reads', () => {
  const Rec = heap.defineClass('t.x.InlineRec', {
    key: 'i64', f0: 'bytes:100', f1: 'bytes:100', name: 'string:16',
  });
  heap.roots.set('t.x.rec', new Rec({
    key: 1, f0: Buffer.alloc(100, 0x41), f1: Buffer.from('short'), name: 'nøde',
  }));
  const py = runPython(`
import uniheap
class Rec(uniheap.PObject, name="t.x.InlineRec"):
    key = uniheap.i64()
    f0 = uniheap.bytes_(max=100)
    f1 = uniheap.bytes_(max=100)
    name = uniheap.string(max=16)
with uniheap.connect() as h:
    r = h.roots["t.x.rec"]
    assert type(r) is Rec, type(r)
    assert uniheap.asdict(r) == {"key": 1, "f0": b"A" * 100, "f1": b"short", "name": "nøde"}
    r.f1 = b"from python"
    try:
        r.f0 = b"x" * 101
        raise SystemExit("a value past the capacity was accepted")
    except ValueError as e:
        assert "f0" in str(e) and "100" in str(e) and "101" in str(e), str(e)
    h.roots["t.x.rec2"] = Rec(h, key=2, f0=b"py", name="pythön")
print("ok")
`, d);
  assert.equal(py.status, 0, py.stderr);
  const r = heap.roots.get('t.x.rec');
  assert.deepEqual(r.f1, Buffer.from('from python'));
  assert.deepEqual(r.f0, Buffer.alloc(100, 0x41));
  const r2 = heap.roots.get('t.x.rec2');
  assert.ok(r2 instanceof Rec);
  assert.deepEqual(r2.$fields(), { key: 2, f0: Buffer.from('py'), f1: Buffer.alloc(0), name: 'pythön' });
});

test('a layout mismatch is ClassMismatchError naming the field; the heap is unchanged', () => {
  const py = runPython(`
import uniheap
class Point(uniheap.PObject, name="t.x.Point"):
    x = uniheap.i64()
    y = uniheap.i64()
with uniheap.connect() as h:
    h.roots["t.x.p"] = Point(h, x=1, y=2)
`, d);
  assert.equal(py.status, 0, py.stderr);
  const before = JSON.stringify(heap.classes());
  assert.throws(() => heap.defineClass('t.x.Point', { x: 'i64', y: 'i32' }),
    (e) => e instanceof uniheap.ClassMismatchError && e.code === 'UH_ECLASSMISMATCH' &&
      /\by\b/.test(e.message));
  assert.equal(JSON.stringify(heap.classes()), before);
  const p = heap.roots.get('t.x.p');
  assert.deepEqual([p.x, p.y], [1, 2]);	// still readable, generically
});
