'use strict';
// connect() waits for heapd: a client started before heapd connects once
// heapd comes up within the timeout; timeout 0 fails at once and a missing
// heapd fails after the timeout, with a DisconnectedError naming the socket
// and saying heapd is not running. Timings are checked from below and only
// generously from above (the machine may be loaded).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const uniheap = require('..');
const { HeapD, tempDir } = require('./helpers');

const GENEROUS_MS = 60000;
const PKG = path.resolve(__dirname, '..');

const notRunning = (sock) => (e) => e instanceof uniheap.DisconnectedError &&
  e.message.includes('heapd is not running') && e.message.includes(sock) &&
  e.message.includes('heapd --heap');

// connect() is synchronous, so the early client is another process.
const EARLY = `
const uniheap = require(process.argv[1]);
const heap = uniheap.connect({ socket: process.argv[2], timeout: Number(process.argv[3]) });
console.log('connected', heap.info().heapSize > 0);
heap.close();
`;

function exitOf(proc) {
  return new Promise((resolve) => proc.on('exit', (code, sig) => resolve(sig || code)));
}

test('a client started before heapd connects once heapd is up', async () => {
  const d = new HeapD();
  try {
    const child = spawn(process.execPath, ['-e', EARLY, PKG, d.sock, String(GENEROUS_MS)],
      { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b) => { out += b; });
    child.stderr.on('data', (b) => { out += b; });
    const exit = exitOf(child);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(child.exitCode, null, `the client gave up before heapd started: ${out}`);
    await d.start();
    assert.equal(await exit, 0, out);
    assert.match(out, /connected true/);
  } finally {
    await d.destroy();
  }
});

test('timeout 0 fails at once, a missing heapd after the timeout', () => {
  const dir = tempDir();
  try {
    const sock = path.join(dir, 'nobody.sock');
    let t0 = Date.now();
    assert.throws(() => uniheap.connect({ socket: sock, timeout: 0 }), notRunning(sock));
    assert.ok(Date.now() - t0 < GENEROUS_MS);
    t0 = Date.now();
    assert.throws(() => uniheap.connect({ socket: sock, timeout: 1000 }), notRunning(sock));
    const took = Date.now() - t0;
    assert.ok(took >= 950 && took < GENEROUS_MS, `took ${took} ms`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('timeout must be 0 or more milliseconds', () => {
  for (const bad of [-1, NaN, Infinity, '5']) {
    assert.throws(() => uniheap.connect({ socket: '/nonexistent/x.sock', timeout: bad }),
      RangeError);
  }
});
