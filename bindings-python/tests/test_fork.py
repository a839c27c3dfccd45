"""fork() and pickling: a child forked from a connected process uses the
Heaps and proxies it inherited (each Heap attaches anew, a session of the
child's own, on its first use there; the parent's session goes on); a block
open at the fork is the parent's (ForkedError in the child); pickled proxies
(a reference and the heap's socket) come back as proxies of the same object,
in this process, in forked and in spawned pool workers. A block that
another thread of the parent had open at the fork is rolled back in the child."""

import multiprocessing
import os
import pickle
import signal
import threading
import time

import pytest

import uniheap
from forkwork import Counter, bump


def in_child(fn, *args):
    """Run fn(*args) in a forked child; fn returns a list of failed checks.
    Returns that list (['hung'] or ['crashed ...'] when it did not end well)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:                           # the child: never return into pytest
        report = ["child raised"]
        try:
            os.close(rfd)
            report = fn(*args)
        except BaseException as e:
            report = [f"child raised {type(e).__name__}: {e}"]
        finally:
            os.write(wfd, "\n".join(report).encode() or b"ok")
            os._exit(0)
    os.close(wfd)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rpid, status = os.waitpid(pid, os.WNOHANG)
        if rpid == pid:
            break
        time.sleep(0.02)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(rfd)
        return ["hung"]
    with os.fdopen(rfd, "rb") as f:
        report = f.read().decode(errors="replace")
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        return [f"crashed, status {status:#x}: {report}"]
    return [] if report == "ok" else report.split("\n")


def child_uses(heap, c, m, sock, parent_session):
    failed = []

    def check(name, ok):
        if not ok:
            failed.append(name)

    check("read", c.n == 7 and m["k"] == 1 and heap.roots["c"] == c)
    check("own session", heap.info()["session"] != parent_session)
    c.n = 8                                  # a single write
    with heap.atomic():                      # a block
        c.n += 1
        m["k"] = 2
    d = Counter(heap, n=5, label="child")
    heap.roots["child"] = d
    check("atomic fn", heap.atomic(lambda: c.n) == 9)
    with uniheap.connect(sock) as h2:        # a new connection too
        check("new connection", h2.proxy(c.offset).n == 9)
    return failed


def test_child_uses_inherited_heap(heap, heapd):
    c = Counter(heap, n=7, label="parent")
    m = uniheap.PMap(heap, data={"k": 1})
    heap.roots["c"] = c
    session = heap.info()["session"]
    assert in_child(child_uses, heap, c, m, heapd.sock, session) == []
    # the parent's session goes on, and sees what the child committed
    assert heap.info()["session"] == session
    assert c.n == 9 and m["k"] == 2 and heap.roots["child"].n == 5
    with heap.atomic():
        c.n += 1
    assert c.n == 10


def child_in_block(heap, c):
    failed = []
    try:
        c.n                                   # the parent's block: not the child's
        failed.append("read in the parent's block")
    except uniheap.ForkedError:
        pass
    return failed


def wait_report(pid, rfd):
    os.waitpid(pid, 0)
    with os.fdopen(rfd, "rb") as f:
        return f.read().decode(errors="replace")


def test_block_open_at_fork(heap):
    c = Counter(heap, n=1)
    with heap.atomic():
        c.n = 2
        # a child that does not leave the with statement: the block stays
        # the parent's, and every use of it in the child is ForkedError
        assert in_child(child_in_block, heap, c) == []
    assert c.n == 2                            # the parent's block committed

    # A child that leaves it: the with statement ends the block with
    # ForkedError, and the child goes on outside any block.
    rfd, wfd = os.pipe()
    report = []
    pid = None
    try:
        with heap.atomic():
            c.n = 3
            pid = os.fork()
        if pid == 0:
            report.append("the inherited block committed in the child")
    except uniheap.ForkedError:
        pass
    if pid == 0:                               # the child
        try:
            with heap.atomic():
                d = Counter(heap, n=4)
            if d.n != 4 or c.n not in (2, 3):     # 3 once the parent committed
                report.append(f"after the block: {d.n} {c.n}")
        except BaseException as e:
            report.append(f"{type(e).__name__}: {e}")
        finally:
            os.write(wfd, "\n".join(report).encode() or b"ok")
            os._exit(0)
    os.close(wfd)
    assert wait_report(pid, rfd) == "ok"
    assert c.n == 3


def child_after_thread_block(heap, c):
    failed = []
    if heap.in_block():                       # that thread is not here: rolled back
        failed.append("the other thread's block is open in the child")
    if c.n != 1:                               # the thread's write is not committed
        failed.append(f"c.n {c.n}")
    with heap.atomic():                        # c is locked by that thread's session:
        d = Counter(heap, n=5)                 # the child works on its own objects
    if d.n != 5:
        failed.append(f"d.n {d.n}")
    return failed


def test_block_of_another_thread_at_fork(heap):
    c = Counter(heap, n=1)
    opened, done = threading.Event(), threading.Event()

    def other():
        with heap.atomic():
            c.n = 2
            opened.set()
            done.wait(60)

    t = threading.Thread(target=other)
    t.start()
    try:
        assert opened.wait(60)
        assert in_child(child_after_thread_block, heap, c) == []
    finally:
        done.set()
        t.join()
    assert c.n == 2                  # the thread's block committed in the parent


def child_waits(heap, c):
    failed = []
    t = heap.token(c)
    if heap.wait(c, since=t, timeout=0.05) is not None:
        failed.append("a wait with no change returned a token")
    if heap._wait_pool()[0] != 1:                 # the parent's pool is not the child's
        failed.append(f"wait pool {heap._wait_pool()}")
    heap.close()                                  # ends the child's sessions, not the parent's
    return failed


def test_wait_in_child(heap):
    c = Counter(heap, n=1)
    assert heap.wait(c, timeout=0.01) is None     # the parent's pool has a wait session
    assert in_child(child_waits, heap, c) == []
    t = heap.token(c)
    c.n = 2                                        # the parent's sessions go on
    assert heap.wait(c, since=t, timeout=5) is not None


def test_pickle_in_process(heap):
    c = Counter(heap, n=3, label="x")
    m = uniheap.PMap(heap, data={"a": c})
    for obj in (c, m, uniheap.PList(heap, [1, 2]), uniheap.PArray(heap, "i32", [1])):
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and back.offset == obj.offset and type(back) is type(obj)
        assert back.heap is heap
    assert pickle.loads(pickle.dumps(m))["a"].n == 3
    heap.free(c)
    with pytest.raises(uniheap.FreedObjectError):
        pickle.dumps(c)


def test_unpickle_other_heap(heap, connect):
    c = Counter(heap, n=1)
    socket, _file, ref = c.__reduce__()[1]
    with pytest.raises(uniheap.Error, match="serves"):
        uniheap._pickle.unpickle(socket, "/not/the/heap/file", ref)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pool_workers(heap, heapd, method):
    cs = [Counter(heap, n=i, label=f"c{i}") for i in range(6)]
    with heap.atomic():
        for i, c in enumerate(cs):
            heap.roots[f"c{i}"] = c
    session = heap.info()["session"]
    env = os.environ.get("UNIHEAP_SOCKET")
    os.environ["UNIHEAP_SOCKET"] = heapd.sock   # unused by the pickles: they name it
    try:
        ctx = multiprocessing.get_context(method)
        with ctx.Pool(3) as pool:
            results = pool.map(bump, cs)
    finally:
        if env is None:
            os.environ.pop("UNIHEAP_SOCKET", None)
        else:
            os.environ["UNIHEAP_SOCKET"] = env
    for i, (c, made, wsession) in enumerate(results):
        assert c == cs[i] and c.heap is heap       # back to this process's heap
        assert c.n == i + 1
        assert made.n == (i + 1) * 10 and made.label == f"made by c{i}"
        assert wsession != session
    with heap.atomic():                            # the parent's session goes on
        cs[0].n += 1
    assert cs[0].n == 2
    assert heap.check() > 0
