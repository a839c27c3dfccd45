"""Threads: a Heap is one session. Another thread cannot slip its work
into a block that one thread has open; one Heap per thread works."""
import threading

import pytest

import uniheap


class Counter(uniheap.PObject, name="t.threads.Counter"):
    n = uniheap.i64()


def run_in_thread(fn):
    out = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as e:      # handed to the test thread
            out["error"] = e
    t = threading.Thread(target=body)
    t.start()
    t.join(30)
    assert not t.is_alive()
    return out


def test_other_thread_refused_while_block_open(heap):
    c = Counter(heap, n=1)
    with heap.atomic():
        c.n = 2
        out = run_in_thread(lambda: setattr(c, "n", 99))
        assert isinstance(out.get("error"), uniheap.Error)
        assert "another thread" in str(out["error"])
        out = run_in_thread(lambda: c.n)
        assert isinstance(out.get("error"), uniheap.Error)
        out = run_in_thread(lambda: heap.atomic().__enter__())
        assert isinstance(out.get("error"), uniheap.Error)
    assert c.n == 2
    # after the block, any thread may use the heap again
    assert run_in_thread(lambda: c.n) == {"value": 2}


def test_other_thread_refused_during_retrying_block(heap):
    c = Counter(heap, n=0)
    seen = {}

    def body():
        c.n += 1
        seen.update(run_in_thread(lambda: c.n))
    heap.atomic(body)
    assert c.n == 1 and isinstance(seen.get("error"), uniheap.Error)


def test_one_heap_per_thread(heap, connect):
    c = Counter(heap, n=0)
    heap.roots["t.threads.c"] = c
    per_thread = 200

    def worker():
        with connect() as h:
            mine = h.roots["t.threads.c"]
            h.max_tries = 10000
            for _ in range(per_thread):
                h.atomic(lambda: setattr(mine, "n", mine.n + 1))
    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert c.n == 3 * per_thread
