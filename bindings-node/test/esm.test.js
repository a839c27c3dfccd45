'use strict';
// The ES module entry (lib/index.mjs) against the CommonJS one: the same
// names, the very same objects (one addon, one set of classes), and the
// package's "exports" map sends import and require to them.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');

const cjs = require('../lib/index.js');

test('lib/index.mjs exports exactly the names of lib/index.js, the same objects', async () => {
  const esm = await import('../lib/index.mjs');
  const names = Object.keys(esm).filter((n) => n !== 'default').sort();
  assert.deepStrictEqual(names, Object.keys(cjs).sort());
  for (const n of names) assert.strictEqual(esm[n], cjs[n], n);
  assert.strictEqual(esm.default, cjs);
});

test('package.json "exports" maps import to index.mjs and require to index.js', () => {
  const pkg = require('../package.json');
  const dot = pkg.exports['.'];
  assert.strictEqual(path.normalize(dot.import), path.normalize('./lib/index.mjs'));
  assert.strictEqual(path.normalize(dot.require), path.normalize('./lib/index.js'));
});
