# Type stubs of the uniheap package (the public API).
from collections.abc import (AsyncIterator, Callable, Iterable, Iterator, Mapping,
                             MutableMapping, MutableSequence, Sequence)
from contextlib import AbstractContextManager
from typing import Any, Generic, TypeVar, overload

__version__: str
FORMAT_VERSION: int
LIB_VERSION: str

# ---- exceptions: every error is a uniheap.Error ----
class Error(Exception):
    code: int               # libuniheap error code (negative), 0 for binding-side errors
class Conflict(Error): ...                       # lost a conflict; block rolled back
class FreedObjectError(Error): ...               # freed, stale or invalid object
class ClassMismatch(Error): ...                  # class registered with another layout
class HeapClosedError(Error): ...                # heap closed (or proxy of a closed heap)
class ForkedError(Error): ...                    # in a forked child: a block open at the fork, used there
class Disconnected(Error, ConnectionError): ...  # heapd unreachable
class HeapFull(Error, MemoryError): ...          # heap out of space
class ReadOnlyError(Error): ...                  # write on a read-only heap
class BlockTooLarge(Error): ...                  # kept for compatibility: redo logs now grow
class TypeMismatch(Error, TypeError): ...        # wrong field/element type or class
class ValueRangeError(Error, ValueError): ...    # integer does not fit the field type
class InvalidValue(Error, ValueError): ...       # bad argument (bad name, bad UTF-8, key too long)
class StateError(Error, RuntimeError): ...       # not allowed now (e.g. a wait inside a block)

# ---- field declarations (class attributes of PObject subclasses) ----
class Field:
    name: str
    type: str                # "i8", ..., "string", "bytes", "inline string", "inline bytes"
    capacity: int            # inline string/bytes fields: bytes at most (max=); else 0
    index: int               # position in the class layout
    owner: str               # declaring class's heap name
    offset: int              # byte offset from the object start (-1 until registered)
    target: type | str | None  # ref target (class or class name), None = any object

def i8() -> Any: ...
def i16() -> Any: ...
def i32() -> Any: ...
def i64() -> Any: ...
def f32() -> Any: ...
def f64() -> Any: ...
def bool_() -> Any: ...
def string(max: int | None = None) -> Any: ...   # max=N: inline, at most N UTF-8 bytes
def bytes_(max: int | None = None) -> Any: ...   # max=N: inline, at most N bytes
def ref(target: type | str | None = None) -> Any: ...   # PObject subclass, its heap name, PMap/PSortedMap/PList/PArray, or None

# ---- proxies ----
class Proxy:
    """A live reference to a persistent object: holds (heap, offset), never a copy."""
    @property
    def heap(self) -> Heap: ...
    @property
    def offset(self) -> int: ...          # the persistent reference: offset (bits 0..47), generation (48..63)
    @property
    def class_id(self) -> int: ...
    @property
    def class_name(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...   # same heap and offset
    def __hash__(self) -> int: ...
    # pickle: a reference, never a copy: (heapd's socket, heap file, offset); unpickled
    # in any process it is a proxy of the same object on a Heap of that process
    # connected to that socket (an open one, an inherited one after fork, else one
    # connected then and kept open). Error: another heap there; FreedObjectError.
    def __reduce__(self) -> tuple[Callable[[str, str, int], Proxy], tuple[str, str, int]]: ...

class PObject(Proxy):
    """Base of persistent classes:

        class Account(uniheap.PObject, name="bank.Account"):
            balance = uniheap.i64()
            owner = uniheap.string()

    name= (required) is the language-neutral class name in the heap.
    `Account(heap, balance=10)` allocates a new object (atomically initialized).
    """
    __uniheap_name__: str
    __uniheap_fields__: tuple[Field, ...]
    def __init_subclass__(cls, *, name: str, **kw: Any) -> None: ...
    def __init__(self, heap: Heap, /, **fields: Any) -> None: ...

V = TypeVar("V")
K = TypeVar("K", str, bytes, int)

class PMap(Proxy, MutableMapping[K, Any]):
    """Persistent hash map; keys all str, all bytes, or all int (fixed at creation).
    Values: None, bool, int (i64), float (f64), str, bytes, or any proxy."""
    def __init__(self, heap: Heap, /, key: type = str, data: Mapping[Any, Any] | Iterable[tuple[Any, Any]] = ()) -> None: ...
    @property
    def key_type(self) -> type: ...
    def check(self) -> None: ...          # structural check; raises Error on damage
    def view(self, key: Any) -> memoryview: ...  # zero-copy, read-only view of a bytes value (README: lifetime rule)
    # Records as values, one call each (README: "Records as map values")
    def get_fields(self, key: Any) -> dict[str, Any] | None: ...  # asdict(self[key]), None if absent
    def set_field(self, key: Any, name: str, value: Any) -> bool: ...  # setattr(self[key], ...); False if absent
    def put_record(self, key: Any, cls: type[PObject], values: dict[str, Any], free_old: bool = False) -> None: ...

class BytesView:
    """The exporter of a view (view.obj)."""
    @property
    def valid(self) -> bool: ...          # the object holding the viewed bytes is still there
    @property
    def offset(self) -> int: ...

class PSortedMap(PMap[K]):
    """Persistent sorted map (B+-tree): ordered iteration and range scans."""
    def items_from(self, start: Any = None, *, reverse: bool = False) -> Iterator[tuple[Any, Any]]: ...
    def scan_fields(self, start: Any, count: int) -> list[dict[str, Any]]: ...  # asdict of up to count records from start
    def range(self, start: Any = None, stop: Any = None, *, reverse: bool = False) -> Iterator[tuple[Any, Any]]: ...  # start <= k < stop (reverse: start >= k > stop)
    def first(self) -> tuple[Any, Any]: ...   # KeyError when empty
    def last(self) -> tuple[Any, Any]: ...

class PList(Proxy, MutableSequence[Any]):
    def __init__(self, heap: Heap, /, iterable: Iterable[Any] = ()) -> None: ...

class PArray(Proxy, Sequence[Any]):
    """Fixed-length array of one element type ("i8".."f64", "bool", "string", "bytes", "ref")."""
    def __init__(self, heap: Heap, /, elem_type: str, length: int | Iterable[Any]) -> None: ...
    def __getitem__(self, index: int) -> Any: ...  # type: ignore[override]  # no slices
    def __len__(self) -> int: ...
    def __setitem__(self, index: int, value: Any) -> None: ...
    @property
    def elem_type(self) -> str: ...

# ---- the heap ----
class Roots(MutableMapping[str, Proxy]):
    """heap.roots: named durable roots; values are proxies (any persistent object)."""

class Atomic(AbstractContextManager[Heap]): ...

class Heap:
    """A session with heapd and the heap mapped. In a child forked from this
    process (multiprocessing's 'fork'), the Heap and its proxies go on working:
    its first use there attaches it anew, as a session of the child's own."""
    def __enter__(self) -> Heap: ...
    def __exit__(self, *exc: Any) -> None: ...
    def close(self) -> None: ...          # idempotent; an open block is rolled back
    @property
    def closed(self) -> bool: ...
    @property
    def readonly(self) -> bool: ...
    @property
    def roots(self) -> Roots: ...
    @property
    def max_tries(self) -> int: ...       # tries of atomic(fn, ...) before Conflict (default 100)
    @max_tries.setter
    def max_tries(self, n: int) -> None: ...
    def info(self) -> dict[str, Any]: ...  # heap_size (mapped), format_version, durability, session, readonly, name, path, cur_size, max_size, used_size
    def stats(self) -> dict[str, int]: ... # libuniheap counters (allocs, commits, aborts, conflicts, barriers, ...;
                                           # online GC: pins (held now, one per live proxy or view), gc_cycles,
                                           # gc_greys, gc_busy_waits)
    @overload
    def atomic(self) -> Atomic: ...       # with heap.atomic(): ... (Conflict on a lost conflict)
    @overload
    def atomic(self, fn: Callable[..., V], /, *args: Any, **kwargs: Any) -> V: ...  # runs fn in a block, re-running it on Conflict
    def in_block(self) -> bool: ...
    def free(self, obj: Proxy) -> None: ...
    def check(self) -> int: ...           # whole-heap structural check; returns objects visited
    def proxy(self, offset: int) -> Proxy: ...   # proxy of the object at a persistent reference
    def classes(self) -> list[dict[str, Any]]: ...  # the heap's class table
    # ---- waiting for changes (obj: a proxy or ROOTS; a list of up to 64 in wait/changed) ----
    def token(self, obj: Proxy | _Roots) -> int: ...   # moves with every commit that changes obj
    @overload
    def wait(self, obj: Proxy | _Roots, since: int | None = None,
             timeout: float | None = None) -> int | None: ...   # new token; None on timeout
    @overload
    def wait(self, obj: Sequence[Proxy | _Roots], since: Sequence[int] | None = None,
             timeout: float | None = None) -> list[int] | None: ...
    @overload
    async def changed(self, obj: Proxy | _Roots, since: int | None = None,
                      timeout: float | None = None) -> int | None: ...   # asyncio; cancel = cancel the wait
    @overload
    async def changed(self, obj: Sequence[Proxy | _Roots], since: Sequence[int] | None = None,
                      timeout: float | None = None) -> list[int] | None: ...
    def watch(self, obj: Any) -> Watch: ...   # for / async for: a new token after each change

class Watch(Iterator[Any], AsyncIterator[Any]):
    def __next__(self) -> Any: ...
    async def __anext__(self) -> Any: ...

class _Roots: ...
ROOTS: _Roots                             # wait on the roots: any root set or removed

# timeout: seconds to wait for a heapd not running yet (0: fail at once;
# None: $UNIHEAP_CONNECT_TIMEOUT_MS, else 5 s), then Disconnected
def connect(socket: str | None = None, *, readonly: bool = False,
            timeout: float | None = None) -> Heap: ...
def default_socket() -> str: ...
