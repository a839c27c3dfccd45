"""Bytes per record of the YCSB table: uniheap against LMDB, same data.

    make bench                      (or)
    python3 bench/python/bytes_per_record.py [--records N]

Both stores get the table bench/ycsb loads: N records under YCSB's hashed
keys ("user" + fnvhash64(keynum)), ten random 100-byte fields each,
inserted 500 per block / write transaction.

uniheap: the table is a PSortedMap (str -> ycsb.Record), as bench/ycsb's
uniheap backend builds it, in a private heapd on a fresh heap in /dev/shm.
Its cost is what heapd's status reports as held by arenas after the load
minus before it (heapctl status: arena bytes). The breakdown loads a
second fresh heap with the same keys and an i64 per key instead of a
record: that is the map's share (leaves, inner nodes, key objects, their
arenas); the rest is the records' share (their slots and arenas).

LMDB: the table is one named database of bench/ycsb's LMDB peer (the
record encoded by its codec); its cost is the database's pages (branch,
leaf, overflow) times the page size, and beside it the environment's
footprint (last page number + 1, free pages and meta pages included).
The ratio is uniheap / LMDB's table pages: at most 1 is the goal.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bindings-python"))

import uniheap  # noqa: E402
from heapd_proc import start_heapd  # noqa: E402

sys.path.insert(0, str(REPO / "bench" / "ycsb" / "python"))
from ycsb import codec  # noqa: E402
from ycsb.backends.uniheap_db import FIELD_MAX, Record  # noqa: E402
from ycsb.generators import fnvhash64  # noqa: E402
from ycsb.values import random_value  # noqa: E402

FIELDS = [f"field{i}" for i in range(10)]
BLOCK = 500


def table_data(n):
    """The keys and records of the table, as the YCSB load makes them."""
    rnd = random.Random(7)
    keys = [f"user{fnvhash64(i)}" for i in range(n)]
    return keys, [{f: random_value(rnd, FIELD_MAX) for f in FIELDS} for _ in keys]


def arena_bytes(build, sock):
    out = subprocess.run([str(build / "heapctl"), "--socket", sock, "--json", "status"],
                         check=True, capture_output=True, text=True).stdout
    return int(json.loads(out).get("arena_bytes", 0))     # proto3 JSON leaves out a 0


def uniheap_bytes(build, tmp, keys, records):
    """Arena bytes a table of keys -> records adds to a fresh heap
    (records None: an i64 per key instead)."""
    os.makedirs(tmp)
    proc, sock = start_heapd(build, tmp, ["--size", "1G", "--durability", "memory",
                                          "--log-size", "16M"])
    try:
        with uniheap.connect(sock) as heap:
            with heap.atomic():
                table = uniheap.PSortedMap(heap, key=str)
                heap.roots["ycsb.usertable"] = table
            before = arena_bytes(build, sock)
            for i in range(0, len(keys), BLOCK):
                with heap.atomic():
                    for j in range(i, min(i + BLOCK, len(keys))):
                        table[keys[j]] = Record(heap, **records[j]) if records else j
            after = arena_bytes(build, sock)
            assert len(table) == len(keys)
        return after - before
    finally:
        proc.terminate()
        proc.wait(10)


def lmdb_bytes(path, keys, records):
    """(the table's pages, the environment's used pages) in bytes."""
    import lmdb
    env = lmdb.open(path, map_size=1 << 30, max_dbs=16, sync=False, metasync=False,
                    writemap=True, readahead=False)
    try:
        db = env.open_db(b"usertable")
        for i in range(0, len(keys), BLOCK):
            with env.begin(db=db, write=True) as txn:
                for j in range(i, min(i + BLOCK, len(keys))):
                    txn.put(keys[j].encode(), codec.encode(records[j]))
        with env.begin(db=db) as txn:
            st = txn.stat(db)
        table = (st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"]) * st["psize"]
        return table, (env.info()["last_pgno"] + 1) * st["psize"]
    finally:
        env.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=100_000)
    args = ap.parse_args()
    n = args.records
    build = Path(os.environ.get("UNIHEAP_BUILD", REPO / "build"))
    keys, records = table_data(n)
    tmp = tempfile.mkdtemp(prefix="uniheap-bpr-",
                           dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        total = uniheap_bytes(build, os.path.join(tmp, "u1"), keys, records)
        map_only = uniheap_bytes(build, os.path.join(tmp, "u2"), keys, None)
        os.makedirs(os.path.join(tmp, "lmdb"))
        l_table, l_env = lmdb_bytes(os.path.join(tmp, "lmdb"), keys, records)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    user = sum(len(v) for v in records[0].values()) + sum(len(k) for k in keys) / n
    print(f"# YCSB table, {n} records of 10 x {FIELD_MAX} B, hashed keys "
          f"(avg {sum(len(k) for k in keys) / n:.1f} B): bytes per record "
          f"(user data {user:.0f} B)")
    for name, b in (("uniheap, all", total),
                    ("  records (slots, their arenas)", total - map_only),
                    ("  sorted map (leaves, nodes, key objects)", map_only),
                    ("LMDB table pages", l_table), ("LMDB environment", l_env)):
        print(f"  {name:42s} {b / n:8.1f}")
    print(f"  ratio uniheap / LMDB table {total / l_table:.2f}x "
          f"(goal <= 1.00), / LMDB environment {total / l_env:.2f}x")


if __name__ == "__main__":
    main()
