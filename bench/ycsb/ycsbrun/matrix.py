"""The runs of `make ycsb`: every language x backend x durability class
(load, then workloads A-F on the loaded table), the cross-language runs on
one uniheap table, and the mixed run of every language at once."""
import json
import os
import re
import subprocess

from . import clients
from .execute import Run, cpu_seconds, start
from .gcloop import GcLoop
from .stores import CLASSES, open_store

XLANG_WORKLOADS = ("c", "a")
INTEGRITY = {"dataintegrity": "true"}


class Progress:
    """Numbers the runs and prints one line as each starts and ends."""

    def __init__(self, total):
        self.total = total
        self.done = 0

    def begin(self, run, what=""):
        self.done += 1
        wl = "load" if run.phase == "load" else f"workload {run.workload.upper()}"
        who = run.language + (f" (table loaded by {run.loader})" if run.loader else "")
        print(f"[{self.done}/{self.total}] {run.durability:6} {run.backend:9} {who}: {wl}"
              f"{what}", flush=True)

    @staticmethod
    def end(run):
        if run.skipped:
            print(f"      skipped: {run.skipped}", flush=True)
        elif run.ok:
            print(f"      {run.throughput:,.0f} ops/s ({run.seconds:.1f} s)", flush=True)
        else:
            print("      FAILED: " + "; ".join(run.problems), flush=True)


def execute(run, store, cfg, progress, extra=None, what=""):
    progress.begin(run, what + (" with GC cycles back to back" if run.gc else ""))
    heapd = store.heapd.proc.pid if store.heapd is not None else None
    cpu0 = cpu_seconds(heapd) if heapd else 0.0
    if run.skipped:
        pass
    elif run.gc:
        with GcLoop(store.heapd) as loop:
            start(run, store.props, store.env(), cfg.build, extra).wait(cfg.timeout)
        run.gc_cycles, run.gc_given_up = loop.done, loop.given_up
        if loop.failed:
            run.problems.append(f"heapctl gc --wait failed: {loop.failed}")
    else:
        start(run, store.props, store.env(), cfg.build, extra).wait(cfg.timeout)
    if heapd:
        run.heapd_cpu_s = cpu_seconds(heapd) - cpu0
    progress.end(run)
    return run


def series_plan(cfg, languages):
    """(durability, language, backend) of every series the matrix runs, and
    the combinations it leaves out, with why."""
    plan, left = [], []
    for durability in cfg.classes:
        for lang in languages:
            for backend in CLASSES[durability]:
                if backend not in cfg.backends or backend not in clients.DB_NAMES[lang]:
                    continue
                why = cfg.leaves_out(durability, backend)
                if why:
                    left.append((durability, lang, backend, why))
                    continue
                if not clients.has_db(lang, backend):
                    left.append((durability, lang, backend,
                                 f"no {backend} binding for {lang} in this tree yet"))
                    continue
                plan.append((durability, lang, backend))
    return plan, left


def gc_modes(cfg, backend):
    """The GC settings each workload runs with: "" (none), "loop" (cycles
    back to back, YCSB_GC); only uniheap has a collector."""
    if backend != "uniheap" or cfg.gc == "off":
        return ("",)
    return ("loop",) if cfg.gc == "loop" else ("", "loop")


def runs_per_series(cfg, backend):
    grown = 1 if backend == "uniheap" and cfg.grow else 0
    return 1 + len(cfg.workloads) * len(gc_modes(cfg, backend)) + grown


def run_series(cfg, durability, lang, backend, progress):
    """Load a fresh store from lang, then run the workloads (A-F) on it."""
    runs = []

    def make(phase, workload):
        ops = cfg.records if phase == "load" else cfg.operations
        return Run("matrix", durability, lang, backend, phase, workload, cfg.threads,
                   cfg.records, ops)
    with open_store(backend, durability, cfg.build, cfg.base, cfg.records) as store:
        before = store.footprint()
        load = execute(make("load", "load"), store, cfg, progress)
        after = store.footprint() if load.ok else None
        if before is not None and after is not None:
            load.store_bytes = after - before
        runs.append(load)
        for w in cfg.workloads:
            for gc in gc_modes(cfg, backend):
                run = make("run", w)
                run.gc = gc
                if backend == "chronicle" and w == "e":
                    run.skipped = "Chronicle Map keeps no key order: no scans"
                elif not load.ok and backend != "memory":
                    run.skipped = "the load failed"
                runs.append(execute(run, store, cfg, progress))
        _check_after(store, runs[-1])
    if backend == "uniheap" and cfg.grow:
        runs.append(run_grown_load(cfg, durability, lang, progress))
    return runs


def run_grown_load(cfg, durability, lang, progress):
    """The load of a series again, into a heap created at YCSB_GROW that
    grows while the load runs (its maximum: the series' heap size)."""
    run = Run("grow", durability, lang, "uniheap", "load", "load", cfg.threads, cfg.records,
              cfg.records)
    with open_store("uniheap", durability, cfg.build, cfg.base, cfg.records,
                    grow_from=cfg.grow) as store:
        execute(run, store, cfg, progress, what=f" into a heap grown from {cfg.grow}")
        run.grow_steps = growth_steps(store.heapd.log)
        st = store.heapd.heapctl("status", json=True)
        if st.returncode == 0:
            run.heap_bytes = int(json.loads(st.stdout).get("heap_size", 0))
        _check_after(store, run)
    return run


def growth_steps(log):
    """µs of each growth heapd logged (its "event=grow ... us=N" lines)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return []
    return [int(m.group(1)) for m in re.finditer(r"event=grow .*?\bus=([0-9]+)", text)]


def _check_after(store, run):
    ok, text = store.check()
    if not ok:
        run.problems.append(f"heapctl check failed after this run: {text}")


def record_count(store, table="usertable"):
    """Records in the uniheap table of store (from a Python process)."""
    code = ("import sys, uniheap\n"
            "with uniheap.connect(sys.argv[1]) as h:\n"
            f"    print(len(h.roots['ycsb.{table}']))\n")
    argv, env = clients.command("python", "run", "uniheap", "a", {})
    r = subprocess.run([argv[0], "-c", code, store.props["uniheap.socket"]],
                       env={**os.environ, **env}, capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        return None
    return int(r.stdout)


def _verify_table(store, run, expected):
    """heapctl check passes and the table holds exactly expected records."""
    _check_after(store, run)
    n = record_count(store)
    if n != expected:
        run.problems.append(f"the table holds {n} records after this run, {expected} expected")


def _inserted(run):
    return run.report.get("INSERT", {}).get("Return=OK", 0)


def xlang_plan(languages):
    """Cross-language series: each language loads, every other one runs C and A."""
    return [(loader, [m for m in languages if m != loader]) for loader in languages]


def run_xlang(cfg, loader, runners, progress):
    """Load a uniheap table from loader with data integrity on, then run C
    and A on it from every other language, checking the heap and the record
    count after each run."""
    runs = []
    with open_store("uniheap", "memory", cfg.build, cfg.base, cfg.records) as store:
        load = Run("xlang", "memory", loader, "uniheap", "load", "load", cfg.threads,
                   cfg.records, cfg.records)
        runs.append(execute(load, store, cfg, progress, INTEGRITY, " (data integrity)"))
        for runner in runners:
            for w in XLANG_WORKLOADS:
                run = Run("xlang", "memory", runner, "uniheap", "run", w, cfg.threads,
                          cfg.records, cfg.operations, loader=loader)
                if not load.ok:
                    run.skipped = "the load failed"
                runs.append(execute(run, store, cfg, progress, INTEGRITY, " (data integrity)"))
                if not run.skipped:
                    _verify_table(store, run, cfg.records)
    return runs


def run_mixed(cfg, languages, progress):
    """On one uniheap table: each language alone, then all at once, on C
    and A, with data integrity on; one client thread each, so the mixed run
    has as many threads as languages."""
    runs = []
    with open_store("uniheap", "memory", cfg.build, cfg.base, cfg.records) as store:
        load = Run("mixed", "memory", languages[0], "uniheap", "load", "load", 1,
                   cfg.records, cfg.records)
        runs.append(execute(load, store, cfg, progress, INTEGRITY, " (data integrity)"))
        for w in XLANG_WORKLOADS:
            for lang in languages:
                solo = Run("solo", "memory", lang, "uniheap", "run", w, 1, cfg.records,
                           cfg.operations, loader=languages[0])
                if not load.ok:
                    solo.skipped = "the load failed"
                runs.append(execute(solo, store, cfg, progress, INTEGRITY, " alone"))
            mixed = [Run("mixed", "memory", lang, "uniheap", "run", w, 1, cfg.records,
                         cfg.operations, loader=languages[0]) for lang in languages]
            for run in mixed:
                progress.begin(run, f" at once with {', '.join(m for m in languages if m != run.language)}")
            if load.ok:
                started = [start(run, store.props, store.env(), cfg.build, INTEGRITY)
                           for run in mixed]
                for c in started:
                    c.wait(cfg.timeout)
                _verify_table(store, mixed[-1], cfg.records + sum(_inserted(r) for r in mixed))
            else:
                for run in mixed:
                    run.skipped = "the load failed"
            for run in mixed:
                Progress.end(run)
            runs += mixed
    return runs
