'use strict';
// Another process's commits for test/wait.test.js: sets field FIELD of the
// object under root ROOT to VALUE, VALUE + 1, ... (COUNT values, one commit
// each, DELAY ms apart), after DELAY ms. Says "set N" on stdout after each.
const uniheap = require('../..');

const [root, field, value, count = '1', delay = '0'] = process.argv.slice(2);
if (!field) {	// run on its own (e.g. picked up by a test runner)
  process.stderr.write('usage: wait_writer.js ROOT FIELD VALUE [COUNT DELAY] (test/wait.test.js)\n');
  process.exit(2);
}
const heap = uniheap.connect();
const obj = heap.roots.get(root);
let i = 0;
function step() {
  obj[field] = Number(value) + i;
  process.stdout.write(`set ${Number(value) + i}\n`);
  if (++i < Number(count)) setTimeout(step, Number(delay));
  else heap.close();
}
setTimeout(step, Number(delay));
