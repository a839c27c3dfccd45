'use strict';
// The error classes, and the one table from libuniheap's error codes to
// them (the addon raises through makeError()). Every error carries
// libuniheap's message, `.code` (the code's name, e.g. "UH_ECONFLICT") and
// `.errno` (the negative code; 0 for errors of the binding itself).

class UniheapError extends Error {
  constructor(message, code = 'UH_ERROR', errno = 0) {
    super(message);
    this.code = code;
    this.errno = errno;
  }

  get name() {
    return this.constructor.name;
  }
}

/** A block lost a conflict with another session; it was rolled back. */
class ConflictError extends UniheapError {}
/** The object was freed, or the reference does not name an object. */
class FreedObjectError extends UniheapError {}
/** The class is registered in this heap with another layout. */
class ClassMismatchError extends UniheapError {}
/** The heap (or the proxy's heap) is closed. */
class HeapClosedError extends UniheapError {}
/** heapd is unreachable. */
class DisconnectedError extends UniheapError {}
/** The heap is out of space. */
class HeapFullError extends UniheapError {}
/** A write on a read-only connection. */
class ReadOnlyError extends UniheapError {}
/** The block outgrew the session's redo log; split it. */
class BlockTooLargeError extends UniheapError {}
/** Wrong field or key type, or a reference to the wrong class. */
class TypeMismatchError extends UniheapError {}
/** A value or index does not fit its field or collection. */
class ValueRangeError extends UniheapError {}
/** A bad argument (class or field name, key too long, invalid UTF-8, ...). */
class InvalidValueError extends UniheapError {}

/** A wait ended by its AbortSignal (not a UniheapError: the heap did
 * nothing wrong). Named and coded as Node's own AbortError; the signal's
 * reason is its cause. */
class AbortError extends Error {
  constructor(message = 'The operation was aborted', options = undefined) {
    super(message, options);
    this.code = 'ABORT_ERR';
  }

  get name() {
    return 'AbortError';
  }
}

// libuniheap's codes (uniheap.h, "Error codes"): name and class.
const CODES = new Map([
  [-1, ['UH_EINVAL', InvalidValueError]],
  [-2, ['UH_ENOMEM', UniheapError]],
  [-3, ['UH_ENOSPC', HeapFullError]],
  [-4, ['UH_ENOTFOUND', UniheapError]],
  [-5, ['UH_ECONFLICT', ConflictError]],
  [-6, ['UH_ECLASSMISMATCH', ClassMismatchError]],
  [-7, ['UH_EFREED', FreedObjectError]],
  [-8, ['UH_ETYPE', TypeMismatchError]],
  [-9, ['UH_ERANGE', ValueRangeError]],
  [-10, ['UH_EDISCONNECTED', DisconnectedError]],
  [-11, ['UH_EPROTO', UniheapError]],
  [-12, ['UH_EIO', UniheapError]],
  [-13, ['UH_EFORK', UniheapError]],
  [-14, ['UH_ELOGFULL', BlockTooLargeError]],
  [-15, ['UH_EREADONLY', ReadOnlyError]],
  [-16, ['UH_ESTATE', UniheapError]],
  [-17, ['UH_EUTF8', InvalidValueError]],
  [-18, ['UH_EINTERNAL', UniheapError]],
]);

/** The error of libuniheap code errno (0: the heap is closed). */
function makeError(errno, message) {
  if (errno === 0) return new HeapClosedError(message, 'UH_ECLOSED', 0);
  const [code, Cls] = CODES.get(errno) || [`UH_E${-errno}`, UniheapError];
  return new Cls(message, code, errno);
}

function closedError() {
  return new HeapClosedError('the heap is closed', 'UH_ECLOSED', 0);
}

module.exports = {
  UniheapError, ConflictError, FreedObjectError, ClassMismatchError, HeapClosedError,
  DisconnectedError, HeapFullError, ReadOnlyError, BlockTooLargeError, TypeMismatchError,
  ValueRangeError, InvalidValueError, AbortError, makeError, closedError,
};
