"""Crashes: a Python process SIGKILLed inside a block leaves nothing behind
and blocks nobody for long; a bank worker killed at a random point loses
no acknowledged transfer; heapd killed and restarted keeps what Python
committed."""

import signal
import subprocess

import pytest

import uniheap
from conftest import WORKERS, run_python, spawn_python, stop_process, wait_for
from bankdefs import Account, accounts, create_accounts, read_records


def test_sigkill_inside_block(heap, heapd, tmp_dir):
    a, b = create_accounts(heap, 2, 100)
    b.balance = 200
    ready = tmp_dir / "ready"
    child = spawn_python([WORKERS / "crash_child.py", ready], heapd,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        if not wait_for(lambda: ready.exists() or child.poll() is not None, timeout=30):
            pytest.fail("the child never got inside its block")
        assert child.poll() is None, child.stderr.read().decode()
        # the child holds the locks of a and b: others lose the conflict
        heap.max_tries = 2
        with pytest.raises(uniheap.Conflict):
            with heap.atomic():
                a.balance = 1
        assert a.balance == 100
        # its uncommitted writes are invisible
        assert (a.balance, b.balance, a.owner) == (100, 200, "acct0")
    finally:
        rc = stop_process(child, sig=signal.SIGKILL)
    assert rc == -signal.SIGKILL

    # rolled back: old values, no ghost root
    assert (a.balance, b.balance, a.owner) == (100, 200, "acct0")
    assert "t.crash.ghost" not in heap.roots

    # another process updates the same objects once heapd released the locks
    r = run_python([WORKERS / "crash_updater.py", 10, 20], heapd, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (a.balance, b.balance) == (10, 20)

    # and this process too
    heap.max_tries = 100000
    heap.atomic(lambda: setattr(a, "balance", a.balance + 1))
    assert a.balance == 11

    # heapd still serves
    r = heapd.heapctl("health")
    assert r.returncode == 0 and "SERVING" in r.stdout
    with uniheap.connect(heapd.sock) as h2:
        assert accounts(h2)[0].balance == 11
        assert "t.crash.ghost" not in h2.roots


def oracle(recs_by_worker, n, initial):
    """Balances from every acknowledged transfer, plus the transfers that
    were in flight (an "I" record without its "A") when a worker died."""
    balances = [initial] * n
    in_flight = []
    for recs in recs_by_worker:
        pending = None
        for r in recs:
            src, dst, amount = int(r[3]), int(r[4]), int(r[5])
            if r[0] == "I":
                assert pending is None, "two intents without an ack"
                pending = (src, dst, amount)
            else:
                assert pending == (src, dst, amount)
                pending = None
                if r[6] == "1":
                    balances[src] -= amount
                    balances[dst] += amount
        if pending:
            in_flight.append(pending)
    return balances, in_flight


def test_killed_bank_worker_loses_no_ack(heap, heapd, tmp_dir):
    n, initial = 6, 1000
    create_accounts(heap, n, initial)
    ack0, ack1 = tmp_dir / "ack0", tmp_dir / "ack1"
    victim = spawn_python([WORKERS / "bank_worker.py", 0, 100000, 60, ack0, 11, "fn"], heapd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    other = spawn_python([WORKERS / "bank_worker.py", 1, 300, 60, ack1, 12, "with"], heapd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def acked(path, k):
            return path.exists() and path.stat().st_size >= 2 * 64 * k
        assert wait_for(lambda: acked(ack0, 150) or victim.poll() is not None, timeout=60)
        assert victim.poll() is None, victim.stderr.read().decode()
        stop_process(victim, sig=signal.SIGKILL)
        _, err = other.communicate(timeout=120)
        assert other.returncode == 0, err.decode()
    finally:
        stop_process(victim, sig=signal.SIGKILL)
        stop_process(other)

    recs = [read_records(ack0), read_records(ack1)]
    balances, in_flight = oracle(recs, n, initial)
    assert len(in_flight) <= 1
    final = [a.balance for a in accounts(heap)]
    assert sum(final) == n * initial
    candidates = [balances]
    for src, dst, amount in in_flight:   # committed or not: both are fine
        alt = list(balances)
        alt[src] -= amount
        alt[dst] += amount
        candidates.append(alt)
    assert final in candidates

    # the dead worker's locks do not stop a new one
    r = run_python([WORKERS / "bank_worker.py", 2, 50, 60, tmp_dir / "ack2", 13, "fn"], heapd,
                   timeout=120)
    assert r.returncode == 0, r.stderr
    assert sum(a.balance for a in accounts(heap)) == n * initial


def test_heapd_killed_keeps_commits(heap, heapd, connect):
    accts = create_accounts(heap, 3, 50)
    with heap.atomic():
        accts[0].balance = 1
        accts[1].balance = 2
        accts[0].owner = "committed"
        heap.roots["t.crash.map"] = uniheap.PMap(heap, data={"k": "v"})
    heap.close()
    heapd.kill()
    heapd.start()
    h = connect()
    a = accounts(h)
    assert [x.balance for x in a] == [1, 2, 50]
    assert a[0].owner == "committed"
    assert dict(h.roots["t.crash.map"]) == {"k": "v"}
    assert isinstance(a[0], Account)
    a[2].balance = 3
    assert a[2].balance == 3
