'use strict';
// Rewrites every field of the t.one.Rec at root t.one.rec in one block per
// step until the file STOP exists: step i sets a = b = c = i, name =
// text(i), data = bytes(i) (test/fields_commit.test.js), so a reader can
// tell one commit's fields from a mix of two. Says "writing" on stdout
// once the first step is in, and the number of steps on its last line.
const fs = require('node:fs');
const uniheap = require('../..');

const [stop] = process.argv.slice(2);
if (!stop) {	// run on its own (e.g. picked up by a test runner): nothing to stop it
  process.stderr.write('usage: record_writer.js STOP (test/fields_commit.test.js starts it)\n');
  process.exit(2);
}
const heap = uniheap.connect();
heap.defineClass('t.one.Rec', { a: 'i64', name: 'string', b: 'i32', data: 'bytes', c: 'f64' });
const rec = heap.roots.get('t.one.rec');
let n = 1;
for (;;) {	// bound: the test creates STOP after reading for a while
  const i = n;
  heap.atomic(() => {
    rec.a = i;
    rec.name = `v${i}`;
    rec.b = i;
    rec.data = Buffer.from(`d${i}`);
    rec.c = i;
  });
  if (n++ === 1) process.stdout.write('writing\n');
  if (n % 64 === 0 && fs.existsSync(stop)) break;
}
heap.close();
process.stdout.write(`${n - 1}\n`);
