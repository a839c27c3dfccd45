"""heapd --metrics HOST:PORT: heapd serves its state and counters in
Prometheus' text format at /metrics over plain HTTP, scraped with a plain
HTTP client and parsed by prometheus_client's parser. The commits and the
conflict a Python client makes show in uniheap_commits_total and
uniheap_conflicts_total, while it is connected and after it ended, and a
client that outlives a heapd restart counts on the new heapd from 0; bad
HTTP input gets an error answer and leaves heapd serving."""

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import REPO, Daemon, _live, built, clean_env, run, stop_process
from test_metrics import FAMILIES, parse

# A client in its own process: 5 blocks that write, then one lost
# conflict between two of its sessions (the first holds a lock the second
# needs); it scrapes while still connected and prints its sessions'
# counts and that scrape's.
CLIENT = r"""
import sys, urllib.request
import uniheap
from prometheus_client.parser import text_string_to_metric_families

class Acct(uniheap.PObject, name="t.metrics.Acct"):
    balance = uniheap.i64()

url = sys.argv[1]
h1 = uniheap.connect()
h2 = uniheap.connect()
a = Acct(h1, balance=0)
h1.roots["t.metrics.acct"] = a
for i in range(5):
    with h1.atomic():
        a.balance = i
a2 = h2.proxy(a.offset)
with h1.atomic():
    a.balance = 100
    try:
        with h2.atomic():
            a2.balance = 200
    except uniheap.Conflict:
        pass
live = {}
with urllib.request.urlopen(url, timeout=30) as r:
    for f in text_string_to_metric_families(r.read().decode()):
        for s in f.samples:
            live[s.name] = s.value
commits = h1.stats()["commits"] + h2.stats()["commits"]
conflicts = h1.stats()["conflicts"] + h2.stats()["conflicts"]
print(commits, conflicts, int(live["uniheap_commits_total"]),
      int(live["uniheap_conflicts_total"]))
h1.close()
h2.close()
"""


def metrics_url(d, nth=1, timeout=20.0):
    """The address the nth start of heapd logged for --metrics ...:0."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = re.findall(r"event=metrics listen=(\S+) ", d.log.read_text(errors="replace"))
        if len(found) >= nth:
            return f"http://{found[nth - 1]}/metrics"
        time.sleep(0.05)
    pytest.fail(f"heapd logged no metrics address:\n{d.log_text()}")


@pytest.fixture
def heapd(tmp_dir, daemons):
    sock = tmp_dir / "heapd.sock"
    # The GC file on tmpfs when there is one: a heapd that reuses it (a
    # restart with clients attached) zeroes the areas nobody holds, which
    # takes seconds on a disk file system.
    shm = Path("/dev/shm")
    gc_dir = Path(tempfile.mkdtemp(prefix="uniheap-svc-gc-",
                                   dir=shm if os.access(shm, os.W_OK) else tmp_dir))
    d = Daemon([built("heapd"), "--heap", tmp_dir / "heap", "--create", "--size", "64M",
                "--durability", "memory", "--name", "scraped", "--socket", sock,
                "--gc-file", gc_dir / "heapd.gc", "--metrics", "127.0.0.1:0"],
               sock, tmp_dir / "heapd.log", env=clean_env())
    try:
        daemons.append(d.start())
        d.url = metrics_url(d)
        yield d
    finally:
        d.stop()
        shutil.rmtree(gc_dir, ignore_errors=True)


def scrape(url):
    with urllib.request.urlopen(url, timeout=30) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return parse(resp.read().decode())


def values(m):
    return {name: val for _, vals in m.values() for name, val in vals.items()}


def test_scraped_and_parsed(heapd):
    m = scrape(heapd.url)
    assert {n: t for n, (t, _) in m.items()} == FAMILIES
    v = values(m)
    assert v["uniheap_up"] == 1
    assert v["uniheap_heap_size_bytes"] == 64 << 20
    assert v["uniheap_heapd_starts"] == 1
    assert v["uniheap_commits_total"] == 0 and v["uniheap_conflicts_total"] == 0
    # the same page as heapctl's, but for the clock and the scrape itself
    r = run([built("heapctl"), "--socket", heapd.sock, "metrics"])
    assert r.returncode == 0, r.stderr
    assert {n: t for n, (t, _) in parse(r.stdout).items()} == FAMILIES


def test_commits_and_conflicts_of_a_client(heapd):
    before = values(scrape(heapd.url))
    env = clean_env(UNIHEAP_SOCKET=heapd.sock,
                    PYTHONPATH=REPO / "bindings-python")
    r = run([sys.executable, "-c", CLIENT, heapd.url], env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    commits, conflicts, live_commits, live_conflicts = map(int, r.stdout.split())
    assert commits >= 5 and conflicts >= 1, r.stdout
    # while connected: the sessions' own counts, read from their GC areas
    assert live_commits - before["uniheap_commits_total"] == commits
    assert live_conflicts - before["uniheap_conflicts_total"] == conflicts
    # after the client ended: kept by heapd when it zeroed their areas
    after = values(scrape(heapd.url))
    assert after["uniheap_commits_total"] - before["uniheap_commits_total"] == commits
    assert after["uniheap_conflicts_total"] - before["uniheap_conflicts_total"] == conflicts
    assert after["uniheap_sessions"] == 0


# A client that outlives a heapd restart: 3 commits, then (after a line on
# stdin) 2 more on the new heapd, which it re-attaches to.
SURVIVOR = r"""
import sys
import uniheap

class Acct(uniheap.PObject, name="t.metrics.Acct"):
    balance = uniheap.i64()

h = uniheap.connect()
a = Acct(h, balance=0)
h.roots["t.metrics.survivor"] = a
c0 = h.stats()["commits"]
for i in range(3):
    with h.atomic():
        a.balance = i
print(h.stats()["commits"] - c0, flush=True)
sys.stdin.readline()
c1 = h.stats()["commits"]
for i in range(2):
    with h.atomic():
        a.balance = 10 + i
print(h.stats()["commits"] - c1, h.stats()["reattaches"], flush=True)
sys.stdin.readline()
h.close()
"""


def test_commits_across_a_heapd_restart(heapd):
    env = clean_env(UNIHEAP_SOCKET=heapd.sock, PYTHONPATH=REPO / "bindings-python")
    proc = subprocess.Popen([sys.executable, "-c", SURVIVOR], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    _live[proc.pid] = proc
    try:
        assert proc.stdout.readline().split() == ["3"]
        assert values(scrape(heapd.url))["uniheap_commits_total"] >= 3
        assert heapd.stop() == 0
        heapd.start()
        url = metrics_url(heapd, nth=2)
        # the new heapd counts from 0: the 3 were the previous heapd's
        assert values(scrape(url))["uniheap_commits_total"] == 0
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().split() == ["2", "1"]
        assert values(scrape(url))["uniheap_commits_total"] == 2
        proc.stdin.write("end\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
        assert values(scrape(url))["uniheap_commits_total"] == 2
    finally:
        stop_process(proc)


def test_gc_cycles_counted(heapd):
    r = run([built("heapctl"), "--socket", heapd.sock, "gc", "--wait"])
    assert r.returncode == 0, r.stdout + r.stderr
    v = values(scrape(heapd.url))
    assert v["uniheap_gc_cycles_total"] >= 1


def raw(url, data, linger=0.0):
    """Send data to the metrics port, optionally wait, return what came
    back (heapd may close, and so reset, a connection that sends more
    than it reads: then what arrived before, maybe nothing)."""
    host, port = url.split("/")[2].rsplit(":", 1)
    out = b""
    with socket.create_connection((host, int(port)), timeout=30) as s:
        try:
            s.sendall(data)
            time.sleep(linger)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        try:
            while chunk := s.recv(65536):
                out += chunk
        except ConnectionResetError:
            pass
    return out


def test_bad_http_input(heapd):
    junk = {
        b"\x00\xff\xfe garbage \x01\r\n\r\n": b"400",
        b"GET\r\n\r\n": b"400",
        b"GET /metrics HTTP/9.9\r\n\r\n": b"400",
        b"get /metrics HTTP/1.1\r\n\r\n": b"400",
        b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc": b"405",
        b"GET /nothing HTTP/1.1\r\n\r\n": b"404",
        b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n": b"200",
        b"A" * 100000: b"400",            # no line end, far past the size limit
        b"GET /metr": b"400",              # cut short: the client stopped sending
    }
    for data, want in junk.items():
        answer = raw(heapd.url, data)
        if len(data) > 8192 and not answer:
            pass                           # reset while still sending: fine
        else:
            assert answer.split(b" ")[1] == want, (data[:40], answer[:200])
        assert heapd.proc.poll() is None
    assert raw(heapd.url, b"", linger=0.2) == b""     # connected, sent nothing
    v = values(scrape(heapd.url))
    assert v["uniheap_up"] == 1
    assert heapd.stop() == 0                            # and it still stops cleanly


def test_bad_address_fails_the_start(tmp_dir):
    sock = tmp_dir / "heapd.sock"
    for bad in ["nocolon", "127.0.0.1:notaport", "256.1.1.1:1"]:
        r = run([built("heapd"), "--heap", tmp_dir / "heap", "--create", "--size", "64M",
                 "--durability", "memory", "--socket", sock, "--metrics", bad],
                env=clean_env(), timeout=60)
        assert r.returncode == 1, (bad, r.stdout, r.stderr)
        assert "--metrics" in r.stderr, r.stderr
        assert not sock.exists()
