"""Several Python processes on one heap: bank transfers under contention
with an oracle of acknowledged transfers, and a concurrent auditor whose
read-only blocks must never see money created or destroyed."""

import json
import subprocess

import uniheap

from conftest import WORKERS, spawn_python, stop_process, wait_for
from bankdefs import accounts, create_accounts, read_records

NACCOUNTS = 8
INITIAL = 1000
TRANSFERS = 10000


def replay(records, balances):
    """Apply the acknowledged transfers ("A" records) to balances.
    Returns how many moved money."""
    moved = 0
    for r in records:
        if r[0] == "A" and r[6] == "1":
            src, dst, amount = int(r[3]), int(r[4]), int(r[5])
            balances[src] -= amount
            balances[dst] += amount
            moved += 1
    return moved


def test_bank_transfers_and_auditor(heap, heapd, tmp_dir):
    create_accounts(heap, NACCOUNTS, INITIAL)
    total = NACCOUNTS * INITIAL
    stop = tmp_dir / "stop"
    go = tmp_dir / "go"
    audit_out = tmp_dir / "audit.json"
    auditor = spawn_python([WORKERS / "bank_auditor.py", total, stop, audit_out], heapd,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers = []
    for wid in range(3):
        mode = "fn" if wid % 2 == 0 else "with"
        workers.append(spawn_python(
            [WORKERS / "bank_worker.py", wid, TRANSFERS, 60, tmp_dir / f"ack{wid}", 1000 + wid, mode,
             go],
            heapd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    go.touch()                             # all workers start together
    try:
        outs = []
        for w in workers:
            out, err = w.communicate(timeout=120)
            outs.append((w.returncode, out, err))
        stop.touch()
        a_out, a_err = auditor.communicate(timeout=60)
    finally:
        for p in workers + [auditor]:
            stop_process(p)
    for rc, out, err in outs:
        assert rc == 0, err
        print(out.strip())
    assert auditor.returncode == 0, a_err

    # every acknowledged transfer is in the final balances, nothing else
    balances = [INITIAL] * NACCOUNTS
    moved = 0
    for wid in range(3):
        recs = read_records(tmp_dir / f"ack{wid}")
        acks = [r for r in recs if r[0] == "A"]
        assert len(acks) == TRANSFERS, f"worker {wid}: {len(acks)} of {TRANSFERS} acknowledged"
        moved += replay(recs, balances)
    assert moved > 0
    accts = accounts(heap)
    assert [a.balance for a in accts] == balances
    assert sum(a.balance for a in accts) == total
    assert all(b >= 0 for b in balances)

    audit = json.loads(audit_out.read_text())
    print("auditor:", audit["audits"], "audits,", audit["conflicts"], "conflicts")
    assert audit["audits"] > 0
    assert audit["bad"] == [], f"auditor saw wrong totals: {audit['bad'][:10]}"


def test_two_processes_see_each_other(heap, heapd, tmp_dir):
    """A writer process and this process: updates made in one are seen by
    the other, on the same objects (proxies hold offsets, not copies)."""
    create_accounts(heap, 2, 0)
    code = (
        "import sys, uniheap\n"
        "from bankdefs import accounts\n"
        "with uniheap.connect() as h:\n"
        "    a, b = accounts(h)\n"
        "    for i in range(1, 101):\n"
        "        with h.atomic():\n"
        "            a.balance = i\n"
        "            b.balance = -i\n"
        "print('done')\n"
    )
    p = spawn_python(["-c", code], heapd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
    a, b = accounts(heap)
    seen = set()
    try:
        def finished():
            try:
                with heap.atomic():
                    va, vb = a.balance, b.balance
            except uniheap.Conflict:
                return False
            assert va == -vb                # a block never sees half a commit
            seen.add(va)
            return va == 100
        assert wait_for(finished, timeout=60, interval=0.001)
        out, err = p.communicate(timeout=60)
    finally:
        stop_process(p)
    assert p.returncode == 0, err
    assert a.balance == 100 and b.balance == -100



def test_shared_map_writers(heap, heapd, tmp_dir):
    """Three processes put, count and delete in one PMap: no lost update,
    no lost or resurrected key."""
    m = uniheap.PMap(heap)
    m["count"] = 0
    heap.roots["t.mp.map"] = m
    go = tmp_dir / "go"
    n = 600
    procs = [spawn_python([WORKERS / "map_writer.py", wid, n, go], heapd,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for wid in range(3)]
    go.touch()
    try:
        results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    finally:
        for p in procs:
            stop_process(p)
    for out, err, rc in results:
        assert rc == 0, err
    assert m["count"] == 3 * n
    expected = {"count": 3 * n}
    for wid in range(3):
        for i in range(n):
            expected[f"w{wid}-{i}"] = i
        for i in range(9, n, 10):
            del expected[f"w{wid}-{i - 5}"]
    assert len(m) == len(expected)
    assert dict(m) == expected
    m.check()


def while_writing(heapd, worker, count, read):
    """Run worker (a script of WORKERS taking its step count) and call
    read() until it exits; it must exit 0. Returns the calls made."""
    p = spawn_python([WORKERS / worker, count], heapd,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    calls = 0
    try:
        while p.poll() is None:
            read()
            calls += 1
        _, err = p.communicate(timeout=60)
    finally:
        stop_process(p)
    assert p.returncode == 0, err
    return calls


def test_string_field_read_while_replaced(heap, heapd):
    """A reader in a block always sees a string that belongs with the
    number written in the same block; outside a block a read is one whole
    value of some commit, never an error: a string freed under its copy
    (the writer's commit replaced it) is read again. Never garbage, never a
    crash."""
    from string_writer import text

    class Cell(uniheap.PObject, name="t.mp.Cell"):
        n = uniheap.i64()
        s = uniheap.string()

    cell = Cell(heap, n=0, s=text(0))
    heap.roots["t.mp.cell"] = cell
    count = 150000
    got = {"in_block": 0, "outside": 0, "conflicts": 0}

    def valid(s):
        head, _, _ = s.partition(":")
        return head.isdigit() and text(int(head)) == s

    def read():
        try:
            with heap.atomic():
                n, s = cell.n, cell.s
            assert s == text(n), (n, s)
            got["in_block"] += 1
        except uniheap.Conflict:
            got["conflicts"] += 1
        s = cell.s
        assert valid(s), s
        got["outside"] += 1
    while_writing(heapd, "string_writer.py", count, read)
    assert got["in_block"] > 0 and got["outside"] > 0
    assert (cell.n, cell.s) == (count, text(count))


def test_values_read_while_replaced(heap, heapd):
    """Outside blocks, reads of bytes values that another process keeps
    replacing (PMap get, PSortedMap get and iteration, PList item) give
    one whole value of some commit and never an error, though each
    replacing commit frees the value read a moment before."""
    from value_writer import KEYS, valid, value

    heap.roots["t.mp.vals"] = uniheap.PMap(heap, data={"k": value(0)})
    heap.roots["t.mp.svals"] = uniheap.PSortedMap(heap, data={k: value(0) for k in KEYS})
    heap.roots["t.mp.list"] = uniheap.PList(heap, [value(0)] * 4)
    vals, svals, lst = (heap.roots[n] for n in ("t.mp.vals", "t.mp.svals", "t.mp.list"))
    count = 100000

    def read():
        for v in (vals["k"], vals.get("k"), svals["a"], svals.get("e"), *lst):
            assert valid(v), v
        items = list(svals.items())
        keys = [k for k, _ in items]
        assert keys == sorted(set(keys)) and set(keys) <= set(KEYS), keys
        assert all(valid(v) for _, v in items), items
        assert all(valid(v) for v in vals.values())
    scans = while_writing(heapd, "value_writer.py", count, read)
    print(f"{8 * scans} reads and {scans} scans while values were replaced")
    assert scans > 200
    assert vals["k"] == value(count) and lst[count % 4] == value(count)


def test_asdict_reads_one_commit(heap, heapd):
    """uniheap.asdict outside a block gives the fields of one commit: a
    writer sets every field of a record in each of its blocks, and no read
    mixes two of them (single field reads may)."""
    from record_writer import Rec, blob, text

    heap.roots["t.mp.rec"] = Rec(heap, a=0, b=0, c=0, name=text(0), data=blob(0))
    rec = heap.roots["t.mp.rec"]
    count = 30000
    seen = set()

    def read():
        d = uniheap.asdict(rec)
        i = d["a"]
        assert d == {"a": i, "name": text(i), "b": i, "data": blob(i), "c": i}, d
        t = uniheap.astuple(rec)
        assert t == (t[0], text(t[0]), t[0], blob(t[0]), t[0]), t
        seen.add(i)
    reads = 2 * while_writing(heapd, "record_writer.py", count, read)
    print(f"{reads} whole-record reads, {len(seen)} commits seen")
    assert len(seen) > 10
    assert uniheap.astuple(rec) == (count, text(count), count, blob(count), count)
