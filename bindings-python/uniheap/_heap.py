"""The Heap connection: roots, class registration, proxy types."""
from collections.abc import MutableMapping

from . import _pickle, _uniheap, _wait
from ._collections import PArray, PList, PMap, PSortedMap
from ._objects import _INLINE_CODES, PObject, _declared, generic_class
from ._uniheap import ClassMismatch, Proxy

_BUILTIN = {5: PArray, 6: PList, 8: PMap, 11: PSortedMap}
_BUILTIN_IDS = {cls: cid for cid, cls in _BUILTIN.items()}
_KIND_RECORD = 1


def _type_name(code):
    names = _uniheap.TYPE_NAMES
    return names[code] if code < len(names) else str(code)


class Roots(MutableMapping):
    """heap.roots: the heap's named durable roots, name -> object."""
    __slots__ = ("_heap",)

    def __init__(self, heap):
        self._heap = heap

    def __getitem__(self, name):
        return self._heap._root_get(name)

    def __setitem__(self, name, obj):
        self._heap._root_set(name, obj)

    def __delitem__(self, name):
        self._heap._root_del(name)

    def __iter__(self):
        return iter(self._heap._root_names())

    def __len__(self):
        return self._heap._root_count()

    def __repr__(self):
        return f"<uniheap roots: {len(self)}>"


class Heap(_uniheap.Heap):
    """A session with heapd and the heap mapped into this process.
    Use connect(); a context manager (closes on exit). One thread at a
    time: open one Heap per thread that runs blocks concurrently."""

    def __init__(self, socket=None, *, readonly=False, timeout=None):
        super().__init__(socket, readonly=readonly, timeout=timeout)
        self._ids = {}
        self._registering = set()
        self.roots = Roots(self)
        _pickle.opened(self, socket)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        if self.closed:
            return "<uniheap.Heap (closed)>"
        i = self.info()
        return f"<uniheap.Heap {i['name']!r} {i['durability']} {i['heap_size']} bytes>"

    async def changed(self, obj, since=None, timeout=None):
        """await heap.changed(obj, since=None, timeout=None): heap.wait()
        for asyncio; the event loop keeps running meanwhile, and
        cancelling the task cancels the wait."""
        return await _wait.changed(self, obj, since, timeout)

    def watch(self, obj):
        """An iterator (for and async for) over obj's new token after
        each change, from now on; it ends when the heap is closed."""
        return _wait.Watch(self, obj)

    def classes(self):
        """The heap's class table, one dict per class."""
        out = []
        for cid, name, kind, payload, fields in self._class_table():
            out.append({"id": cid, "name": name, "kind": kind, "payload_size": payload,
                        "fields": [{"name": n, "type": _type_name(t), "offset": o,
                                    "ref_class": 0 if t in _INLINE_CODES else r,
                                    "capacity": r if t in _INLINE_CODES else 0}
                                   for n, t, o, r in fields]})
        return out

    def _reduce_proxy(self, ref):
        """Called by Proxy.__reduce__: see uniheap._pickle."""
        return _pickle.reduce(self, ref)

    # ---- class registration (first use of a class in this heap) ----

    def _class_id(self, cls):
        cid = self._ids.get(cls)
        if cid is not None:
            return cid
        if cls.__uniheap_generic__:
            raise TypeError(f"{cls.__uniheap_name__}: a generic proxy class of another heap")
        self._registering.add(cls)
        try:
            spec = [(f.name, f.type_code, f.capacity or self._ref_class(cls, f))
                    for f in cls.__uniheap_fields__]
            cid = self._register(cls.__uniheap_name__, spec)
        finally:
            self._registering.discard(cls)
        fields = self._class_info(cid)[4]
        for i, (f, (fname, _t, off, _r)) in enumerate(zip(cls.__uniheap_fields__, fields)):
            f._bind(i, off, cls.__uniheap_name__)
        self._ids[cls] = cid
        self._types[cid] = cls
        return cid

    def _ref_class(self, cls, f):
        """The heap class id a typed ref field names (0: any object).
        Refs to the class itself, or along a cycle of classes being
        registered, stay untyped in the heap; the Python class still
        checks them on assignment."""
        t = f.target
        if f.type != "ref" or t is None:
            return 0
        if isinstance(t, str):
            if t == cls.__uniheap_name__:
                f.target = cls      # checked on assignment
                return 0
            declared = _declared.get(t)
            if declared is not None:
                f.target = declared
                t = declared
            else:
                cid = self._class_find(t)
                if cid is None:
                    raise ClassMismatch(
                        f"{cls.__uniheap_name__}.{f.name}: ref target class {t!r} is neither "
                        "declared in this process nor registered in the heap")
                return cid
        if t in _BUILTIN_IDS:
            return _BUILTIN_IDS[t]
        if not (isinstance(t, type) and issubclass(t, PObject)):
            raise TypeError(f"{cls.__uniheap_name__}.{f.name}: ref target must be a PObject "
                            f"subclass, PMap, PSortedMap, PList or PArray, not {t!r}")
        if t is cls or t in self._registering:
            return 0
        return self._class_id(t)

    def _proxy_type(self, cid):
        """Called by the C core for a class id it has not seen yet."""
        if cid in _BUILTIN:
            return _BUILTIN[cid]
        info = self._class_info(cid)
        if info[2] != _KIND_RECORD:
            return Proxy
        declared = _declared.get(info[1])
        if declared is not None:
            try:
                self._class_id(declared)    # checks the layout
                return declared
            except ClassMismatch:
                pass    # declared with another layout: read it generically
        cls = generic_class(info)
        self._ids[cls] = cid
        return cls


def connect(socket=None, *, readonly=False, timeout=None):
    """Attach to heapd and map its heap. socket: heapd's socket path, else
    $UNIHEAP_SOCKET, else default_socket(). readonly: map read-only
    (writes raise ReadOnlyError; blocks read a consistent snapshot).
    timeout: seconds to wait for a heapd that is not running yet (no
    socket, or refused: it is starting or restarting), trying again until
    it answers; 0 fails at once; None: $UNIHEAP_CONNECT_TIMEOUT_MS
    (milliseconds) if set, else 5 s. Then Disconnected names the socket
    and says heapd is not running there."""
    return Heap(socket, readonly=readonly, timeout=timeout)
