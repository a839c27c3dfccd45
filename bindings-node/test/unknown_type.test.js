'use strict';
// A value type this binding does not know (a newer libuniheap's, or
// damage) raises an error naming it; it never reads as null, which is a
// stored null. The list is made by tests/c/prog_forge_type.c, its first
// element's type forged in place.
const test = require('node:test');
const assert = require('node:assert/strict');
const uniheap = require('..');
const { HeapD, runProg } = require('./helpers');

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

for (const forged of [99, 0]) {
  test(`an element of value type ${forged} raises, its neighbour reads`, () => {
    const r = runProg('prog_forge_type', d.sock, 'forged.list', String(forged));
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const list = heap.roots.get('forged.list');
    const unknown = new RegExp(`value type ${forged} is not one this binding knows: ` +
      'upgrade the Node binding');
    assert.throws(() => list.at(0), (e) => e instanceof uniheap.UniheapError &&
      unknown.test(e.message));
    assert.throws(() => [...list], unknown);
    assert.equal(list.at(1), 2);
    assert.equal(list.length, 2);
  });
}
