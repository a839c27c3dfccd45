'use strict';
// Reads outside a block racing another process that replaces the value
// read: a bytes field, a PMap value (get; get and iteration with values
// either side of 128 bytes, kept in the entry or not), a PSortedMap value
// (get and iteration), a PList element. Replacing a string/bytes value
// frees the old one (or the map entry keeping it) in the same commit, so
// a reader may find the object it was copying gone; it must then read the
// value again, never fail. Every value read must be one the writer (or
// the test) wrote whole: 100 (or 200) copies of one byte.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const uniheap = require('..');
const { HeapD, useHeap, WORKERS, whileWriting, tempDir } = require('./helpers');

const READ_MS = 2000;

const d = new HeapD();
let heap;
let dir;
let Rec;
useHeap(d, (h) => {
  heap = h;
  dir = tempDir();
  Rec = heap.defineClass('t.race.Rec', { data: 'bytes', n: 'i64' });
}, () => fs.rmSync(dir, { recursive: true, force: true }));

/** A value written whole: 100 (or, where given, another number of)
 * copies of one byte. */
function checkValue(v, seen, lengths = [100]) {
  assert.ok(Buffer.isBuffer(v), `not a Buffer: ${v}`);
  assert.ok(lengths.includes(v.length), `a value of ${v.length} bytes`);
  for (const x of v) if (x !== v[0]) assert.fail(`a torn value: ${v.toString('hex')}`);
  seen.add(v[0]);
}

/** read(seen) for READ_MS while the writer of mode writes: no call may
 * throw, and more than one value must have been seen. */
async function race(mode, read) {
  const stop = path.join(dir, `stop-${mode}`);
  const errors = [];
  const seen = new Set();
  const reads = await whileWriting(d, path.join(WORKERS, 'replace_writer.js'), [mode, stop], stop,
    () => {
      try {
        read(seen);
      } catch (e) {
        errors.push(e);
      }
    }, READ_MS);
  assert.equal(errors.length, 0, `${errors.length} of ${reads} reads failed, the first with ` +
    `${errors[0]?.name}: ${errors[0]?.message}`);
  // Else the writer never got in between and the test proves nothing.
  assert.ok(seen.size > 1, `only ${seen.size} distinct values read`);
}

test('a bytes field replaced by another process reads whole, without error', async () => {
  const rec = new Rec({ data: Buffer.alloc(100, 0), n: 1 });
  heap.roots.set('t.race.field', rec);
  await race('field', (seen) => checkValue(rec.data, seen));
});

test('a PMap value replaced by another process reads whole, without error', async () => {
  const m = new uniheap.PMap(heap);
  m.set('k', Buffer.alloc(100, 0));
  heap.roots.set('t.race.map', m);
  await race('map', (seen) => {
    checkValue(m.get('k'), seen);
    assert.equal(m.has('k'), true);
  });
});

test('a PMap value replaced across 128 bytes reads whole, by get and by iteration', async () => {
  // The writer puts 100 bytes (kept in the key's entry) and 200 (an
  // object) in turn: each put frees the entry, or the object, being read.
  const m = new uniheap.PMap(heap);
  for (const k of ['a', 'k', 'z']) m.set(k, Buffer.alloc(100, 0));
  heap.roots.set('t.race.mapx', m);
  await race('mapx', (seen) => {
    checkValue(m.get('k'), seen, [100, 200]);
    const entries = [...m.entries()];
    assert.deepEqual(entries.map((kv) => kv[0]).sort(), ['a', 'k', 'z']);
    for (const kv of entries) checkValue(kv[1], seen, [100, 200]);
  });
});

test('a PSortedMap value replaced by another process reads whole, by get and by iteration', async () => {
  const m = new uniheap.PSortedMap(heap);
  m.set('a', Buffer.alloc(100, 0));
  m.set('k', Buffer.alloc(100, 0));
  m.set('z', Buffer.alloc(100, 0));
  heap.roots.set('t.race.smap', m);
  await race('smap', (seen) => {
    checkValue(m.get('k'), seen);
    const entries = [...m.entries()];
    assert.deepEqual(entries.map((kv) => kv[0]), ['a', 'k', 'z']);
    for (const kv of entries) checkValue(kv[1], seen);
  });
});

test('a PList element replaced by another process reads whole, without error', async () => {
  const l = new uniheap.PList(heap, [Buffer.alloc(100, 0), Buffer.alloc(100, 0)]);
  heap.roots.set('t.race.list', l);
  await race('list', (seen) => {
    checkValue(l.at(1), seen);
    const all = [...l];
    assert.equal(all.length, 2);
    for (const v of all) checkValue(v, seen);
  });
});
