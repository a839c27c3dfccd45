"""uniheap: live persistent objects shared across processes and languages.

    import uniheap

    class Account(uniheap.PObject, name="bank.Account"):
        balance = uniheap.i64()
        owner = uniheap.string()

    with uniheap.connect() as heap:
        acct = Account(heap, balance=100, owner="ada")
        heap.roots["ada"] = acct
        with heap.atomic():
            acct.balance -= 10

See bindings-python/README.md for the whole API.
"""
from ._uniheap import (FORMAT_VERSION, LIB_VERSION, Atomic, BlockTooLarge, BytesView, ClassMismatch,
                       Conflict, Disconnected, Error, Field, ForkedError, FreedObjectError,
                       HeapClosedError, HeapFull, InvalidValue, Proxy, ReadOnlyError, ROOTS,
                       StateError, TypeMismatch, ValueRangeError, asdict, astuple, default_socket)
from ._fields import bool_, bytes_, f32, f64, i8, i16, i32, i64, ref, string
from ._objects import PObject
from ._collections import PArray, PList, PMap, PSortedMap
from ._heap import Heap, Roots, connect

__version__ = "0.1.0"

__all__ = [
    "connect", "default_socket", "Heap", "Roots", "Atomic", "Proxy", "PObject", "Field",
    "PMap", "PSortedMap", "PList", "PArray", "BytesView", "asdict", "astuple",
    "i8", "i16", "i32", "i64", "f32", "f64", "bool_", "string", "bytes_", "ref",
    "Error", "Conflict", "FreedObjectError", "ClassMismatch", "HeapClosedError",
    "ForkedError", "Disconnected", "HeapFull", "ReadOnlyError", "BlockTooLarge",
    "TypeMismatch", "ValueRangeError", "InvalidValue", "StateError", "ROOTS",
    "FORMAT_VERSION", "LIB_VERSION", "__version__",
]
