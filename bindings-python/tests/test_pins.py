"""GC pins of proxies: every proxy (and zero-copy view) pins its object
while it lives and unpins when it dies; heap.stats()['pins'] counts them."""

import gc
import threading

import pytest

import uniheap


class Node(uniheap.PObject, name="t.pins.Node"):
    v = uniheap.i64()
    nxt = uniheap.ref()


def pins(h):
    return h.stats()["pins"]


def test_stats_has_gc_fields(heap):
    s = heap.stats()
    for key in ("pins", "gc_cycles", "gc_greys", "gc_busy_waits"):
        assert isinstance(s[key], int), key


def test_pins_held_while_proxies_live(heap):
    head = Node(heap, v=0)
    heap.roots["t.pins.head"] = head
    gc.collect()
    start = pins(heap)
    proxies = [Node(heap, v=i) for i in range(1000)]
    assert pins(heap) == start + 1000
    reads = [head.v for _ in range(1000)]      # scalar reads pin nothing
    assert pins(heap) == start + 1000 and reads == [0] * 1000
    del proxies
    gc.collect()
    assert pins(heap) == start


def test_ref_reads_and_collections(heap):
    a = Node(heap, v=1)
    a.nxt = Node(heap, v=2)
    m = uniheap.PMap(heap)
    m["a"] = a
    gc.collect()
    start = pins(heap)
    got = [a.nxt for _ in range(100)] + [m["a"] for _ in range(100)] + list(m.values())
    assert pins(heap) == start + len(got)
    del got
    gc.collect()
    assert pins(heap) == start


def test_rolled_back_proxy(heap):
    gc.collect()
    start = pins(heap)
    with pytest.raises(RuntimeError):
        with heap.atomic():
            n = Node(heap, v=5)
            assert pins(heap) == start + 1
            raise RuntimeError("roll back")
    assert pins(heap) == start + 1
    with pytest.raises(uniheap.FreedObjectError):
        n.v
    del n
    assert pins(heap) == start


def test_freed_object_is_not_pinned(heap):
    n = Node(heap, v=1)
    off = n.offset
    heap.free(n)
    gc.collect()
    start = pins(heap)
    with pytest.raises(uniheap.FreedObjectError):
        heap.proxy(off)
    assert pins(heap) == start


def test_closed_heap_proxies_die_quietly(connect):
    h = connect()
    keep = [Node(h, v=i) for i in range(10)]
    h.close()
    del keep          # the session is gone: nothing released, nothing raised
    gc.collect()


def test_other_connection_pins_its_own(connect):
    h1, h2 = connect(), connect()
    n = Node(h1, v=3)
    h1.roots["t.pins.x"] = n
    gc.collect()
    s1, s2 = pins(h1), pins(h2)
    x = h2.roots["t.pins.x"]
    assert pins(h2) == s2 + 1 and pins(h1) == s1
    del x
    assert pins(h2) == s2


def test_freed_in_another_thread(heap):
    gc.collect()
    start = pins(heap)
    box = [Node(heap, v=i) for i in range(100)]
    t = threading.Thread(target=box.clear)
    t.start()
    t.join()
    assert pins(heap) == start
