"""Waiting for changes (uniheap.h "Waiting for changes"): Heap.token,
Heap.wait, await Heap.changed, Heap.watch, uniheap.ROOTS and the pool of
wait sessions.

What wakes a wait (a change in another process; tokens of records,
collections and the roots), `since` (no change lost between token and
wait), timeouts, errors, asyncio (the loop keeps running; cancelling
cancels the native wait), the missed-wake-up race (ping-pong between two
processes of tests/notify/peer.py: UNIHEAP_WAIT_ROUNDS rounds, 100000 by
default, a few seconds; fewer where that is too slow), and a waiter killed while it waits."""

import asyncio
import os
import signal
import subprocess
import threading
import time

import pytest

import uniheap

from conftest import REPO, spawn_python, stop_process, wait_for

PEER = REPO / "tests" / "notify" / "peer.py"
ROUNDS = int(os.environ.get("UNIHEAP_WAIT_ROUNDS", "100000"))


class Counter(uniheap.PObject, name="test.wait.Counter"):
    n = uniheap.i64()


class NotifyCell(uniheap.PObject, name="NotifyCell"):
    ping = uniheap.i64()
    pong = uniheap.i64()
    ts = uniheap.i64()


def writer_process(heapd, root, code):
    """A Python process that connects, takes heap.roots[root] as `obj`
    and runs code (after a short pause, so that the test waits first)."""
    src = ("import time, uniheap\n"
           "h = uniheap.connect()\n"
           f"obj = h.roots[{root!r}]\n"
           "time.sleep(0.2)\n" + code + "\nh.close()\n")
    return spawn_python(["-c", src], heapd, stderr=subprocess.PIPE, text=True)


def finish(proc):
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


def test_change_in_another_process_wakes_wait(heap, heapd):
    c = Counter(heap, n=0)
    heap.roots["c"] = c
    tok = heap.token(c)
    w = writer_process(heapd, "c", "obj.n = 7")
    new = heap.wait(c, since=tok, timeout=30)
    finish(w)
    assert new is not None and new != tok
    assert c.n == 7
    assert heap.token(c) == new


def test_since_catches_a_change_made_before_the_wait(heap):
    c = Counter(heap, n=0)
    tok = heap.token(c)
    c.n = 1                          # committed between token and wait
    t0 = time.monotonic()
    new = heap.wait(c, since=tok, timeout=30)
    assert new is not None and new != tok
    assert time.monotonic() - t0 < 30
    assert heap.wait(c, since=new, timeout=0) is None   # timeout 0: just look


def test_timeout_is_honoured(heap):
    c = Counter(heap, n=0)
    t0 = time.monotonic()
    assert heap.wait(c, timeout=0.2) is None
    assert time.monotonic() - t0 >= 0.2
    t0 = time.monotonic()
    assert heap.wait([c, uniheap.ROOTS], timeout=0.1) is None
    assert time.monotonic() - t0 >= 0.1
    with pytest.raises(ValueError):
        heap.wait(c, timeout=-1)


@pytest.mark.parametrize("kind", ["list", "map", "smap", "roots", "array"])
def test_tokens_move_on_change(heap, kind):
    if kind == "list":
        obj = uniheap.PList(heap)
        change = lambda: obj.append(1)            # noqa: E731
    elif kind == "map":
        obj = uniheap.PMap(heap)
        change = lambda: obj.__setitem__("k", 1)  # noqa: E731
    elif kind == "smap":
        obj = uniheap.PSortedMap(heap, key=int)
        change = lambda: obj.__setitem__(5, "v")  # noqa: E731
    elif kind == "array":
        obj = uniheap.PArray(heap, "i64", 4)
        change = lambda: obj.__setitem__(2, 9)    # noqa: E731
    else:
        obj = uniheap.ROOTS
        change = lambda: heap.roots.__setitem__("r", Counter(heap))  # noqa: E731
    tok = heap.token(obj)
    assert heap.wait(obj, since=tok, timeout=0) is None
    change()
    assert heap.token(obj) != tok
    new = heap.wait(obj, since=tok, timeout=10)
    assert new == heap.token(obj)


def test_wait_on_several(heap):
    a, b = Counter(heap), Counter(heap)
    toks = [heap.token(a), heap.token(b)]
    b.n = 3
    new = heap.wait((a, b), since=toks, timeout=10)
    assert new[0] == toks[0] and new[1] != toks[1]
    with pytest.raises(TypeError):
        heap.wait([a, b], since=toks[0], timeout=0)
    with pytest.raises(ValueError):
        heap.wait([a] * 65, timeout=0)
    with pytest.raises(TypeError):
        heap.wait(42, timeout=0)


def test_freed_object_raises(heap):
    c = Counter(heap)
    heap.free(c)
    with pytest.raises(uniheap.FreedObjectError):
        heap.token(c)
    with pytest.raises(uniheap.FreedObjectError):
        heap.wait(c, timeout=0)


def test_freed_while_waiting_raises(heap, heapd):
    c = Counter(heap)
    heap.roots["c"] = c
    w = writer_process(heapd, "c", "del h.roots['c']\nh.free(obj)")
    with pytest.raises(uniheap.FreedObjectError):
        heap.wait(c, timeout=30)
    finish(w)


def test_wait_inside_a_block_raises(heap):
    c = Counter(heap)
    with heap.atomic():
        with pytest.raises(uniheap.StateError):
            heap.wait(c, timeout=0)
    assert heap.wait(c, timeout=0) is None      # fine again outside

    async def changed_in_block():
        with heap.atomic():
            with pytest.raises(uniheap.StateError):
                await heap.changed(c, timeout=0)

    asyncio.run(changed_in_block())


def test_another_threads_block_does_not_stop_a_wait(heap):
    c = Counter(heap)
    out = []
    with heap.atomic():
        c.n = 1
        t = threading.Thread(target=lambda: out.append(heap.wait(c, timeout=0.05)))
        t.start()
        t.join(10)
    assert out == [None]


def test_close_ends_a_wait_of_another_thread(heap):
    c = Counter(heap)
    out = []

    def run():
        try:
            out.append(heap.wait(c))
        except Exception as e:
            out.append(e)

    t = threading.Thread(target=run)
    t.start()
    assert wait_for(lambda: heap._wait_pool()[0] == 1 and heap._wait_pool()[1] == 0)
    time.sleep(0.05)
    heap.close()
    t.join(10)
    assert not t.is_alive()
    assert isinstance(out[0], uniheap.HeapClosedError)
    with pytest.raises(uniheap.HeapClosedError):
        heap.wait(c, timeout=0)


def test_wait_sessions_are_pooled(heap):
    c = Counter(heap)
    for _ in range(5):
        heap.wait(c, timeout=0)
    assert heap._wait_pool() == (1, 1)


def test_changed_keeps_the_event_loop_running(heap, heapd):
    c = Counter(heap, n=0)
    heap.roots["c"] = c

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.create_task(ticker())
        tok = heap.token(c)
        w = writer_process(heapd, "c", "time.sleep(0.3)\nobj.n = 5")
        new = await heap.changed(c, since=tok, timeout=30)
        t.cancel()
        finish(w)
        return new, tok, ticks

    new, tok, ticks = asyncio.run(main())
    assert new is not None and new != tok
    assert c.n == 5
    assert ticks >= 5          # the ticker ran while the wait slept


def test_changed_cancelled_by_wait_for(heap):
    c = Counter(heap)

    async def main():
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(heap.changed(c), 0.1)
        assert heap._wait_pool() == (1, 1)       # the session is back
        assert await heap.changed(c, timeout=0.05) is None
        tok = heap.token(c)
        c.n = 2
        return await heap.changed(c, since=tok, timeout=10), tok

    new, tok = asyncio.run(main())
    assert new is not None and new != tok
    assert heap._wait_pool() == (1, 1)


def test_watch_iterates_sync_and_async(heap, heapd):
    c = Counter(heap, n=0)
    seen = []
    it = heap.watch(c)

    def bump():
        for i in range(3):
            time.sleep(0.05)
            c2.n = i + 1

    h2 = uniheap.connect(heapd.sock)      # one Heap per thread
    try:
        c2 = h2.proxy(c.offset)
        t = threading.Thread(target=bump)
        t.start()
        for tok in it:
            seen.append(tok)
            if c.n == 3:
                break
        t.join()
    finally:
        h2.close()
    assert seen and len(set(seen)) == len(seen)

    async def main():
        got = []
        l = uniheap.PList(heap)

        async def appender():
            for i in range(3):
                await asyncio.sleep(0.05)
                l.append(i)

        t = asyncio.create_task(appender())
        async for tok in heap.watch(l):
            got.append(tok)
            if len(l) == 3:
                break
        await t
        return got

    assert asyncio.run(main())


def test_watch_ends_when_the_heap_closes(heap):
    c = Counter(heap)
    out = []
    t = threading.Thread(target=lambda: out.extend(heap.watch(c)))
    t.start()
    assert wait_for(lambda: heap._wait_pool() == (1, 0))
    heap.close()
    t.join(10)
    assert not t.is_alive() and out == []


def run_pair(heapd, rounds):
    with uniheap.connect(heapd.sock) as h:
        h.roots["cell"] = NotifyCell(h, ping=0, pong=0, ts=0)
    procs = [spawn_python([PEER, heapd.sock, "cell", role, rounds], heapd,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role in ("waiter", "writer")]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=max(120, rounds // 100))
        assert p.returncode == 0, err
        outs.append(out)
    return outs


def test_ping_pong_between_processes_loses_no_wake_up(heapd):
    waiter_out, writer_out = run_pair(heapd, ROUNDS)
    assert f"peer python waiter: {ROUNDS} rounds" in waiter_out
    assert "latency_us p50=" in waiter_out
    assert f"peer python writer: {ROUNDS} rounds" in writer_out


def test_missed_wake_up_race(heap, heapd):
    """A writer process commits a counter in a tight loop; this process
    re-reads and waits with since each round: every wait returns."""
    c = Counter(heap, n=0)
    heap.roots["c"] = c
    n = max(1000, ROUNDS)
    w = writer_process(heapd, "c", f"for i in range(1, {n} + 1):\n    obj.n = i")
    seen = 0
    while seen < n:
        tok = heap.token(c)
        seen = c.n
        if seen >= n:
            break
        assert heap.wait(c, since=tok, timeout=10) is not None, f"lost wake-up at {seen}"
    finish(w)


def test_killed_waiter_leaves_no_waiter(heap, heapd):
    c = Counter(heap, n=0)
    heap.roots["c"] = c
    src = ("import uniheap\nh = uniheap.connect()\nobj = h.roots['c']\n"
           "print('waiting', flush=True)\nh.wait(obj)\n")
    p = spawn_python(["-c", src], heapd, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "waiting"
    time.sleep(0.2)                  # inside the native wait by now
    stop_process(p, 5, signal.SIGKILL)
    # The heap works on: commits go through, and a new wait is woken.
    # (That heapd took the killed waiter's count back is checked by the
    # C test, tests/c/test_wait.c: the count is not public.)
    tok = heap.token(c)
    c.n = 1
    assert heap.wait(c, since=tok, timeout=10) is not None
