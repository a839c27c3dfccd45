"""results/ycsb/: the CSV of every run and the Markdown summary (uniheap
against each peer, as ratios, per durability class; the cross-language and
mixed runs)."""
import csv
import datetime
import os
import platform

from .execute import LATENCY_OPS
from .stores import CLASSES

PEERS = {"memory": ("lmdb", "memory", "redis", "chronicle"), "sync": ("lmdb", "redis")}
PEER_NAMES = {"lmdb": "LMDB", "memory": "in-process", "redis": "Redis", "chronicle": "Chronicle"}
ROWS = ("load", "a", "b", "c", "d", "e", "f")
LANG_ORDER = ("java", "python", "node")


def write_csv(runs, path):
    cols = ["block", "durability", "language", "backend", "loader", "phase", "workload",
            "threads", "records", "operations", "status", "throughput_ops_s", "runtime_ms",
            "wall_s", "exit_status", "gc", "gc_cycles", "gc_given_up", "heapd_cpu_s", "client_cpu_s", "store_bytes"]
    for op in LATENCY_OPS:
        cols += [f"{op}_avg_us", f"{op}_p95_us", f"{op}_p99_us"]
    cols += ["verify_ok", "problems"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in runs:
            status = "skipped" if r.skipped else ("ok" if r.ok else "failed")
            row = [r.block, r.durability, r.language, r.backend, r.loader, r.phase, r.workload,
                   r.threads, r.records, r.operations, status, f"{r.throughput:.1f}",
                   r.report.get("OVERALL", {}).get("RunTime(ms)", ""), f"{r.seconds:.2f}",
                   r.exit_status, r.gc, r.gc_cycles if r.gc else "",
                   r.gc_given_up if r.gc else "", f"{r.heapd_cpu_s:.2f}" if r.heapd_cpu_s else "",
                   f"{r.client_cpu_s:.2f}" if r.client_cpu_s else "",
                   r.store_bytes if r.store_bytes is not None else ""]
            for op in LATENCY_OPS:
                row += [r.latency(op, m) if r.latency(op, m) is not None else ""
                        for m in ("AverageLatency(us)", "95thPercentileLatency(us)",
                                  "99thPercentileLatency(us)")]
            row += [r.report.get("VERIFY", {}).get("Return=OK", ""),
                    r.skipped or " | ".join(r.problems)]
            w.writerow(row)


def _fmt(x):
    return f"{x:,.0f}" if x else "—"


def _ratio(a, b):
    return f"{a / b:.2f}×" if a and b else "—"


def _index(runs, block, gc=""):
    """{(durability, language, backend, workload): throughput} of good runs
    (with GC cycles back to back if gc is "loop")."""
    return {(r.durability, r.language, r.backend, r.workload): r.throughput
            for r in runs if r.block == block and r.ok and r.gc == gc}


def _per_cpu(run):
    """Operations per CPU second of the client process, or None."""
    if not run or not run.client_cpu_s:
        return None
    return run.operations / run.client_cpu_s


def gc_table(runs):
    """uniheap with GC cycles back to back against without (YCSB_GC)."""
    if not any(r.gc for r in runs if r.block == "matrix"):
        return ""
    plain, loop = _index(runs, "matrix"), _index(runs, "matrix", "loop")
    by = {(r.durability, r.language, r.workload, r.gc): r
          for r in runs if r.block == "matrix" and r.backend == "uniheap" and r.ok}
    lines = ["| class | workload | language | ops/s without | ops/s with GC loop "
             "| with ÷ without | cycles done (given up) | heapd CPU s without, with "
             "| client CPU s without, with | ops per client CPU s, with ÷ without |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (d, lang, b, w), v in sorted(loop.items(), key=lambda kv: (
            kv[0][0], ROWS.index(kv[0][3]), LANG_ORDER.index(kv[0][1]))):
        u = plain.get((d, lang, b, w))
        g, p = by.get((d, lang, w, "loop")), by.get((d, lang, w, ""))
        cpu = f"{p.heapd_cpu_s:.1f}, " if p else "—, "
        ccpu = f"{p.client_cpu_s:.1f}, " if p else "—, "
        # Throughput per CPU second of the client: what the barrier costs
        # the client itself, apart from the cores the collector takes.
        per = _ratio(_per_cpu(g), _per_cpu(p)) if p else "—"
        lines.append(f"| {d} | {w.upper()} | {lang} | {_fmt(u)} | {_fmt(v)} | {_ratio(v, u)} "
                     f"| {g.gc_cycles} ({g.gc_given_up}) | {cpu}{g.heapd_cpu_s:.1f} "
                     f"| {ccpu}{g.client_cpu_s:.1f} | {per} |")
    return "\n".join(lines)


def grow_table(runs):
    """uniheap's load into a heap that grows against one created at its
    final size (YCSB_GROW)."""
    grown = [r for r in runs if r.block == "grow"]
    if not grown:
        return ""
    full = {(r.durability, r.language): r for r in runs
            if r.block == "matrix" and r.backend == "uniheap" and r.phase == "load" and r.ok}
    lines = ["| class | language | load ops/s, heap at full size | load ops/s, heap growing "
             "| growing ÷ full size | growth steps | longest step ms | insert max latency "
             "ms, full size, growing | heap after |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in grown:
        f = full.get((r.durability, r.language))
        ft = f.throughput if f else None
        gt = r.throughput if r.ok else None
        lat = [x.latency("INSERT", "MaxLatency(us)") if x else None for x in (f, r)]
        lat = ", ".join(f"{v / 1000:.1f}" if v else "—" for v in lat)
        longest = f"{max(r.grow_steps) / 1000:.1f}" if r.grow_steps else "—"
        size = f"{r.heap_bytes / (1 << 20):,.0f} MiB" if r.heap_bytes else "—"
        state = "" if r.ok else " (FAILED: " + "; ".join(r.problems)[:120] + ")"
        lines.append(f"| {r.durability} | {r.language} | {_fmt(ft)} | {_fmt(gt)}{state} "
                     f"| {_ratio(gt, ft)} | {len(r.grow_steps)} | {longest} | {lat} | {size} |")
    return "\n".join(lines)


def bytes_table(runs):
    """Bytes per record each store's data grew by in the load, uniheap
    against LMDB (the two stores whose footprint is measured)."""
    per = {(r.durability, r.language, r.backend): r.store_bytes / r.records
           for r in runs if r.block == "matrix" and r.phase == "load" and r.ok
           and r.store_bytes and r.records}
    keys = sorted({(d, lang) for d, lang, b in per if b == "uniheap"},
                  key=lambda k: (k[0], LANG_ORDER.index(k[1])))
    if not keys:
        return ""
    lines = ["| class | language | uniheap bytes per record | LMDB bytes per record "
             "| uniheap ÷ LMDB |", "|---|---|---|---|---|"]
    for d, lang in keys:
        u, v = per[(d, lang, "uniheap")], per.get((d, lang, "lmdb"))
        lines.append(f"| {d} | {lang} | {_fmt(u)} | {_fmt(v)} | {_ratio(u, v)} |")
    return "\n".join(lines)


def class_table(runs, durability):
    idx = _index(runs, "matrix")
    langs = [lang for lang in LANG_ORDER if any(k[1] == lang and k[0] == durability for k in idx)]
    peers = [p for p in PEERS[durability]
             if any(k[0] == durability and k[2] == p for k in idx)]
    head = ["workload", "language", "uniheap ops/s"]
    for p in peers:
        head += [f"{PEER_NAMES[p]} ops/s", f"uniheap ÷ {PEER_NAMES[p]}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w in [w for w in ROWS if any(k[3] == w for k in idx)]:    # those run
        for lang in langs:
            u = idx.get((durability, lang, "uniheap", w))
            cells = [w.upper() if w != "load" else "load", lang, _fmt(u)]
            for p in peers:
                v = idx.get((durability, lang, p, w))
                cells += [_fmt(v), _ratio(u, v)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# What uniheap aims at against each peer, as uniheap ÷ peer throughput on
# every workload and the load (durability class, language, peer, ratio):
# a store that maps its data should beat one that copies it through a
# B-tree's pages (LMDB) and stay near a map in the client's own memory.
TARGETS = (
    ("memory", "java", "lmdb", 1.2), ("memory", "java", "memory", 1.0),
    ("memory", "java", "chronicle", 1.0),
    ("memory", "python", "lmdb", 2.5), ("memory", "python", "memory", 0.8),
    ("memory", "node", "lmdb", 1.5), ("memory", "node", "memory", 0.5),
    ("sync", "java", "lmdb", 1.0), ("sync", "python", "lmdb", 1.0),
    ("sync", "node", "lmdb", 1.0),
)


def targets_table(runs):
    """Each target of TARGETS this run measured: the workloads that met it
    and those that did not, with their ratios."""
    idx = _index(runs, "matrix")
    lines = ["| class | language | peer | target | met | missed (ratio) |",
             "|---|---|---|---|---|---|"]
    for d, lang, peer, want in TARGETS:
        met, missed = [], []
        for w in ROWS:
            u, v = idx.get((d, lang, "uniheap", w)), idx.get((d, lang, peer, w))
            if not u or not v:
                continue
            name = "load" if w == "load" else w.upper()
            if u / v >= want:
                met.append(name)
            else:
                missed.append(f"{name} {u / v:.2f}")
        if met or missed:
            lines.append(f"| {d} | {lang} | {PEER_NAMES[peer]} | ≥ {want:.1f}× "
                         f"| {', '.join(met) or '—'} | {', '.join(missed) or '—'} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def xlang_table(runs):
    rows = [r for r in runs if r.block == "xlang" and r.phase == "run"]
    if not rows:
        return ""
    lines = ["| loaded by | run by | workload | ops/s | verified reads | heapctl check, count |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        verified = r.report.get("VERIFY", {}).get("Return=OK", 0)
        state = "skipped: " + r.skipped if r.skipped else ("ok" if r.ok else
                                                            "FAILED: " + r.problems[0])
        lines.append(f"| {r.loader} | {r.language} | {r.workload.upper()} | {_fmt(r.throughput)} "
                     f"| {verified:,} | {state} |")
    return "\n".join(lines)


def mixed_table(runs):
    solo = {(r.language, r.workload): r for r in runs if r.block == "solo"}
    mixed = [r for r in runs if r.block == "mixed" and r.phase == "run"]
    if not mixed:
        return ""
    lines = ["| workload | language | alone ops/s | all at once ops/s | at once ÷ alone | state |",
             "|---|---|---|---|---|---|"]
    for w in sorted({r.workload for r in mixed}, key=ROWS.index):
        total_solo = total_mixed = 0.0
        for r in [m for m in mixed if m.workload == w]:
            s = solo.get((r.language, w))
            st = s.throughput if s is not None and s.ok else 0.0
            mt = r.throughput if r.ok else 0.0
            total_solo += st
            total_mixed += mt
            state = "skipped: " + r.skipped if r.skipped else ("ok" if r.ok else
                                                                "FAILED: " + r.problems[0])
            lines.append(f"| {w.upper()} | {r.language} | {_fmt(st)} | {_fmt(mt)} "
                         f"| {_ratio(mt, st)} | {state} |")
        lines.append(f"| {w.upper()} | all | {_fmt(total_solo)} (sum) | {_fmt(total_mixed)} "
                     f"| {_ratio(total_mixed, total_solo)} | |")
    return "\n".join(lines)


def machine():
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                         "?")
    except OSError:
        model = "?"
    return f"{os.cpu_count()} CPUs ({model}), Linux {platform.release()}"


def _section(title, table, text):
    """A titled section of the summary: what it shows, then its table;
    nothing when this run measured nothing for it."""
    return [f"## {title}", "", text, "", table, ""] if table else []


def markdown(runs, cfg, skipped_series, command, elapsed):
    failed = [r for r in runs if r.problems and not r.skipped]
    out = [f"# YCSB: uniheap and its peers, {datetime.date.today().isoformat()}", "",
           f"`{command}`: {cfg.records:,} records of 10 × 100 bytes, {cfg.operations:,} "
           f"operations per workload, {cfg.threads} client thread(s) per run "
           f"(Java: threads of the official client; Python: processes; Node: worker_threads), "
           f"stores on {cfg.storage}; {machine()}; {elapsed / 60:.1f} minutes.", "",
           "Each cell is the throughput of one run (ops/s, YCSB's [OVERALL] Throughput); "
           "ratios are uniheap's throughput divided by the peer's, in the same language, "
           "durability class and run of this command. Every run's Return=OK counts and exit "
           "status were checked (see runs.csv)." + (f" **{len(failed)} run(s) failed**: "
                                                    "see the problems column of runs.csv."
                                                    if failed else " All runs passed."), ""]
    for durability in cfg.classes:
        out += [f"## Durability class `{durability}`", "",
                "; ".join(f"{PEER_NAMES.get(b, b)}: {what}"
                          for b, what in CLASSES[durability].items()) + ".", "",
                class_table(runs, durability), ""]
    out += _section("Against the targets", targets_table(runs),
                    "uniheap ÷ peer on each workload of this run against what the project aims "
                    "at (`TARGETS` in ycsbrun/summary.py); one run per cell, so a ratio near "
                    "its target may land on either side from run to run.")
    out += _section("Bytes per record", bytes_table(runs),
                    "What each store's data grew by during the load, divided by the records "
                    "loaded (lower is better): uniheap, the bytes its arenas hold (`heapctl "
                    "status`, object slots with the free slots beside them); LMDB, its pages up "
                    "to the last one in use (Node's lmdb-js writes a data format py-lmdb does "
                    "not read: there, the bytes the file system allocated to its sparse "
                    "data.mdb). Neither counts fixed costs (uniheap's session logs and class "
                    "table, LMDB's lock file).")
    out += _section("uniheap with GC cycles back to back", gc_table(runs),
                    "YCSB_GC: while a workload runs, `heapctl gc --wait --repeat 0` asks for "
                    "a cycle as soon as the last one ended; the uniheap column of the "
                    "tables above is the run without. Both runs of a row load nothing: they "
                    "run on the table of that series, the one without first.")
    out += _section("uniheap loading into a heap that grows", grow_table(runs),
                    f"YCSB_GROW: after each uniheap series, the same load into a heap created "
                    f"at {cfg.grow} (`--size {cfg.grow} --max-size` the series' size), which "
                    "grows while the client inserts (a lease that finds no space runs a GC "
                    "cycle, then grows the file). Growth steps and their times are heapd's "
                    "`grow` log lines; an insert's maximum latency bounds what a block waited "
                    "on a growth.")
    out += _section("One table, every language", xlang_table(runs),
                    "A uniheap table (class `memory`) loaded by one language with "
                    "`dataintegrity=true`, then workloads C and A run on it from each other "
                    "language, every read checked against the values YCSB derives from key "
                    "and field; after each run `heapctl check` passes and the record count is "
                    "exact.")
    out += _section("Every language at once", mixed_table(runs),
                    "One uniheap table; each language alone (one client thread), then all of "
                    "them at the same time on the same records, data integrity on; `heapctl "
                    "check` and the record count after each mixed run.")
    if skipped_series:
        out += ["## Not run", ""] + [f"- {d} {lang} {b}: {why}"
                                     for d, lang, b, why in skipped_series] + [""]
    return "\n".join(out)
