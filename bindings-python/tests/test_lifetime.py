"""Lifetimes at the edges of the C extension: proxies that outlive their
Heap object, iterators that outlive their heap or collection, descriptors
applied to the wrong object, forked children closing the parent's heap,
and reference leaks on the hot and error paths."""

import gc
import os
import signal
import sys
import time

import pytest

import uniheap


class Cell(uniheap.PObject, name="t.life.Cell"):
    n = uniheap.i64()
    s = uniheap.string()
    link = uniheap.ref("t.life.Cell")


class Other(uniheap.PObject, name="t.life.Other"):
    a = uniheap.i8()


def test_proxy_keeps_its_heap(heapd):
    h = uniheap.connect(heapd.sock)
    c = Cell(h, n=5, s="kept")
    del h
    gc.collect()
    assert c.n == 5 and c.s == "kept"     # the proxy holds the heap
    c.n = 6
    assert c.n == 6
    c.heap.close()
    with pytest.raises(uniheap.HeapClosedError):
        c.n


def test_unclosed_heap_is_released(heapd):
    """A Heap dropped without close() detaches when collected; heapd sees
    no leftover session."""
    for _ in range(5):
        h = uniheap.connect(heapd.sock)
        Cell(h, n=1)
        del h
        gc.collect()
    with uniheap.connect(heapd.sock) as h:
        assert Cell(h, n=2).n == 2


@pytest.mark.parametrize("kind", ["map", "smap", "list", "range", "roots"])
def test_iterator_after_close(heapd, kind):
    h = uniheap.connect(heapd.sock)
    if kind == "map":
        it = iter(uniheap.PMap(h, data={str(i): i for i in range(10)}))
    elif kind == "smap":
        it = iter(uniheap.PSortedMap(h, key=int, data={i: i for i in range(10)}))
    elif kind == "list":
        it = iter(uniheap.PList(h, range(10)))
    elif kind == "range":
        it = uniheap.PSortedMap(h, key=int, data={i: i for i in range(10)}).range(2, 8)
    else:
        for i in range(10):
            h.roots[f"r{i}"] = Cell(h, n=i)
        it = iter(h.roots)
    next(it)
    h.close()
    if kind == "roots":
        # a snapshot of the names may go on (names only, no heap access)
        try:
            assert isinstance(next(it), str)
        except (uniheap.HeapClosedError, StopIteration):
            pass
        return
    with pytest.raises((uniheap.HeapClosedError, StopIteration)):
        next(it)


def test_iterator_after_free(heap):
    m = uniheap.PMap(heap, key=int, data={i: i for i in range(20)})
    sm = uniheap.PSortedMap(heap, key=int, data={i: i for i in range(20)})
    pl = uniheap.PList(heap, range(20))
    its = [iter(m), iter(sm), iter(pl), sm.items_from(5)]
    for it in its:
        next(it)
    for c in (m, sm, pl):
        heap.free(c)
    for it in its:
        with pytest.raises((uniheap.FreedObjectError, StopIteration)):
            next(it)


def test_delete_while_iterating(heap):
    """Deleting each key just returned: no crash, and either the map is
    emptied or a RuntimeError says it changed size."""
    m = uniheap.PMap(heap, key=int, data={i: i for i in range(200)})
    try:
        for k in m:
            del m[k]
    except RuntimeError:
        return
    assert len(m) == 0
    sm = uniheap.PSortedMap(heap, key=int, data={i: i for i in range(200)})
    try:
        for k in sm:
            del sm[k]
    except RuntimeError:
        return
    assert len(sm) == 0


def test_descriptor_on_wrong_object(heap):
    cell_n = Cell.__dict__["n"]
    Cell(heap)                             # Cell's fields are laid out
    other = Other(heap, a=1)
    with pytest.raises(TypeError):
        cell_n.__get__(other, Other)
    with pytest.raises(TypeError):
        cell_n.__set__(other, 5)
    with pytest.raises(TypeError):
        cell_n.__get__("not a proxy", str)
    with pytest.raises(TypeError):
        cell_n.__set__(object(), 5)
    assert other.a == 1
    assert cell_n.__get__(None, Cell) is cell_n    # class access: the Field


def test_same_class_declared_twice(heap):
    """Two identical declarations (as two modules might make) are one heap
    class."""
    def declare():
        class Twin(uniheap.PObject, name="t.life.Twin"):
            x = uniheap.i64()
            y = uniheap.string()
        return Twin
    A, B = declare(), declare()
    a, b = A(heap, x=1, y="a"), B(heap, x=2, y="b")
    assert a.class_id == b.class_id
    assert (a.x, a.y, b.x, b.y) == (1, "a", 2, "b")
    assert heap.proxy(a.offset).x == 1
    assert sum(c.get("name") == "t.life.Twin" for c in heap.classes()) == 1


def test_fork_child_closing_parent_heap(heap, heapd):
    """A forked child that closes (and drops) the parent's heap must not
    end the parent's session."""
    c = Cell(heap, n=1)
    heap.roots["c"] = c
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            try:
                heap.close()
            except uniheap.ForkedError:
                pass
            code = 0 if heap.closed else 4
            gc.collect()
        except BaseException:
            code = 5
        finally:
            os._exit(code)
    deadline = time.monotonic() + 30
    while True:
        rpid, status = os.waitpid(pid, os.WNOHANG)
        if rpid == pid:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("forked child hung in close()")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, hex(status)
    # the parent's session goes on: blocks, allocations, class registration
    with heap.atomic():
        c.n = 2
        heap.roots["d"] = Cell(heap, n=3)
    assert heap.roots["c"].n == 2

    class AfterFork(uniheap.PObject, name="t.life.AfterFork"):
        z = uniheap.i64()
    assert AfterFork(heap, z=9).z == 9


def refcount_after(fn, obj, rounds=2000):
    """How much sys.getrefcount(obj) grew over `rounds` calls of fn()."""
    fn()
    gc.collect()
    before = sys.getrefcount(obj)
    for _ in range(rounds):
        fn()
    gc.collect()
    return sys.getrefcount(obj) - before


def test_no_reference_leaks(heap):
    c = Cell(heap, n=1, s="text")
    d = Cell(heap, n=2)
    c.link = d
    m = uniheap.PMap(heap, data={"k": "value", "o": d})
    pl = uniheap.PList(heap, [1, "x", d])
    heap.roots["c"] = c
    value = "a persistent string"
    key = "k"

    def hot_path():
        c.n = c.n + 1
        c.s = value
        c.s
        c.link
        m[key]
        m["o"]
        pl[2]
        list(pl)
        heap.roots["c"]

    def error_path():
        for op in (lambda: setattr(c, "n", value), lambda: setattr(c, "link", value),
                   lambda: m["missing"], lambda: setattr(c, "n", 1 << 70),
                   lambda: pl[100], lambda: m.__setitem__(1, value)):
            try:
                op()
            except (TypeError, ValueError, KeyError, IndexError):
                pass

    def block_path():
        with heap.atomic():
            c.n = 1
        try:
            with heap.atomic():
                c.n = 2
                raise KeyError(key)
        except KeyError:
            pass
        heap.atomic(lambda x: x, value)

    for fn in (hot_path, error_path, block_path):
        for obj in (heap, value, key, d):
            grew = refcount_after(fn, obj, 500)
            assert grew < 10, f"{fn.__name__}: refcount of {type(obj).__name__} grew by {grew}"


def test_two_heaps_one_class(tmp_dir):
    """One Python class used on two heaps whose class ids differ: each
    heap's objects, fields and typed references stay right."""
    class Node(uniheap.PObject, name="t.life.Node2"):
        v = uniheap.i64()
        tag = uniheap.string()
        next = uniheap.ref("t.life.Node2")

    class Pad(uniheap.PObject, name="t.life.Pad"):
        p = uniheap.i64()

    from conftest import HeapD
    servers = [HeapD(tmp_dir / "one"), HeapD(tmp_dir / "two")]
    heaps = []
    try:
        for s in servers:
            s.dir.mkdir()
            s.start()
        heaps = [uniheap.connect(s.sock) for s in servers]
        Pad(heaps[0], p=1)                 # ids: Pad < Node in heap 0 ...
        nodes0 = [Node(heaps[0], v=i, tag=f"zero{i}") for i in range(3)]
        nodes1 = [Node(heaps[1], v=10 + i, tag=f"one{i}") for i in range(3)]
        pad1 = Pad(heaps[1], p=2)          # ... Node < Pad in heap 1
        assert nodes0[0].class_id != nodes1[0].class_id
        for nodes in (nodes0, nodes1):
            nodes[0].next = nodes[1]
            nodes[1].next = nodes[2]
        with pytest.raises(TypeError):
            nodes0[2].next = Pad(heaps[0])
        with pytest.raises(TypeError):
            nodes1[2].next = pad1
        for h, nodes, base, tag in ((heaps[0], nodes0, 0, "zero"), (heaps[1], nodes1, 10, "one")):
            p = h.proxy(nodes[0].offset)
            assert type(p) is Node
            seen = []
            while p is not None:
                seen.append((p.v, p.tag))
                p = p.next
            assert seen == [(base + i, f"{tag}{i}") for i in range(3)]
        assert type(heaps[1].proxy(pad1.offset)) is Pad and pad1.p == 2
    finally:
        for h in heaps:
            h.close()
        for s in servers:
            s.stop()
