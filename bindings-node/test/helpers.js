'use strict';
// Shared by the Node binding's tests: a private heapd per test file (or
// test) on a fresh heap in a new temporary folder (tmpfs when /dev/shm is
// there), started from the CMake build ($UNIHEAP_BUILD, else <repo>/build),
// and stopped by pid (SIGTERM, then SIGKILL) when the test ends, also when
// it fails. heapd runs under a tiny launcher that asks the kernel to
// SIGTERM it if this process dies, even by SIGKILL. Nothing is ever killed
// by name.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { spawn, spawnSync } = require('node:child_process');

const PKG = path.resolve(__dirname, '..');
const REPO = path.resolve(PKG, '..');
const BUILD = path.resolve(process.env.UNIHEAP_BUILD || path.join(REPO, 'build'));
const WORKERS = path.join(__dirname, 'workers');

function binary(name) {
  const p = name.startsWith('prog_') ? path.join(BUILD, 'tests', 'c', name) : path.join(BUILD, name);
  if (!fs.existsSync(p)) throw new Error(`${p} is missing: build the C part first (make)`);
  return p;
}

function tempBase() {
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK);
    return '/dev/shm';
  } catch {
    return os.tmpdir().length < 60 ? os.tmpdir() : '/tmp';
  }
}

function tempDir() {
  return fs.mkdtempSync(path.join(tempBase(), 'uniheap-node-'));
}

const LAUNCHER = [
  'import ctypes, os, signal, sys',
  'ppid = int(sys.argv[1])',
  'try:',
  '    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))',
  'except Exception:',
  '    pass',
  'if os.getppid() != ppid:',
  '    sys.exit(1)',
  'os.execv(sys.argv[2], sys.argv[2:])',
].join('\n');

const live = new Set();	// child processes started here, stopped at exit at the latest
process.on('exit', () => {
  for (const p of live) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
});

function track(proc) {
  live.add(proc);
  proc.on('exit', () => live.delete(proc));
  return proc;
}

function accepts(sock) {
  return new Promise((resolve) => {
    const c = net.connect(sock);
    c.on('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Wait for proc to exit (at most ms); its exit code, or null. */
function exited(proc, ms) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(null), ms);
    proc.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

/** Stop a process we started: sig, wait, then SIGKILL. */
async function stopProcess(proc, sig = 'SIGTERM', ms = 5000) {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill(sig);
  if ((await exited(proc, ms)) === null && proc.exitCode === null && proc.signalCode === null) {
    proc.kill('SIGKILL');
    await exited(proc, ms);
  }
}

/** A private heapd on DIR/heap.uh serving DIR/heapd.sock. start() creates
 * the heap when the file is missing and reopens it otherwise, so a
 * restart keeps the heap. */
class HeapD {
  constructor(dir = tempDir(), { size = '64M', durability = 'memory', createArgs = [], env = {} } = {}) {
    this.dir = dir;
    this.createArgs = createArgs;	// more --create options (--max-size)
    this.env = env;		// more environment for heapd (test hooks)
    this.heap = path.join(dir, 'heap.uh');
    this.sock = path.join(dir, 'heapd.sock');
    this.log = path.join(dir, 'heapd.log');
    this.size = size;
    this.durability = durability;
    this.proc = null;
  }

  async start(timeoutMs = 10000) {
    const argv = [binary('heapd'), '--heap', this.heap, '--socket', this.sock];
    if (!fs.existsSync(this.heap)) {
      // --max-size = --size: a test's heap keeps the size it asked for
      // (heapd's default lets it grow); createArgs may override it.
      argv.push('--create', '--size', this.size, '--max-size', this.size,
        '--durability', this.durability, ...this.createArgs);
    }
    const log = fs.openSync(this.log, 'a');
    this.proc = track(spawn('python3', ['-S', '-c', LAUNCHER, String(process.pid), ...argv],
      { stdio: ['ignore', log, log], env: { ...process.env, ...this.env } }));
    fs.closeSync(log);
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      if (this.proc.exitCode !== null) {
        throw new Error(`heapd exited with ${this.proc.exitCode} before serving\n${this.logTail()}`);
      }
      if (await accepts(this.sock)) return this;
      await sleep(10);
    }
    await this.stop();
    throw new Error(`heapd did not accept on ${this.sock} in time\n${this.logTail()}`);
  }

  async stop() {
    if (this.proc) await stopProcess(this.proc);
    this.proc = null;
  }

  async kill() {
    if (this.proc) await stopProcess(this.proc, 'SIGKILL');
    this.proc = null;
  }

  async restart() {
    await this.stop();
    return this.start();
  }

  /** Stop heapd and remove its folder. */
  async destroy() {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  heapctl(...args) {
    return spawnSync(binary('heapctl'), ['--socket', this.sock, ...args], { encoding: 'utf8' });
  }

  logTail(n = 3000) {
    try {
      return fs.readFileSync(this.log, 'utf8').slice(-n);
    } catch {
      return '';
    }
  }
}

/**
 * The heapd d and one heap connected to it for the tests of one file:
 * test.before starts d, connects and calls ready(heap) (the file keeps the
 * heap, defines its classes...); test.after closes the heap, destroys d,
 * then calls done() if given.
 */
function useHeap(d, ready, done) {
  const test = require('node:test');
  let heap;
  test.before(async () => {
    await d.start();
    heap = require('..').connect({ socket: d.sock });
    ready(heap);
  });
  test.after(async () => {
    heap?.close();
    await d.destroy();
    done?.();
  });
}

/** Environment for a child: the package on NODE_PATH, the heap's socket. */
function childEnv(heapd, extra = {}) {
  return {
    ...process.env,
    UNIHEAP_BUILD: BUILD,
    UNIHEAP_SOCKET: heapd.sock,
    PYTHONPATH: [path.join(REPO, 'bindings-python'), process.env.PYTHONPATH]
      .filter(Boolean).join(path.delimiter),
    ...extra,
  };
}

/** Run a program to its end: { status, stdout, stderr }. */
function run(cmd, args, env, timeout = 60000) {
  return spawnSync(cmd, args, { env, encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Run a Node script in a new process (spawned, never forked after a
 * connect) to its end. */
function runNode(script, args, heapd, extra) {
  return run(process.execPath, [script, ...args.map(String)], childEnv(heapd, extra));
}

/** Start a Node script in a new process; tracked, stopped at exit. */
function spawnNode(script, args, heapd, extra) {
  return track(spawn(process.execPath, [script, ...args.map(String)],
    { env: childEnv(heapd, extra), stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Collect a child's output; resolves { code, signal, stdout, stderr }. */
function finished(proc) {
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d) => { stdout += d; });
  proc.stderr?.on('data', (d) => { stderr += d; });
  return new Promise((resolve) => {
    proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * Run writer (a Node script on heapd d that prints "writing" once it has
 * started, and its count of steps when it stops, which it does once
 * stopFile exists) and call read() over and over for ms while it writes.
 * Fails if the writer did not start, did not exit 0 or wrote nothing.
 * Resolves the number of read() calls.
 */
async function whileWriting(d, writer, args, stopFile, read, ms) {
  const assert = require('node:assert/strict');
  const child = spawnNode(writer, args, d);
  const out = finished(child);
  let reads = 0;
  try {
    await new Promise((resolve, reject) => {
      child.stdout.on('data', (b) => { if (String(b).includes('writing')) resolve(); });
      child.on('exit', () => reject(new Error('the writer ended before writing')));
    });
    const end = Date.now() + ms;
    while (Date.now() < end) {
      for (let i = 0; i < 100; i++, reads++) read();
    }
    fs.writeFileSync(stopFile, '');
    const r = await out;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Number(r.stdout.trim().split('\n').pop()) > 0, r.stdout);
  } finally {
    await stopProcess(child);
  }
  return reads;
}

function runPython(code, heapd) {
  return run('python3', ['-c', code], childEnv(heapd));
}

function runProg(name, ...args) {
  return run(binary(name), args.map(String), process.env);
}

/** A small seeded PRNG (mulberry32): the same operations on every run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = {
  PKG, REPO, BUILD, WORKERS, HeapD, useHeap, tempDir, binary, sleep, stopProcess, exited,
  childEnv, runNode, spawnNode, finished, whileWriting, runPython, runProg, rng, track,
};
