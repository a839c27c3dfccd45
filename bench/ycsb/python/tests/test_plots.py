"""The runner's plots (bench/ycsb/ycsbrun/plots.py) for the workload sets a
user may choose: a run of one workload that has no latency panel to draw
(YCSB_WORKLOADS=e) draws its throughput and leaves the latency plot out."""
from ycsbrun import plots
from ycsbrun.execute import Run


def _run(backend, workload, ops):
    report = {"OVERALL": {"Throughput(ops/sec)": ops},
              "READ": {"AverageLatency(us)": 3.0, "95thPercentileLatency(us)": 5.0,
                       "99thPercentileLatency(us)": 9.0},
              "UPDATE": {"AverageLatency(us)": 4.0, "95thPercentileLatency(us)": 6.0,
                         "99thPercentileLatency(us)": 8.0}}
    return Run("matrix", "memory", "java", backend, "run" if workload != "load" else "load",
               workload, 1, 1000, 1000, report=report)


def test_a_scan_only_run_has_no_latency_plot(tmp_path):
    runs = [_run(b, w, n) for b, n in (("uniheap", 13000.0), ("lmdb", 9000.0))
            for w in ("load", "e")]
    assert plots.throughput(runs, "memory", tmp_path / "t.png", "t")
    assert (tmp_path / "t.png").stat().st_size > 0
    assert not plots.latency(runs, "memory", tmp_path / "l.png", "l")
    assert not (tmp_path / "l.png").exists()


def test_reads_and_updates_are_plotted(tmp_path):
    runs = [_run(b, w, 1000.0) for b in ("uniheap", "lmdb") for w in ("load", "a", "c")]
    assert plots.latency(runs, "memory", tmp_path / "l.png", "l")
    assert (tmp_path / "l.png").stat().st_size > 0
