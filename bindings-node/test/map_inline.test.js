'use strict';
// String and bytes values a PMap keeps in the key's entry (up to 128
// bytes, a string's as UTF-8) and as objects of their own (longer): round
// trips for every key kind, in and out of blocks; replacing a value across
// the limit both ways; delete and take giving back the old value; an
// iteration that replaces each value as it goes; views; a freed map.
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, useHeap } = require('./helpers');

const d = new HeapD();
let heap;
useHeap(d, (h) => { heap = h; });

// Lengths in bytes: kept in the entry (0, 1, 128) and objects (129, 5000).
const LENGTHS = [0, 1, 128, 129, 5000];
const LIMIT = 128;

/** A string of n UTF-8 bytes, mostly 2-byte characters (so that the limit
 * is in bytes, not characters), tagged by tag. */
function text(n, tag = 0) {
  const head = String.fromCharCode(0x61 + (tag % 26));
  if (n === 0) return '';
  const s = head + 'é'.repeat((n - 1) >> 1) + ((n - 1) % 2 ? 'x' : '');
  assert.equal(Buffer.byteLength(s), n);
  return s;
}

/** n bytes, NULs and 0xff among them, tagged by tag. */
function bytes(n, tag = 0) {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + tag) & 0xff;
  return b;
}

function keysOf(kind) {
  if (kind === 'string') return (i) => `k${i}`;
  if (kind === 'bytes') return (i) => Buffer.from([i, 0, 0xff]);
  return (i) => i - 3;
}

/** Where a bytes value lies: true when in the key's entry, false when it
 * is a bytes object's payload (right after its 16-byte header). */
function inEntry(m, k) {
  const v = m.view(k);
  const holder = Number(v.$ref & 0xffffffffffffn);
  return v.byteOffset !== holder + 16;
}

test('values of 0, 1, 128, 129 and 5000 bytes round-trip by every key kind', () => {
  for (const kind of ['string', 'bytes', 'int']) {
    const key = keysOf(kind);
    const m = new uniheap.PMap(heap, null, { key: kind });
    LENGTHS.forEach((n, i) => {
      m.set(key(2 * i), text(n, i));
      m.set(key(2 * i + 1), bytes(n, i));
    });
    assert.equal(m.size, 2 * LENGTHS.length);
    LENGTHS.forEach((n, i) => {
      assert.equal(m.get(key(2 * i)), text(n, i), `${kind} string of ${n}`);
      const b = m.get(key(2 * i + 1));
      assert.ok(Buffer.isBuffer(b) && b.equals(bytes(n, i)), `${kind} bytes of ${n}`);
      assert.equal(m.has(key(2 * i + 1)), true);
      assert.equal(inEntry(m, key(2 * i + 1)), n <= LIMIT, `where ${n} bytes lie`);
    });
    // Iteration gives the same values.
    let n = 0;
    for (const [k, v] of m) {
      assert.deepEqual(v, m.get(k));
      n++;
    }
    assert.equal(n, 2 * LENGTHS.length);
    m.check();
  }
});

test('inside a block: set, read back, roll back, commit', () => {
  const m = new uniheap.PMap(heap, [['s', 'before'], ['b', bytes(LIMIT, 1)]]);
  assert.throws(() => heap.atomic(() => {
    m.set('s', text(LIMIT, 2));
    m.set('b', bytes(LIMIT + 1, 2));
    m.set('new', bytes(1, 2));
    assert.equal(m.get('s'), text(LIMIT, 2));
    assert.ok(m.get('b').equals(bytes(LIMIT + 1, 2)));
    assert.deepEqual([...m.keys()].sort(), ['b', 'new', 's']);
    throw new Error('roll back');
  }), /roll back/);
  assert.equal(m.get('s'), 'before');
  assert.ok(m.get('b').equals(bytes(LIMIT, 1)));
  assert.equal(m.has('new'), false);
  heap.atomic(() => {
    m.set('s', text(1, 3));
    m.set('s', text(5000, 3));	// replaced twice in one block
    m.set('b', bytes(0));
  });
  assert.equal(m.get('s'), text(5000, 3));
  assert.deepEqual(m.get('b'), Buffer.alloc(0));
  m.check();
});

test('a value replaced inline -> object -> inline reads right each time; old views go invalid', () => {
  const m = new uniheap.PMap(heap);
  const steps = [1, LIMIT, LIMIT + 1, 5000, 0, LIMIT, 129, 1];
  let last;
  steps.forEach((n, i) => {
    m.set('b', bytes(n, i));
    m.set('s', text(n, i));
    assert.ok(m.get('b').equals(bytes(n, i)), `bytes step ${i} (${n})`);
    assert.equal(m.get('s'), text(n, i), `string step ${i} (${n})`);
    assert.equal(inEntry(m, 'b'), n <= LIMIT);
    if (last) assert.equal(last.valid, false, `the view before step ${i}`);
    last = m.view('b');
    assert.ok(last.valid && Buffer.from(last).equals(bytes(n, i)));
  });
  assert.equal(m.size, 2);
  m.check();
});

test('delete and take give back the old value, in and out of blocks', () => {
  const m = new uniheap.PMap(heap, null, { key: 'int' });
  LENGTHS.forEach((n, i) => {
    m.set(i, text(n, i));
    m.set(100 + i, bytes(n, i));
  });
  LENGTHS.forEach((n, i) => {
    assert.equal(m.take(i), text(n, i), `take string of ${n}`);
    const v = m.view(100 + i);
    assert.ok(m.take(100 + i).equals(bytes(n, i)), `take bytes of ${n}`);
    assert.equal(v.valid, false);
    assert.equal(m.take(i), undefined);
  });
  assert.equal(m.size, 0);
  m.set(1, 'short');
  m.set(2, bytes(3));
  assert.throws(() => heap.atomic(() => {
    assert.equal(m.take(1), 'short');
    assert.equal(m.delete(2), true);
    assert.equal(m.get(1), undefined);
    throw new Error('roll back');
  }), /roll back/);
  assert.equal(m.get(1), 'short');
  assert.deepEqual(heap.atomic(() => [m.take(1), m.take(2)]), ['short', bytes(3)]);
  assert.equal(m.delete(2), false);
  m.check();
});

test('replacing each value while iterating visits each key once', () => {
  const N = 300;
  const m = new uniheap.PMap(heap, null, { key: 'int' });
  heap.atomic(() => {
    for (let i = 0; i < N; i++) m.set(i, i % 2 ? bytes(i % 129, i) : text(i % 129, i));
  });
  // Each pass gives each value a new length: inline to inline, inline to
  // an object, an object back to inline.
  for (const grow of [7, 200, -150]) {
    const seen = new Set();
    for (const [k, v] of m) {
      assert.ok(!seen.has(k), `key ${k} visited twice`);
      seen.add(k);
      const n = Math.max(0, Buffer.byteLength(v) + grow);
      m.set(k, k % 2 ? bytes(n, k) : text(n, k));
    }
    assert.equal(seen.size, N);
  }
  for (let i = 0; i < N; i++) {
    const n = Math.max(0, Math.max(0, (i % 129) + 7 + 200) - 150);
    const want = i % 2 ? bytes(n, i) : text(n, i);
    assert.deepEqual(m.get(i), want, `key ${i}`);
  }
  // keys(), values() and a block do the same.
  heap.atomic(() => {
    const seen = new Set();
    for (const k of m.keys()) {
      assert.ok(!seen.has(k));
      seen.add(k);
      m.set(k, 'x');
    }
    assert.equal(seen.size, N);
  });
  assert.deepEqual([...m.values()], Array(N).fill('x'));
  m.check();
});

test('a view of a value in an entry: bytes in place, valid until the key is set or removed', () => {
  const m = new uniheap.PMap(heap, [['a', bytes(LIMIT, 9)], ['t', 'text']]);
  const v = m.view('a');
  assert.ok(v instanceof uniheap.BytesView && v.valid);
  assert.equal(v.length, LIMIT);
  assert.ok(Buffer.from(v).equals(bytes(LIMIT, 9)));
  assert.equal(m.view('a').byteOffset, v.byteOffset);	// no copy: the same bytes
  assert.throws(() => m.view('t'), (e) => e instanceof TypeError &&
    e.message === 'view(): the value is not bytes but string');
  m.set('a', bytes(LIMIT, 9));	// the same bytes, a new entry
  assert.equal(v.valid, false);
  const w = m.view('a');
  m.delete('a');
  assert.equal(w.valid, false);
});

test('a freed map raises, never crashes', () => {
  const m = new uniheap.PMap(heap, [['s', 'short'], ['b', bytes(5)]]);
  heap.free(m);
  for (const fn of [() => m.get('s'), () => m.set('s', 'x'), () => m.set('b', bytes(200)),
    () => m.take('b'), () => [...m], () => m.view('b')]) {
    assert.throws(fn, uniheap.FreedObjectError);
  }
});
