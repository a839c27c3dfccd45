'use strict';
// Replaces one bytes value in a tight loop until the file STOP exists:
// mode "field" the field `data` of the object at root t.race.rec, "map"
// the value of key "k" of the PMap at root t.race.map, "smap" the value of
// key "k" of the PSortedMap at root t.race.smap, "list" element 1 of the
// PList at root t.race.list; "mapx" the value of key "k" of the PMap at
// root t.race.mapx, 100 and 200 bytes long in turn (a map keeps the first
// in the key's entry, the second as an object). Each value is copies of
// one byte (1 to 250), so a reader can tell a value written whole from
// anything else.
// Says "writing" on stdout once the first value is in, and the number of
// values written on its last line.
const fs = require('node:fs');
const uniheap = require('../..');

const [mode, stop] = process.argv.slice(2);
const heap = uniheap.connect();
heap.defineClass('t.race.Rec', { data: 'bytes', n: 'i64' });
const target = heap.roots.get(`t.race.${mode}`);
const put = {
  field: (v) => { target.data = v; },
  map: (v) => { target.set('k', v); },
  smap: (v) => { target.set('k', v); },
  list: (v) => { target.set(1, v); },
  mapx: (v) => { target.set('k', v); },
}[mode];
const length = (n) => (mode === 'mapx' && n % 2 ? 200 : 100);
let n = 0;
for (;;) {	// bound: the test creates STOP after reading for a while
  put(Buffer.alloc(length(n), 1 + (n % 250)));
  if (n++ === 0) process.stdout.write('writing\n');
  if (n % 64 === 0 && fs.existsSync(stop)) break;
}
heap.close();
process.stdout.write(`${n}\n`);
