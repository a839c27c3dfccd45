"""One fresh store per series of runs: what a backend needs on disk or as a
server, and the -p properties that point the clients at it.

    with open_store("uniheap", "memory", config) as store:
        store.props     # {"uniheap.socket": ...} for every client
        store.check()   # (passed, text): heapctl check, for uniheap

Durability classes (what survives what):
    memory  uniheap --durability memory, LMDB MDB_NOSYNC|MDB_NOMETASYNC|
            MDB_WRITEMAP, Redis without persistence, Chronicle Map (a
            mapped file, never synced), the in-process maps: a process
            crash at most
    sync    uniheap --durability sync, LMDB's default (fdatasync per
            commit), Redis appendfsync always: a power loss
"""
import json
import shutil

from .services import Heapd, Redis, temp_dir

# Backends per durability class, and what each one is in that class.
CLASSES = {
    "memory": {"uniheap": "uniheap --durability memory",
               "lmdb": "MDB_NOSYNC|MDB_NOMETASYNC|MDB_WRITEMAP",
               "memory": "in-process map",
               "redis": "Redis 7, no persistence",
               "chronicle": "Chronicle Map file (never synced)"},
    "sync": {"uniheap": "uniheap --durability sync",
             "lmdb": "LMDB default (fdatasync per commit)",
             "redis": "Redis 7, appendfsync always"},
}


class Store:
    """A backend's store for one series: props for the clients, cleanup."""

    def __init__(self, backend, durability, folder):
        self.backend = backend
        self.durability = durability
        self.folder = folder
        self.props = {}
        self.heapd = None
        self.redis = None

    def check(self):
        """(passed, text) of a structural check where the store has one."""
        if self.heapd is not None:
            return self.heapd.check()
        return True, ""

    def env(self):
        return self.heapd.env() if self.heapd is not None else {}

    def footprint(self):
        """Bytes the store's data takes now, or None where not measured:
        uniheap, the bytes its arenas hold (heapctl status: every object
        slot with the free slots beside it, large regions included);
        LMDB, its pages up to the last one in use (free pages included),
        read from the environment while no client has it open."""
        if self.heapd is not None:
            st = self.heapd.heapctl("status", json=True)
            return int(json.loads(st.stdout).get("arena_bytes", 0)) if st.returncode == 0 \
                else None
        if self.backend == "lmdb":
            return lmdb_bytes(self.folder)
        return None

    def close(self):
        for svc in (self.heapd, self.redis):
            if svc is not None:
                svc.stop()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def lmdb_bytes(folder):
    """Pages in use of the LMDB environment in folder (0 before it exists).
    Where py-lmdb cannot read it (not installed, or lmdb-js's unreleased
    data format v2), the bytes the file system allocated to data.mdb: the
    pages ever written, as its map is a sparse file of the map's size."""
    data = folder / "data.mdb"
    if not data.exists():
        return 0
    try:
        import lmdb
    except ImportError:
        return data.stat().st_blocks * 512
    try:
        env = lmdb.open(str(folder), readonly=True, lock=False, max_dbs=16)
    except lmdb.Error:
        return data.stat().st_blocks * 512
    try:
        return (env.info()["last_pgno"] + 1) * env.stat()["psize"]
    finally:
        env.close()


def heap_size(records):
    """Heap file size for a table of records 1 KB records, with room for
    the workloads' inserts and the values updates replace (freed slots are
    reused only after the allocator has gone round its arena)."""
    mib = max(256, records * 8 // 1024 + 128)
    return f"{mib}M"


def open_store(backend, durability, build, base, records, grow_from=None):
    """A fresh store of backend in durability class, under folder base.
    grow_from: a uniheap heap created that small, which may grow to the
    size it is otherwise created with (YCSB_GROW)."""
    folder = temp_dir(f"ycsb-{backend}-", base) if backend != "memory" else None
    store = Store(backend, durability, folder)
    try:
        if backend == "uniheap":
            full = heap_size(records)
            store.heapd = Heapd(build, folder, durability=durability, size=grow_from or full,
                                max_size=full)
            store.props["uniheap.socket"] = str(store.heapd.socket)
        elif backend == "lmdb":
            store.props["lmdb.path"] = str(folder)
            store.props["lmdb.durability"] = "nosync" if durability == "memory" else "sync"
        elif backend == "redis":
            store.redis = Redis(folder, durability=durability)
            store.props["redis.socket"] = str(store.redis.socket)
        elif backend == "chronicle":
            store.props["chronicle.path"] = str(folder)
    except BaseException:
        store.close()
        raise
    return store
