"""Zero-copy views of bytes values (PMap.view): the bytes in place, no
copy, read-only; readable for as long as the view exists, even after the
value is freed or the heap closed (never a crash), and view.obj.valid
says whether they are still the value's."""

import json

import pytest
from conftest import wait_for

import uniheap


def sessions(heapd):
    out = heapd.heapctl("--json", "status")
    return int(json.loads(out.stdout).get("sessions", 0))


@pytest.mark.parametrize("key", [str, bytes, int])
def test_view_is_the_value(heap, key):
    m = uniheap.PMap(heap, key=key)
    k = {str: "k", bytes: b"k", int: 7}[key]
    for data in (b"", b"x", bytes(range(256)) * 40):
        m[k] = data
        v = m.view(k)
        assert isinstance(v, memoryview)
        assert v.readonly and v.nbytes == len(data)
        assert v.tobytes() == data == bytes(v)
        assert v.obj.valid
        v.release()


def test_view_in_sorted_map_and_block(heap):
    m = uniheap.PSortedMap(heap, key=int, data={1: b"one", 2: b"two"})
    with heap.atomic():
        m[3] = b"three"     # new in this block
        assert m.view(3).tobytes() == b"three"
        assert m.view(1).tobytes() == b"one"
    assert m.view(3).tobytes() == b"three"


def test_view_is_read_only(heap):
    m = uniheap.PMap(heap, data={"k": b"abc"})
    v = m.view("k")
    with pytest.raises(TypeError):
        v[0] = 1
    import ctypes
    with pytest.raises((TypeError, BufferError)):
        ctypes.c_char.from_buffer(v)
    assert m["k"] == b"abc"


def test_view_errors(heap):
    m = uniheap.PMap(heap, data={"s": "text", "i": 5, "n": None, "b": b"ok"})
    with pytest.raises(KeyError):
        m.view("missing")
    for k in ("s", "i", "n"):
        with pytest.raises(TypeError):
            m.view(k)
    with pytest.raises(uniheap.TypeMismatch):
        m.view(3)   # wrong key type
    assert m.view("b").tobytes() == b"ok"


def test_view_after_the_value_is_freed(heap):
    """Replacing a value frees it: the view stays readable (same length),
    valid turns False, and a copy taken while valid was the value."""
    m = uniheap.PMap(heap)
    m["k"] = b"A" * 100
    v = m.view("k")
    copy = bytes(v)
    assert v.obj.valid and copy == b"A" * 100
    m["k"] = b"B" * 100     # frees the old value; its slot may be reused
    for _ in range(50):     # reuse slots of the same size
        uniheap.PMap(heap, data={"x": b"C" * 100})
    assert not v.obj.valid
    assert len(bytes(v)) == 100     # readable, whatever it shows now
    assert m.view("k").tobytes() == b"B" * 100
    del m["k"]
    assert len(bytes(v)) == 100


def test_view_outlives_close(heapd):
    """close() with views alive keeps the mapping (and the session) until
    the last view is released; everything else about the heap is closed."""
    h = uniheap.connect(heapd.sock)
    m = uniheap.PMap(h, data={"k": b"kept" * 10})
    v, w = m.view("k"), m.view("k")
    before = sessions(heapd)
    h.close()
    assert h.closed
    with pytest.raises(uniheap.HeapClosedError):
        m["k"]
    with pytest.raises(uniheap.HeapClosedError):
        m.view("k")
    assert v.tobytes() == b"kept" * 10 and v.obj.valid
    assert sessions(heapd) == before    # still attached: views read the mapping
    v.release()
    assert w.tobytes() == b"kept" * 10
    o = w.obj
    del w                               # the last view: the session ends
    assert wait_for(lambda: sessions(heapd) == before - 1)
    assert not o.valid                  # the exporter outlives the mapping
    with pytest.raises(BufferError):
        memoryview(o)
    h.close()                           # again: nothing left to do


def test_view_without_close(heapd):
    """Views dropped before the heap: nothing parked, close ends the
    session at once."""
    h = uniheap.connect(heapd.sock)
    m = uniheap.PMap(h, data={"k": b"x"})
    for _ in range(3):
        m.view("k").release()
    before = sessions(heapd)
    h.close()
    assert wait_for(lambda: sessions(heapd) == before - 1)


def test_view_no_reference_leaks(heap):
    """Views taken and released give back every reference (the heap's
    and the exporter type's) and every export count."""
    import sys
    m = uniheap.PMap(heap, data={"k": b"v" * 64})
    tp = type(m.view("k").obj)

    def cycle():
        for _ in range(500):
            v = m.view("k")
            v.tobytes()
            v.release()
            m.view("k")     # dropped without release
    cycle()
    before = (sys.getrefcount(heap), sys.getrefcount(tp))
    cycle()
    after = (sys.getrefcount(heap), sys.getrefcount(tp))
    assert after[0] - before[0] < 10 and after[1] - before[1] < 10
