// The ES module entry of uniheap (package.json "exports": "import"): the
// CommonJS package itself, loaded once, its names re-exported, so that
// `import { connect } from 'uniheap'` and `require('uniheap')` share one
// addon and one set of classes. test/esm.test.js checks that the names
// here are exactly those of lib/index.js.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const uniheap = require('./index.js');

export default uniheap;
export const {
  connect, defaultSocket, Heap, Roots, PObject, PCollection, PMap, PSortedMap, PList, PArray,
  BytesView, ROOTS, f64, UniheapError, ConflictError, FreedObjectError, ClassMismatchError,
  HeapClosedError, DisconnectedError, HeapFullError, ReadOnlyError, BlockTooLargeError,
  TypeMismatchError, ValueRangeError, InvalidValueError, AbortError, FORMAT_VERSION, LIB_VERSION,
  version,
} = uniheap;
