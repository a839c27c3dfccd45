"""heapctl metrics: heapd's state and counters in Prometheus' text format,
printed (node_exporter's textfile collector) and served over HTTP
(`--listen`), each parsed by prometheus_client's own parser; the values
follow what a client did. The exporter is stopped by its pid. heapd's own
endpoint (heapd --metrics) is test_heapd_metrics.py."""

import subprocess
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import Daemon, _live, built, clean_env, run, stop_process

# Every family heapctl (and heapd --metrics) writes and its type
# (metrics/metrics_text.cc).
FAMILIES = {
    "uniheap_up": "gauge", "uniheap_info": "gauge", "uniheap_uptime_seconds": "gauge",
    "uniheap_heap_size_bytes": "gauge", "uniheap_arena_bytes": "gauge",
    "uniheap_arenas": "gauge", "uniheap_sessions": "gauge", "uniheap_classes": "gauge",
    "uniheap_roots": "gauge", "uniheap_heapd_starts": "gauge",
    "uniheap_recovery_logs_replayed": "gauge", "uniheap_recovery_logs_discarded": "gauge",
    "uniheap_recovery_objects_live": "gauge", "uniheap_recovery_objects_freed": "gauge",
    "uniheap_recovery_refs_nulled": "gauge", "uniheap_recovery_locks_cleared": "gauge",
    "uniheap_recovery_duration_seconds": "gauge", "uniheap_recovery_gc_deferred": "gauge",
    # prometheus_client names a counter family without its _total.
    "uniheap_attaches": "counter", "uniheap_detaches": "counter",
    "uniheap_reattaches": "counter", "uniheap_sessions_reaped": "counter",
    "uniheap_reap_logs_replayed": "counter", "uniheap_reap_logs_rolled_back": "counter",
    "uniheap_reap_locks_released": "counter", "uniheap_arenas_leased": "counter",
    "uniheap_arenas_returned": "counter", "uniheap_classes_registered": "counter",
    "uniheap_log_extents_leased": "counter", "uniheap_log_trims": "counter",
    "uniheap_rpc_errors": "counter",
    "uniheap_commits": "counter", "uniheap_conflicts": "counter",
    "uniheap_gc_cycles": "counter", "uniheap_gc_cycles_given_up": "counter",
    "uniheap_gc_objects_freed": "counter", "uniheap_gc_freed_bytes": "counter",
}


@pytest.fixture
def heapd(tmp_dir, daemons):
    sock = tmp_dir / "heapd.sock"
    d = Daemon([built("heapd"), "--heap", tmp_dir / "heap", "--create", "--size", "64M",
                "--durability", "memory", "--name", "scraped", "--socket", sock],
               sock, tmp_dir / "heapd.log", env=clean_env())
    daemons.append(d.start())
    # A client: attaches, registers a class, sets a root, detaches.
    r = run([built("examples/c/demo_readme")], env=clean_env(UNIHEAP_SOCKET=sock))
    assert r.returncode == 0, r.stderr
    return d


def parse(text):
    """{family name: (type, {sample name: value})}; each sample carries
    the label heap="scraped"."""
    out = {}
    for f in text_string_to_metric_families(text):
        values = {}
        for s in f.samples:
            assert s.labels.get("heap") == "scraped", s
            values[s.name] = s.value
        out[f.name] = (f.type, values)
    return out


def check_values(m):
    assert {n: t for n, (t, _) in m.items()} == FAMILIES
    v = {name: val for _, vals in m.values() for name, val in vals.items()}
    assert v["uniheap_up"] == 1
    assert v["uniheap_heap_size_bytes"] == 64 << 20
    assert 0 < v["uniheap_arena_bytes"] <= v["uniheap_heap_size_bytes"]
    assert v["uniheap_roots"] == 1
    assert v["uniheap_sessions"] == 0
    assert v["uniheap_attaches_total"] >= 1
    assert v["uniheap_detaches_total"] >= 1
    assert v["uniheap_classes_registered_total"] >= 1
    assert v["uniheap_sessions_reaped_total"] == 0


def test_printed_for_the_textfile_collector(heapd):
    r = run([built("heapctl"), "--socket", heapd.sock, "metrics"])
    assert r.returncode == 0, r.stderr
    check_values(parse(r.stdout))
    info = [f for f in text_string_to_metric_families(r.stdout) if f.name == "uniheap_info"]
    assert info[0].samples[0].labels["durability"] == "memory"


def test_unreachable_heapd_is_exit_2(tmp_dir):
    r = run([built("heapctl"), "--socket", tmp_dir / "none.sock", "metrics"])
    assert r.returncode == 2 and r.stdout == ""


def test_served_over_http(heapd, tmp_dir):
    proc = subprocess.Popen([built("heapctl"), "--socket", heapd.sock, "metrics",
                             "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    _live[proc.pid] = proc
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving http://127.0.0.1:"), (line, proc.stderr.read())
        url = line.split()[1]
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            check_values(parse(resp.read().decode()))
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url.replace("/metrics", "/"), timeout=10)
        assert e.value.code == 404
        # heapd gone: the exporter stays and says so.
        heapd.stop()
        with urllib.request.urlopen(url, timeout=30) as resp:
            fams = list(text_string_to_metric_families(resp.read().decode()))
        assert [(f.name, f.samples[0].value) for f in fams] == [("uniheap_up", 0)]
    finally:
        stop_process(proc)
