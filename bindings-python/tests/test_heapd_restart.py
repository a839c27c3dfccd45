"""heapd SIGKILLed and restarted 20 times under a running workload of C,
Python, Node and Java client processes whose code has no reconnect logic
(tests/c/prog_restart_worker.c, workers/restart_worker.py,
bindings-node/test/workers/restart_worker.js, bindings-java/.../RestartWorker.java;
Node only when its addon is built, Java when the jar is and a JDK 25 is
found): libuniheap re-attaches each of them on its own, blocks in flight
are re-run, nothing acknowledged is lost, and every worker completes."""
import re
import shutil
import subprocess
import time

from processes import jdk25_java, uniheap_jar

from conftest import (REPO, WORKERS, HeapD, binary, python_env, spawn_python, stop_process,
                      track, wait_for)

import uniheap

RESTARTS = 20
NODE_WORKER = REPO / "bindings-node" / "test" / "workers" / "restart_worker.js"
NODE_ADDON = REPO / "bindings-node" / "build" / "Release" / "uniheap.node"
JAVA_WORKER = (REPO / "bindings-java" / "src" / "test" / "java" / "org" / "uniheap" / "test" /
               "workers" / "RestartWorker.java")


def java_worker_argv():
    """How to run the Java worker (a single source file on the uniheap jar
    `make` builds, with a JDK 25), or None when either is missing."""
    java, jar = jdk25_java(), uniheap_jar(REPO)
    if not java or not jar:
        return None
    return [str(java), "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1",
            "-cp", str(jar), str(JAVA_WORKER)]


def acks(path):
    """[(op, re-attaches so far)] of a worker's ack file: its whole lines
    (the worker may be writing the last one while this reads)."""
    try:
        lines = path.read_text().split("\n")[:-1]
    except FileNotFoundError:
        return []
    return [tuple(map(int, line.split())) for line in lines]


def acked(path):
    return [op for op, _ in acks(path)]


def reattached(path):
    a = acks(path)
    return a[-1][1] if a else 0


def stop_process_all(workers):
    for p in workers.values():
        stop_process(p)


def report(workers, tmp_dir, before):
    lines = []
    for n, p in workers.items():
        o, e = p.communicate(timeout=10)
        lines.append(f"{n}: exit {p.returncode}, re-attaches {reattached(tmp_dir / f'{n}.ack')} "
                     f"(before the restart {before[n]}): {o} {e}")
    return "\n".join(lines) + "\n"


def test_heapd_restarts_under_load(tmp_dir):
    # Each client process leases a 1 MiB arena per size class its list
    # storages pass through: five of them need more than 64M.
    heapd = HeapD(tmp_dir, size="256M").start()
    try:
        run_restarts(heapd, tmp_dir)
    finally:
        heapd.stop()


def run_restarts(heapd, tmp_dir):
    stop = tmp_dir / "stop"
    workers = {}
    for name in ("c1", "c2"):
        workers[name] = track(subprocess.Popen(
            [binary("prog_restart_worker"), "--socket", heapd.sock, "--name", name,
             "--ack", str(tmp_dir / f"{name}.ack"), "--stop", str(stop)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for name in ("py1", "py2"):
        workers[name] = spawn_python([WORKERS / "restart_worker.py", name,
                                      tmp_dir / f"{name}.ack", stop], heapd,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    node = shutil.which("node")
    if node and NODE_ADDON.exists():
        workers["node1"] = track(subprocess.Popen(
            [node, str(NODE_WORKER), "node1", str(tmp_dir / "node1.ack"), str(stop)],
            env=python_env(heapd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    java = java_worker_argv()
    if java:
        env = {k: v for k, v in python_env(heapd).items() if k != "UNIHEAP_LIB"}
        workers["java1"] = track(subprocess.Popen(
            java + ["java1", str(tmp_dir / "java1.ack"), str(stop)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        # Generous: a JVM and four other clients start at once on 2 cores.
        assert wait_for(lambda: all(acked(tmp_dir / f"{n}.ack") for n in workers), 120)
        down = []
        for _ in range(RESTARTS):
            before = {n: reattached(tmp_dir / f"{n}.ack") for n in workers}
            t0 = time.monotonic()
            heapd.kill()
            time.sleep(0.05)
            heapd.start()
            down.append(time.monotonic() - t0)
            # every worker re-attaches and gets on with its ops
            if not wait_for(lambda: all(reattached(tmp_dir / f"{n}.ack") > before[n]
                                        for n in workers), 60):
                stop_process_all(workers)
                raise AssertionError(report(workers, tmp_dir, before) + heapd.log_tail())
        stop.touch()
        out = {}
        for name, p in workers.items():
            o, e = p.communicate(timeout=120)
            assert p.returncode == 0, f"{name}: exit {p.returncode}: {e}"
            out[name] = dict(re.findall(r"(\w+)=([\d.]+)", o))
    finally:
        stop.touch()
        for p in workers.values():
            stop_process(p)
    # Nothing acknowledged is lost: every list holds 1..n, in order, and
    # the shared counter counts every op.
    with uniheap.connect(heapd.sock) as h:
        total = 0
        for name in workers:
            ops = acked(tmp_dir / f"{name}.ack")
            assert ops == list(range(1, len(ops) + 1))
            assert list(h.roots[f"rs.{name}"]) == ops
            assert int(out[name]["ops"]) == len(ops)
            total += len(ops)
        assert h.roots["rs.count"][0] == total
        h.check()
    print(f"heapd down (SIGKILL, 50 ms, start until it serves): "
          f"mean {sum(down) / len(down) * 1e3:.0f} ms, max {max(down) * 1e3:.0f} ms")
    for name, o in out.items():
        print(f"{name}: ops {o['ops']}, re-attaches {o['reattaches']}, longest block that "
              f"re-attached {o['reattach_ms_max']} ms, mean re-attach "
              f"{float(o['reattach_ms_total']) / int(o['reattaches']):.0f} ms")
        assert int(o["reattaches"]) == RESTARTS
