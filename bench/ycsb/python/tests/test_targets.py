"""The summary's table of targets (ycsbrun/summary.py TARGETS): each
workload measured against its target, met or missed with its ratio, from
the matrix's good runs only."""
from ycsbrun import summary
from ycsbrun.execute import Run


def _run(backend, lang, workload, ops_s, durability="memory", problems=()):
    phase = "load" if workload == "load" else "run"
    r = Run("matrix", durability, lang, backend, phase, workload, 1, 1000, 1000,
            report={"OVERALL": {"Throughput(ops/sec)": ops_s}})
    r.problems = list(problems)
    return r


def test_met_and_missed_workloads_are_listed_with_their_ratios():
    runs = [_run("uniheap", "node", "load", 300.0), _run("lmdb", "node", "load", 100.0),
            _run("uniheap", "node", "c", 120.0), _run("lmdb", "node", "c", 100.0),
            _run("memory", "node", "c", 200.0)]
    table = summary.targets_table(runs)
    assert "| memory | node | LMDB | ≥ 1.5× | load | C 1.20 |" in table
    assert "| memory | node | in-process | ≥ 0.5× | C | — |" in table
    assert "python" not in table and "sync" not in table    # not measured: no row


def test_a_failed_run_counts_for_nothing():
    runs = [_run("uniheap", "java", "a", 100.0, problems=["exit 1"]),
            _run("lmdb", "java", "a", 50.0)]
    assert summary.targets_table(runs) == ""


def test_the_sync_class_aims_at_lmdb_itself():
    runs = [_run("uniheap", "python", "f", 99.0, "sync"), _run("lmdb", "python", "f", 100.0, "sync")]
    assert "| sync | python | LMDB | ≥ 1.0× | — | F 0.99 |" in summary.targets_table(runs)
