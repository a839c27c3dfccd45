"""`make ycsb`: YCSB A-F from Java (the official client), Python and Node
(the ports) on uniheap and its peers, in both durability classes; the
cross-language runs on one uniheap table; results in results/ycsb/.

    PYTHONPATH=bench/ycsb python3 -m ycsbrun      (knobs: config.py)

Exit status 1 when any run failed its checks (exit status, Return=OK
counts, verified values, heapctl check, record count).
"""
import os
import sys
import time

from . import clients, matrix, plots, summary
from .config import ConfigError, from_env
from .matrix import Progress


def _command(cfg):
    knobs = [f"{k}={os.environ[k]}" for k in sorted(os.environ)
             if k.startswith("YCSB_") and k != "YCSB_JAVA_HOME"]
    return " ".join(knobs + ["make ycsb"])


def main():
    try:
        cfg = from_env()
    except ConfigError as e:
        print(f"make ycsb: {e}", file=sys.stderr)
        return 2
    began = time.monotonic()
    languages, left = [], []
    for lang in cfg.languages:
        why = clients.available(lang)
        if why:
            left.append(("all", lang, "all", why))
        else:
            languages.append(lang)
    plan, missing = matrix.series_plan(cfg, languages)
    left += missing
    with_uniheap = [lang for lang in languages if clients.has_db(lang, "uniheap")]
    xlang = matrix.xlang_plan(with_uniheap) if len(with_uniheap) > 1 else []
    if len(with_uniheap) < 2:
        left.append(("memory", "cross-language", "uniheap",
                     "needs the uniheap binding of two languages or more "
                     f"(here: {', '.join(with_uniheap) or 'none'})"))
    total = (sum(matrix.runs_per_series(cfg, backend) for _, _, backend in plan)
             + sum(1 + 2 * len(runners) for _, runners in xlang)
             + (1 + 4 * len(with_uniheap) if len(with_uniheap) > 1 else 0))
    print(f"== YCSB: {cfg.records:,} records, {cfg.operations:,} operations per workload, "
          f"{cfg.threads} thread(s); languages {', '.join(languages)}; "
          f"classes {', '.join(cfg.classes)}; stores on {cfg.storage}; {total} runs", flush=True)
    for d, lang, b, why in left:
        print(f"   not run: {d} {lang} {b}: {why}", flush=True)
    progress = Progress(total)
    runs = []
    for durability, lang, backend in plan:
        runs += matrix.run_series(cfg, durability, lang, backend, progress)
    for loader, runners in xlang:
        runs += matrix.run_xlang(cfg, loader, runners, progress)
    if len(with_uniheap) > 1:
        runs += matrix.run_mixed(cfg, with_uniheap, progress)

    cfg.results.mkdir(parents=True, exist_ok=True)
    summary.write_csv(runs, cfg.results / "runs.csv")
    text = summary.markdown(runs, cfg, left, _command(cfg), time.monotonic() - began)
    pngs = []
    for durability in cfg.classes:
        what = f"{cfg.records:,} records, {cfg.threads} thread(s), class {durability}"
        if plots.throughput(runs, durability, cfg.results / f"throughput-{durability}.png",
                            f"YCSB throughput ({what})"):
            pngs.append(f"throughput-{durability}.png")
        if plots.latency(runs, durability, cfg.results / f"latency-{durability}.png",
                         f"YCSB latency ({what})"):
            pngs.append(f"latency-{durability}.png")
    if pngs:
        text += "\n## Plots\n\n" + "\n".join(f"![{p}]({p})" for p in pngs) + "\n"
    (cfg.results / "summary.md").write_text(text)
    print("\n" + text)
    rel = os.path.relpath(cfg.results)
    print(f"== results: {rel}/summary.md, {rel}/runs.csv, " + ", ".join(f"{rel}/{p}" for p in pngs))
    failed = [r for r in runs if r.problems and not r.skipped]
    if failed:
        print(f"== {len(failed)} run(s) FAILED their checks:", file=sys.stderr)
        for r in failed:
            print(f"   {r.block} {r.durability} {r.language} {r.backend} {r.workload}: "
                  + "; ".join(r.problems[:2]), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
