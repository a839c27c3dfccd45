'use strict';
// The TypeScript declarations (index.d.ts) compile against a program that
// uses the whole API (test/types/usage.ts), with the strict compiler
// (test/types/tsconfig.json).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { PKG } = require('./helpers');

test('index.d.ts type-checks a program using the API', () => {
  const tsc = require.resolve('typescript/bin/tsc', { paths: [PKG] });
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(__dirname, 'types')],
    { encoding: 'utf8', cwd: PKG });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
