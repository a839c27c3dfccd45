"""Proxies of the persistent data types, with the collections.abc
protocols. The operations are in C (MapBase, ListBase, ArrayBase); these
classes add the mixin methods and constructors."""
from collections.abc import ItemsView, MutableMapping, MutableSequence, Sequence, ValuesView
from itertools import islice

from ._objects import at, check_heap
from ._uniheap import TYPE_NAMES, ArrayBase, ListBase, MapBase

_KEY_KINDS = {str: 1, bytes: 2, int: 3}
_ELEM_TYPES = {name: code for code, name in enumerate(TYPE_NAMES) if code}
_CHUNK = 256        # fill steps per block when filling a new collection


def _fill(heap, items, step):
    """Run step(item) for every item, in blocks of _CHUNK (joins an open
    block). The collection is unreachable until published, so a failure
    half-way leaves nothing visible."""
    if heap.in_block():
        for it in items:
            step(it)
        return
    items = iter(items)
    while batch := list(islice(items, _CHUNK)):
        with heap.atomic():
            for it in batch:
                step(it)


class _Items(ItemsView):
    __slots__ = ()

    def __iter__(self):
        return self._mapping._iter(2)


class _Values(ValuesView):
    __slots__ = ()

    def __iter__(self):
        return self._mapping._iter(1)


class PMap(MapBase, MutableMapping):
    """Persistent hash map: PMap(heap, key=str, data=()).

    Keys are all str, all bytes or all int (i64), fixed at creation.
    Values: None, bool, int, float, str, bytes or persistent objects.
    Each operation is atomic; wrap several in heap.atomic() to make
    them one step. == compares identity (same object), like any proxy."""
    __slots__ = ()
    _sorted = False

    def __new__(cls, heap, /, key=str, data=()):
        check_heap(heap, cls.__name__)
        kind = _KEY_KINDS.get(key)
        if kind is None:
            raise TypeError(f"map keys are str, bytes or int, not {key!r}")
        m = heap._new_map(kind, cls._sorted)
        if data:
            pairs = data.items() if hasattr(data, "items") else data
            _fill(heap, pairs, lambda kv: m.__setitem__(kv[0], kv[1]))
        return m

    def items(self):
        return _Items(self)

    def values(self):
        return _Values(self)

    def __repr__(self):
        try:
            n = len(self)
        except Exception as e:      # a proxy of a closed heap or freed map
            return f"<uniheap.{type(self).__name__} at offset {at(self)} ({type(e).__name__})>"
        return f"<uniheap.{type(self).__name__} of {n} entries at offset {at(self)}>"


class PSortedMap(PMap):
    """Persistent sorted map (B+-tree): iteration in key order (bytewise
    for str and bytes, numeric for int), range scans both ways."""
    __slots__ = ()
    _sorted = True

    def items_from(self, start=None, *, reverse=False):
        """(key, value) pairs from the first key >= start (reverse: <= start)."""
        return self._scan(start, None, reverse, 2)

    def range(self, start=None, stop=None, *, reverse=False):
        """(key, value) pairs with start <= key < stop (reverse: start >= key > stop);
        None leaves that end open."""
        return self._scan(start, stop, reverse, 2)

    def first(self):
        """The (key, value) pair of the smallest key; KeyError if empty."""
        for kv in self._scan(None, None, False, 2):
            return kv
        raise KeyError("first(): the map is empty")

    def last(self):
        """The (key, value) pair of the largest key; KeyError if empty."""
        for kv in self._scan(None, None, True, 2):
            return kv
        raise KeyError("last(): the map is empty")

    def __reversed__(self):
        return self._scan(None, None, True, 0)


class PList(ListBase, MutableSequence):
    """Persistent growable list: PList(heap, iterable=()). Integer indexes
    (negative ones count from the end); no slices."""
    __slots__ = ()

    def __new__(cls, heap, /, iterable=()):
        check_heap(heap, cls.__name__)
        lst = heap._new_list()
        _fill(heap, iterable, lst.append)
        return lst

    def __repr__(self):
        try:
            n = len(self)
        except Exception as e:
            return f"<uniheap.PList at offset {at(self)} ({type(e).__name__})>"
        return f"<uniheap.PList of {n} items at offset {at(self)}>"


class PArray(ArrayBase, Sequence):
    """Persistent fixed-length array of one element type:
    PArray(heap, "i64", 10) or PArray(heap, "f64", values)."""
    __slots__ = ()

    def __new__(cls, heap, /, elem_type, length):
        check_heap(heap, cls.__name__)
        code = _ELEM_TYPES.get(elem_type)
        if code is None:
            raise ValueError(f"unknown element type {elem_type!r}: one of "
                             f"{', '.join(_ELEM_TYPES)}")
        values = None
        if not isinstance(length, int):
            values = list(length)
            length = len(values)
        if length < 0:
            raise ValueError("array length must be >= 0")
        a = heap._new_array(code, length)
        if values:
            _fill(heap, enumerate(values), lambda iv: a.__setitem__(iv[0], iv[1]))
        return a

    def __repr__(self):
        try:
            n = len(self)
            t = self.elem_type
        except Exception as e:
            return f"<uniheap.PArray at offset {at(self)} ({type(e).__name__})>"
        return f"<uniheap.PArray of {n} {t} at offset {at(self)}>"
