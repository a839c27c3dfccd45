'use strict';
// uniheap: live persistent objects shared across processes and languages.
//
//   const uniheap = require('uniheap');
//   using heap = uniheap.connect();
//   const Account = heap.defineClass('bank.Account', { owner: 'string', balance: 'i64' });
//   const ada = new Account({ owner: 'ada', balance: 100 });
//   heap.roots.set('ada', ada);
//   heap.atomic(() => { ada.balance -= 10; });
//
// See bindings-node/README.md for the whole API.
const native = require('./native');
const { F64 } = require('./internal');
const errors = require('./errors');
const { Heap, Roots, connect } = require('./heap');
const { PObject } = require('./objects');
const { PCollection, PMap, PSortedMap, PList, PArray } = require('./collections');
const { BytesView } = require('./views');
const { ROOTS } = require('./wait');

module.exports = {
  connect,
  defaultSocket: native.defaultSocket,
  Heap,
  Roots,
  PObject,
  PCollection,
  PMap,
  PSortedMap,
  PList,
  PArray,
  BytesView,
  /** Stands for the roots in heap.token(), changed(), watch(), waitSync(). */
  ROOTS,
  /** uniheap.f64(3): store 3 as an f64 in a collection, not as an integer. */
  f64: (value) => new F64(value),
  UniheapError: errors.UniheapError,
  ConflictError: errors.ConflictError,
  FreedObjectError: errors.FreedObjectError,
  ClassMismatchError: errors.ClassMismatchError,
  HeapClosedError: errors.HeapClosedError,
  DisconnectedError: errors.DisconnectedError,
  HeapFullError: errors.HeapFullError,
  ReadOnlyError: errors.ReadOnlyError,
  BlockTooLargeError: errors.BlockTooLargeError,
  TypeMismatchError: errors.TypeMismatchError,
  ValueRangeError: errors.ValueRangeError,
  InvalidValueError: errors.InvalidValueError,
  AbortError: errors.AbortError,
  FORMAT_VERSION: native.formatVersion,
  LIB_VERSION: native.libVersion,
  version: require('../package.json').version,
};
