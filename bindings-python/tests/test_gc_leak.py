"""The online GC's leak loop in Python (issue 28): blocks that each make a
new Node the one a root holds never fill the heap, because the collector
reclaims the Nodes left behind; and Nodes whose proxies a Python list
holds (GC pins) survive several cycles, readable with their value.

UNIHEAP_GC_LEAK_STEPS (default 2000000) and UNIHEAP_GC_LEAK_HEAP (default
16M: its arenas hold a small part of the steps' Nodes, so the default run
fills it many times) size the run; 10000000 on 64M is the issue's."""

import gc
import os
import shutil

import pytest

import uniheap
from conftest import HeapD, make_temp_dir

STEPS = int(os.environ.get("UNIHEAP_GC_LEAK_STEPS", "2000000"))
HEAP = os.environ.get("UNIHEAP_GC_LEAK_HEAP", "16M")


class Node(uniheap.PObject, name="t.gcleak.Node"):
    v = uniheap.i64()


class Head(uniheap.PObject, name="t.gcleak.Head"):
    cur = uniheap.ref()


@pytest.fixture
def gc_heapd():
    d = make_temp_dir()
    server = HeapD(d, size=HEAP)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(d, ignore_errors=True)


def collect(server):
    r = server.heapctl("gc", "--wait", timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_leak_loop_never_fills(gc_heapd):
    with uniheap.connect(gc_heapd.sock) as h:
        head = Head(h)
        h.roots["head"] = head
        for n in range(STEPS):
            with h.atomic():
                head.cur = Node(h, v=n)
        assert head.cur.v == STEPS - 1


def test_nodes_held_by_proxies_survive(gc_heapd):
    with uniheap.connect(gc_heapd.sock) as h:
        head = Head(h)
        h.roots["head"] = head
        kept = []
        for n in range(20000):
            with h.atomic():
                head.cur = Node(h, v=n)
            kept.append(head.cur)
        for _ in range(3):
            collect(gc_heapd)
        assert [k.v for k in kept] == list(range(20000))
        # the leak loop goes on around them; they stay
        for n in range(200000):
            with h.atomic():
                head.cur = Node(h, v=n)
        collect(gc_heapd)
        assert [k.v for k in kept] == list(range(20000))
        offs = [k.offset for k in kept[:100]]
        del kept
        gc.collect()
        collect(gc_heapd)
        collect(gc_heapd)
        freed = 0
        for off in offs:
            try:
                h.proxy(off)
            except uniheap.FreedObjectError:
                freed += 1
        assert freed == len(offs)
