"""Python binding micro-benchmarks, each against a peer measured in the
same run: a plain __slots__ attribute, dict, and py-lmdb.

    make bench                      (or)
    python3 bench/python/bench_py.py [--socket S] [--durability memory|sync]

Without --socket it starts a private heapd on a fresh heap in /dev/shm
(tmpfs) and stops it at the end. Figures are ns per operation, the best
of --repeat timings (timeit); ratios are uniheap / peer. The map gets
probe the same 1000 random keys over and over (warm caches) for every
contender; py-lmdb runs them in one read transaction per 1000 gets.
PMap.view (a zero-copy memoryview of the value) is set against py-lmdb's
buffers=True get, its zero-copy peer.

The YCSB-C-shaped loop reads whole records (10 fields of 100 bytes) by
scrambled-zipfian keys (bench/ycsb's generator): uniheap a ycsb.Record
object from a PMap, all fields read; dict a dict of the fields; py-lmdb
the record's bytes (bench/ycsb's codec), decoded.
"""
import argparse
import os
import random
import shutil
import sys
import tempfile
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bindings-python"))

import uniheap  # noqa: E402
from heapd_proc import start_heapd  # noqa: E402

sys.path.insert(0, str(REPO / "bench" / "ycsb" / "python"))
from ycsb import codec  # noqa: E402
from ycsb.backends.uniheap_db import RECORD_FIELDS, Record  # noqa: E402
from ycsb.generators import ScrambledZipfianGenerator  # noqa: E402


class Account(uniheap.PObject, name="bench.Account"):
    balance = uniheap.i64()
    rate = uniheap.f64()


class Plain:
    __slots__ = ("balance", "rate")


def ns(stmt, number, repeat, glb):
    t = min(timeit.repeat(stmt, globals=glb, number=number, repeat=repeat))
    return t / number * 1e9


def row(name, mine, peer, peer_name):
    print(f"| {name:<42} | {mine:9.1f} | {peer:9.1f} | {peer_name:<16} | {mine / peer:6.2f}x |")


def bench(heap, n_keys, number, repeat, lmdb_dir):
    acct = Account(heap, balance=7, rate=1.5)
    plain = Plain()
    plain.balance, plain.rate = 7, 1.5
    g = {"a": acct, "p": plain, "heap": heap}
    print(f"| {'operation':<42} | {'uniheap':>9} | {'peer':>9} | {'peer':<16} | {'ratio':>7} |")
    print(f"|{'-' * 44}|{'-' * 11}|{'-' * 11}|{'-' * 18}|{'-' * 9}|")
    row("field get (i64)", ns("a.balance", number, repeat, g),
        ns("p.balance", number, repeat, g), "__slots__ attr")
    row("field set (i64, outside a block)", ns("a.balance = 5", number // 10, repeat, g),
        ns("p.balance = 5", number, repeat, g), "__slots__ attr")

    def in_block():
        with heap.atomic():
            for _ in range(1000):
                acct.balance = 5
    t_block = min(timeit.repeat(in_block, number=max(1, number // 10000), repeat=repeat))
    row("field set (i64, inside a block)", t_block / max(1, number // 10000) / 1000 * 1e9,
        ns("p.balance = 5", number, repeat, g), "__slots__ attr")

    def empty():
        with heap.atomic():
            pass
    import threading
    lock = threading.Lock()

    def locked():
        with lock:
            pass
    g.update(empty=empty, locked=locked)
    row("empty `with heap.atomic()` block", ns("empty()", number // 10, repeat, g),
        ns("locked()", number // 10, repeat, g), "`with Lock()`")

    # Map get of a 100-byte value: uniheap PMap vs dict vs py-lmdb.
    import lmdb
    rnd = random.Random(42)
    keys = [f"user{rnd.getrandbits(62):019d}" for _ in range(n_keys)]
    val = bytes(rnd.getrandbits(8) for _ in range(100))
    pm = uniheap.PMap(heap, key=str)
    heap.roots["bench.map"] = pm
    for i in range(0, n_keys, 1000):
        with heap.atomic():
            for k in keys[i:i + 1000]:
                pm[k] = val
    d = dict.fromkeys(keys, val)
    env = lmdb.open(lmdb_dir, map_size=1 << 30, sync=False, metasync=False, writemap=True)
    with env.begin(write=True) as txn:
        for k in keys:
            txn.put(k.encode(), val)
    probe = [keys[rnd.randrange(n_keys)] for _ in range(1000)]
    probe_b = [k.encode() for k in probe]
    g.update(pm=pm, d=d, env=env, probe=probe, probe_b=probe_b)
    gets = max(1, number // 10000)
    t_pm = ns("for k in probe: pm[k]", gets, repeat, g) / 1000
    t_d = ns("for k in probe: d[k]", gets * 10, repeat, g) / 1000
    t_l = ns("with env.begin(buffers=False) as t:\n for k in probe_b: t.get(k)",
             gets, repeat, g) / 1000
    t_pmb = ns("with heap.atomic():\n for k in probe: pm[k]", gets, repeat, g) / 1000
    row(f"PMap get, 100-byte value ({n_keys} keys)", t_pm, t_d, "dict")
    row(f"PMap get, 100-byte value ({n_keys} keys)", t_pm, t_l, "py-lmdb get")
    row("  the same, 1000 gets per block", t_pmb, t_l, "py-lmdb get")
    t_pv = ns("for k in probe: pm.view(k)", gets, repeat, g) / 1000
    t_lv = ns("with env.begin(buffers=True) as t:\n for k in probe_b: t.get(k)",
              gets, repeat, g) / 1000
    row("  PMap view, zero-copy memoryview", t_pv, t_lv, "py-lmdb buffers")
    env.close()
    ycsb_c(heap, min(n_keys, 20_000), gets, repeat, lmdb_dir + "-ycsb")
    return heap.stats()


def ycsb_c(heap, n_rec, gets, repeat, lmdb_dir):
    """Whole-record reads by scrambled-zipfian keys, 1000 per timing loop."""
    import lmdb
    from operator import attrgetter, itemgetter
    rnd = random.Random(7)
    keys = [f"user{i:019d}" for i in range(n_rec)]
    fields = {f: bytes(rnd.getrandbits(8) for _ in range(100)) for f in RECORD_FIELDS}
    table = uniheap.PMap(heap, key=str)
    heap.roots["bench.ycsb"] = table
    for i in range(0, n_rec, 500):
        with heap.atomic():
            for k in keys[i:i + 500]:
                table[k] = Record(heap, **fields)
    d = {k: dict(fields) for k in keys}
    env = lmdb.open(lmdb_dir, map_size=1 << 30, sync=False, metasync=False, writemap=True)
    with env.begin(write=True) as txn:
        for k in keys:
            txn.put(k.encode(), codec.encode(fields))
    zipf = ScrambledZipfianGenerator(rnd, 0, n_rec - 1)
    probe = [keys[zipf.next_value()] for _ in range(1000)]
    g = {"table": table, "d": d, "env": env, "probe": probe,
         "probe_b": [k.encode() for k in probe], "decode": codec.decode,
         "rec": attrgetter(*RECORD_FIELDS), "drec": itemgetter(*RECORD_FIELDS),
         "astuple": uniheap.astuple}
    t_u = ns("for k in probe: rec(table[k])", gets, repeat, g) / 1000
    t_d = ns("for k in probe: drec(d[k])", gets * 10, repeat, g) / 1000
    t_l = ns("with env.begin(buffers=False) as t:\n for k in probe_b: decode(t.get(k))",
             gets, repeat, g) / 1000
    t_ut = ns("for k in probe: astuple(table[k])", gets, repeat, g) / 1000
    name = f"YCSB-C read, 10x100 B record ({n_rec} recs)"
    row(name, t_u, t_d, "dict")
    row(name, t_u, t_l, "py-lmdb + decode")
    row("  the same, uniheap.astuple (one read)", t_ut, t_d, "dict")
    env.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--socket", help="an existing heapd's socket (else a private heapd)")
    ap.add_argument("--durability", default="memory", choices=["memory", "sync"])
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--number", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    scale = float(os.environ.get("BENCH_SCALE", "1"))
    number = max(10000, int(args.number * scale))
    build = Path(os.environ.get("UNIHEAP_BUILD", REPO / "build"))
    tmp = tempfile.mkdtemp(prefix="uniheap-bench-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    proc = None
    try:
        sock = args.socket
        if not sock:
            proc, sock = start_heapd(build, tmp, ["--size", "1G", "--durability", args.durability,
                                                  "--log-size", "16M"])
        print(f"# Python {sys.version.split()[0]}, heap {args.durability} on tmpfs, "
              f"LMDB NOSYNC|NOMETASYNC|WRITEMAP on tmpfs; ns per operation, best of {args.repeat}")
        with uniheap.connect(sock) as heap:
            st = bench(heap, args.keys, number, args.repeat, os.path.join(tmp, "lmdb"))
        print(f"# heap stats: commits {st['commits']}, empty commits {st['empty_commits']}, "
              f"aborts {st['aborts']}")
    finally:
        if proc:
            proc.terminate()
            proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
