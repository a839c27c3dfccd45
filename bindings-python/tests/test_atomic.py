"""Failure-atomic blocks: `with heap.atomic():` commits or rolls back
everything, heap.atomic(fn, ...) re-runs fn on Conflict, conflicts between
sessions raise uniheap.Conflict with the loser rolled back."""

import threading

import pytest

import uniheap


class Acct(uniheap.PObject, name="t.atomic.Acct"):
    balance = uniheap.i64()
    note = uniheap.string()
    peer = uniheap.ref("t.atomic.Acct")


class Boom(Exception):
    pass


def test_block_commits_everything(heap, connect):
    a = Acct(heap, balance=100)
    b = Acct(heap, balance=0)
    other = connect()
    oa, ob = other.proxy(a.offset), other.proxy(b.offset)
    with heap.atomic() as h:
        assert h is heap
        assert heap.in_block()
        a.balance -= 30
        b.balance += 30
        a.note = "sent"
        a.peer = b
        heap.roots["t.atomic.a"] = a
        assert a.balance == 70 and b.balance == 30      # own writes
        assert oa.balance == 100 and ob.balance == 0    # others: not yet
        assert "t.atomic.a" not in other.roots
    assert not heap.in_block()
    assert (oa.balance, ob.balance, oa.note) == (70, 30, "sent")
    assert oa.peer == ob
    assert other.roots["t.atomic.a"] == oa


def test_exception_rolls_back_everything(heap):
    a = Acct(heap, balance=100, note="before")
    keep = Acct(heap, balance=1)
    heap.roots["t.atomic.keep"] = keep
    err = Boom("stop")
    with pytest.raises(Boom) as ei:
        with heap.atomic():
            a.balance = 5
            a.note = "during"
            a.peer = keep
            fresh = Acct(heap, balance=9)
            heap.roots["t.atomic.fresh"] = fresh
            del heap.roots["t.atomic.keep"]
            heap.free(keep)
            raise err
    assert ei.value is err                 # the same exception, propagated
    assert not heap.in_block()
    assert a.balance == 100 and a.note == "before" and a.peer is None
    assert "t.atomic.fresh" not in heap.roots
    assert heap.roots["t.atomic.keep"] == keep
    assert keep.balance == 1               # the free was rolled back too


def test_base_exception_rolls_back(heap):
    a = Acct(heap, balance=1)
    with pytest.raises(KeyboardInterrupt):
        with heap.atomic():
            a.balance = 2
            raise KeyboardInterrupt
    assert a.balance == 1
    assert not heap.in_block()


def test_nested_blocks_flatten(heap, connect):
    a = Acct(heap, balance=0)
    other = connect().proxy(a.offset)
    with heap.atomic():
        a.balance = 1
        with heap.atomic():
            a.balance = 2
            assert heap.in_block()
        assert heap.in_block()
        assert other.balance == 0          # inner end is not a commit
    assert other.balance == 2
    with pytest.raises(Boom):
        with heap.atomic():
            a.balance = 3
            with heap.atomic():
                a.balance = 4
                raise Boom
    assert a.balance == 2


def test_atomic_fn_returns_result(heap):
    a = Acct(heap, balance=10)

    def transfer(src, dst, amount, *, note):
        src.balance -= amount
        dst.balance += amount
        src.note = note
        return src.balance, dst.balance

    b = Acct(heap, balance=0)
    assert heap.atomic(transfer, a, b, 4, note="four") == (6, 4)
    assert a.balance == 6 and b.balance == 4 and a.note == "four"
    assert not heap.in_block()


def test_atomic_fn_exception_rolls_back(heap):
    a = Acct(heap, balance=10)
    calls = []

    def body():
        calls.append(1)
        a.balance = 99
        raise Boom("no")

    with pytest.raises(Boom):
        heap.atomic(body)
    assert calls == [1]                    # not retried: not a conflict
    assert a.balance == 10
    assert not heap.in_block()


def test_atomic_fn_inside_a_block_nests(heap, connect):
    """heap.atomic(fn) inside an open block runs fn as a nested level: its
    writes commit (or roll back) with the outer block."""
    a = Acct(heap, balance=0)
    other = connect().proxy(a.offset)

    def bump(n):
        a.balance += n
        return a.balance

    with heap.atomic():
        assert heap.atomic(bump, 5) == 5
        assert other.balance == 0
        assert heap.in_block()
    assert other.balance == 5
    with pytest.raises(Boom):
        with heap.atomic():
            heap.atomic(bump, 10)
            raise Boom
    assert a.balance == 5


def test_max_tries(heap):
    assert heap.max_tries == 100
    heap.max_tries = 7
    assert heap.max_tries == 7


def test_conflict_between_sessions(heap, connect):
    a = Acct(heap, balance=1)
    b = Acct(heap, balance=2)
    h2 = connect()
    a2, b2 = h2.proxy(a.offset), h2.proxy(b.offset)
    with heap.atomic():
        a.balance = 10                     # heap holds a's lock until commit
        with pytest.raises(uniheap.Conflict) as ei:
            with h2.atomic():
                b2.balance = 20
                a2.balance = 30            # meets the lock
        assert isinstance(ei.value, uniheap.Error)
        assert ei.value.code == -5         # UH_ECONFLICT
        assert not h2.in_block()
    assert a.balance == 10
    assert b.balance == 2                  # the loser was rolled back whole
    assert h2.stats()["conflicts"] >= 1
    # the loser's session is usable again
    with h2.atomic():
        b2.balance = 21
    assert b.balance == 21


def test_atomic_fn_gives_up_after_max_tries(heap, connect):
    a = Acct(heap, balance=1)
    h2 = connect()
    a2 = h2.proxy(a.offset)
    h2.max_tries = 3
    calls = []

    def body():
        calls.append(1)
        a2.balance += 1

    r0 = h2.stats()["retries"]
    with heap.atomic():
        a.balance = 50
        with pytest.raises(uniheap.Conflict):
            h2.atomic(body)
    assert len(calls) == 3
    assert h2.stats()["retries"] >= r0 + 2
    assert a.balance == 50
    # with the lock gone, the same call succeeds
    calls.clear()
    h2.atomic(body)
    assert calls == [1] and a.balance == 51


def test_atomic_fn_retries_until_success(heapd, connect):
    """Two threads, each with its own connection, increment one counter
    through heap.atomic(fn): every increment lands exactly once."""
    h0 = connect()
    counter = Acct(h0, balance=0)
    off = counter.offset
    per_thread = 100
    errors = []

    def work():
        try:
            with uniheap.connect(heapd.sock) as h:
                h.max_tries = 100000
                c = h.proxy(off)

                def inc():
                    c.balance = c.balance + 1

                for _ in range(per_thread):
                    h.atomic(inc)
        except BaseException as e:             # reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert counter.balance == 2 * per_thread


def test_collections_join_the_block(heap, connect):
    a = Acct(heap, balance=5)
    m = uniheap.PMap(heap)
    pl = uniheap.PList(heap)
    other = connect()
    om = other.proxy(m.offset)
    with heap.atomic():
        a.balance = 6
        m["a"] = a
        pl.append(a)
        assert "a" not in om
    assert om["a"].balance == 6 and len(pl) == 1
    with pytest.raises(Boom):
        with heap.atomic():
            m["b"] = 1
            pl.append(2)
            a.balance = 7
            raise Boom
    assert dict(m) == {"a": a} and list(pl) == [a] and a.balance == 6
