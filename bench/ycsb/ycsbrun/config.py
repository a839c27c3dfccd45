"""The knobs of `make ycsb`, from the environment.

    YCSB_RECORDS   records loaded (default 100000; quick mode 1000)
    YCSB_OPS       operations per workload run (default: YCSB_RECORDS)
    YCSB_THREADS   client threads per run (default 2; quick mode 1)
    YCSB_QUICK=1   quick mode, under 5 minutes on 2 cores: small sizes, one
                   thread, every workload and language, the memory class
                   against every peer but Chronicle Map (seconds of start-up
                   per JVM), the sync class against LMDB only
    YCSB_LANGS     languages to run, comma-separated (java,python,node)
    YCSB_BACKENDS  backends to run (uniheap,lmdb,memory,redis,chronicle)
    YCSB_CLASSES   durability classes (memory,sync)
    YCSB_DIR       where heaps, LMDB environments and Redis files live
                   (default /dev/shm, tmpfs: see README for disk figures)
    YCSB_RESULTS   output folder (default <repo>/results/ycsb)
    YCSB_TIMEOUT   seconds one client run may take (default 1800)
    YCSB_WORKLOADS workloads of the matrix, comma-separated (a,b,c,d,e,f)
    YCSB_GC        uniheap's online GC during the matrix's workload runs:
                   off (default: heapd's own trigger, a cycle once the
                   heap is 75 % full or when a lease finds no space),
                   loop (`heapctl gc --wait --repeat 0`: cycles back to
                   back while each runs),
                   both (each workload runs without, then with the loop,
                   on the same table: the ratio in one run)
    YCSB_GROW      a size (e.g. 16M): after each uniheap series, load a
                   second table into a heap created that small, which
                   grows while the load runs, up to the size the series'
                   heap was created with (default: off)
"""
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .clients import LANGUAGES, REPO
from .services import build_dir

BACKENDS = ("uniheap", "lmdb", "memory", "redis", "chronicle")
DURABILITY = ("memory", "sync")
WORKLOADS = ("a", "b", "c", "d", "e", "f")
GC_MODES = ("off", "loop", "both")


class ConfigError(Exception):
    pass


def _list(name, default, allowed):
    raw = os.environ.get(name)
    if not raw:
        return list(default)
    items = [x.strip().lower() for x in raw.split(",") if x.strip()]
    bad = [x for x in items if x not in allowed]
    if bad:
        raise ConfigError(f"{name}: unknown {', '.join(bad)} (choose from {', '.join(allowed)})")
    return items


def _int(name, default):
    raw = os.environ.get(name)
    if raw in (None, ""):
        return default
    try:
        v = int(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a whole number") from None
    if v < 1:
        raise ConfigError(f"{name}={v}: give 1 or more")
    return v


def _size(name):
    """A heapd size (digits, then K, M or G), or "" when unset."""
    raw = os.environ.get(name, "").strip()
    if raw and not re.fullmatch(r"[0-9]+[KMGkmg]?", raw):
        raise ConfigError(f"{name}={raw!r} is not a size (e.g. 16M)")
    return raw


@dataclass
class Config:
    records: int
    operations: int
    threads: int
    quick: bool
    languages: list
    backends: list
    classes: list
    base: str
    results: Path
    build: Path
    timeout: int
    workloads: list
    gc: str
    grow: str = ""

    def leaves_out(self, durability, backend):
        """Why quick mode leaves a series out, or None."""
        if not self.quick or os.environ.get("YCSB_BACKENDS"):
            return None
        if backend == "chronicle":
            return "quick mode: Chronicle Map takes seconds to start in every JVM"
        if durability == "sync" and backend == "redis":
            return "quick mode: the sync class runs uniheap against LMDB only"
        return None

    @property
    def storage(self):
        return "tmpfs" if self.base.startswith("/dev/shm") else f"files under {self.base}"


def from_env():
    quick = os.environ.get("YCSB_QUICK", "").lower() in ("1", "yes", "true")
    records = _int("YCSB_RECORDS", 1000 if quick else 100000)
    return Config(
        records=records,
        operations=_int("YCSB_OPS", records),
        threads=_int("YCSB_THREADS", 1 if quick else 2),
        quick=quick,
        languages=_list("YCSB_LANGS", LANGUAGES, LANGUAGES),
        backends=_list("YCSB_BACKENDS", BACKENDS, BACKENDS),
        classes=_list("YCSB_CLASSES", DURABILITY, DURABILITY),
        base=os.environ.get("YCSB_DIR") or ("/dev/shm" if os.access("/dev/shm", os.W_OK)
                                            else "/tmp"),
        results=Path(os.environ.get("YCSB_RESULTS") or REPO / "results" / "ycsb"),
        build=build_dir(REPO),
        timeout=_int("YCSB_TIMEOUT", 1800),
        workloads=_list("YCSB_WORKLOADS", WORKLOADS, WORKLOADS),
        gc=_list("YCSB_GC", ("off",), GC_MODES)[0],
        grow=_size("YCSB_GROW"),
    )
