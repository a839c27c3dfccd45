'use strict';
// Waiting for changes (uniheap.h, "Waiting for changes"): the change token
// of an object, a collection or the roots, and waits until it moves. The
// Heap methods token, changed, watch and waitSync are these functions.
//
// A token moves with every commit that changes the thing (an object's
// version, a collection's change counter, shared by hashing with other
// collections, the roots' counter). Pattern: take the token, read, wait
// with since = that token; a change committed in between is not lost.
//
// Waits never run on the heap's own session nor on the event loop: the
// addon lends each one a wait session of the heap's pool and runs async
// ones on that session's own thread (src/wait.h), not on libuv's
// threadpool. A pending async wait keeps the process alive, as a timer
// does. close() cancels the waits still pending: they reject with
// HeapClosedError.
const { kO, kG, isProxy, checkSameHeap } = require('./identity');
const { check } = require('./internal');
const { UniheapError, AbortError, closedError } = require('./errors');

/** Stands for the roots wherever an object is accepted: a wait on ROOTS
 * wakes when any root is set or removed (uniheap.h UH_WAIT_ROOTS). */
const ROOTS = Symbol('uniheap.ROOTS');
const ROOTS_REF = [1, 0];	// UH_WAIT_ROOTS as (offset, generation)

function abortError(signal) {
  return new AbortError(undefined, { cause: signal.reason });
}

function inBlockError() {
  return new UniheapError('wait: inside a block, which sees one snapshot; wait outside blocks',
    'UH_ESTATE', -16);
}

function open(st) {
  if (st.closed) throw closedError();
  return st;
}

/** (offset, generation) of what obj names: a proxy of this heap, or ROOTS. */
function target(st, obj, what) {
  if (obj === ROOTS) return ROOTS_REF;
  if (!isProxy(obj)) {
    throw new TypeError(`${what}(obj): obj is a persistent object (PObject, PMap, PSortedMap, ` +
      `PList, PArray) or uniheap.ROOTS, not ${obj === null ? 'null' : typeof obj}`);
  }
  checkSameHeap(obj, st, what);
  check(obj);
  return [obj[kO], obj[kG]];
}

function sinceOf(st, ref, since) {
  if (since === undefined || since === null) return st.s.token(ref[0], ref[1]);
  if (typeof since === 'number' && Number.isSafeInteger(since) && since >= 0) return BigInt(since);
  if (typeof since !== 'bigint' || since < 0n || since >= 1n << 64n) {
    throw new TypeError('since: a token (a bigint from token() or changed())');
  }
  return since;
}

/** A timeout in ms for the addon: -1 for none (undefined, null, Infinity). */
function timeoutOf(timeout) {
  if (timeout === undefined || timeout === null || timeout === Infinity) return -1;
  if (typeof timeout !== 'number' || !(timeout >= 0)) {
    throw new RangeError(`timeout: milliseconds (a number >= 0), null or undefined, not ${timeout}`);
  }
  return timeout;
}

function options(o, what) {
  if (o === undefined) return {};
  if (o === null || typeof o !== 'object') {
    throw new TypeError(`${what}(obj, options): options is an object`);
  }
  return o;
}

/** The change token of obj (a bigint). */
function token(st, obj) {
  const ref = target(open(st), obj, 'token');
  return st.s.token(ref[0], ref[1]);
}

/** Resolves obj's new token once it differs from since (default: the
 * token now), null when timeout ms pass first; rejects with AbortError
 * when signal aborts. */
function changed(st, obj, opts) {
  return new Promise((resolve, reject) => {
    const { since, timeout, signal } = options(opts, 'changed');
    if (signal !== undefined && !(signal instanceof AbortSignal)) {
      throw new TypeError('changed(): signal must be an AbortSignal');
    }
    if (signal?.aborted) throw abortError(signal);
    if (open(st).depth > 0) throw inBlockError();
    const ref = target(st, obj, 'changed');
    const ms = timeoutOf(timeout);
    const s = sinceOf(st, ref, since);
    const onAbort = () => {
      st.s.waitCancel(id);
      reject(abortError(signal));
    };
    const id = st.s.waitStart(ref[0], ref[1], s, ms, (err, tok) => {
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else if (tok !== undefined) resolve(tok);
      else reject(st.closed ? closedError() : abortError(signal));	// cancelled
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** An async iterator of obj's tokens: one after each change (changes made
 * while the consumer runs are seen at its next step, several as one). It
 * starts from the token now, not at the first next(). */
function watch(st, obj, opts) {
  const { signal } = options(opts, 'watch');
  let since = token(st, obj);
  return (async function* tokens() {
    for (;;) {
      since = await changed(st, obj, { since, signal });
      yield since;
    }
  }());
}

/** Block this thread until obj's token differs from since: the new token,
 * or null after timeout ms. For scripts and worker threads. */
function waitSync(st, obj, opts) {
  const { since, timeout } = options(opts, 'waitSync');
  if (open(st).depth > 0) throw inBlockError();
  const ref = target(st, obj, 'waitSync');
  const ms = timeoutOf(timeout);
  return st.s.waitSync(ref[0], ref[1], sinceOf(st, ref, since), ms);
}

module.exports = {
  ROOTS, token, changed, watch, waitSync,
};
