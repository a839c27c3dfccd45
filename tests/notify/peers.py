"""The peer programs of the notification tests and benchmark: how to run
each language's peer, a private heapd, and the NotifyCell they share.
Used by tests/notify/test_pairs.py and bench/notify/latency.py."""
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "bindings-python"))
from processes import end_process, heapd_serving, jdk25_java, uniheap_jar  # noqa: E402

LANGS = ("c", "python", "java", "node")
ROOT = "notify.cell"


def build_dir():
    return Path(os.environ.get("UNIHEAP_BUILD") or REPO / "build").resolve()


def peer_argv(lang, sock, root, role, rounds):
    """The command line of lang's peer, or None when it is not built."""
    args = [sock, root, role, str(rounds)]
    here = REPO / "tests" / "notify"
    if lang == "c":
        prog = build_dir() / "tests" / "c" / "prog_notify_peer"
        return [str(prog)] + args if prog.exists() else None
    if lang == "python":
        return [sys.executable, str(here / "peer.py")] + args
    if lang == "node":
        node = shutil.which("node")
        return [node, str(here / "peer.js")] + args if node else None
    if lang == "java":
        java, jar = jdk25_java(), uniheap_jar(REPO)
        if not java or not jar:
            return None
        return [str(java), "--enable-native-access=ALL-UNNAMED", "-cp", str(jar),
                str(here / "NotifyPeer.java")] + args
    raise ValueError(lang)


def peer_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "bindings-python")] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


@contextlib.contextmanager
def heapd_running(size="64M"):
    """A private heapd on a fresh heap in a temporary folder; yields its
    socket; always stopped (by its pid) and the folder removed."""
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    d = Path(tempfile.mkdtemp(prefix="uniheap-notify-", dir=base))
    try:
        with heapd_serving(build_dir() / "heapd", d, "--size", size,
                           "--durability", "memory") as sock:
            yield sock
    finally:
        shutil.rmtree(d, ignore_errors=True)


class Cell:
    """The NotifyCell under ROOT, through a Python connection."""

    def __init__(self, sock, root=ROOT):
        import uniheap

        class NotifyCell(uniheap.PObject, name="NotifyCell"):
            ping = uniheap.i64()
            pong = uniheap.i64()
            ts = uniheap.i64()

        self.sock, self.root = sock, root
        self.heap = uniheap.connect(sock)
        with self.heap.atomic():
            self.heap.roots[root] = NotifyCell(self.heap)

    def reset(self):
        c = self.heap.roots[self.root]
        with self.heap.atomic():
            c.ping = c.pong = c.ts = 0

    def values(self):
        c = self.heap.roots[self.root]
        return c.ping, c.pong

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.heap.close()


class PairOutput:
    def __init__(self, writer, waiter):
        self.writer, self.waiter = writer, waiter

    def latency(self):
        """(p50, p99, max) in µs from the waiter's output."""
        m = re.search(r"latency_us p50=([\d.]+) p99=([\d.]+) max=([\d.]+)", self.waiter)
        return tuple(float(x) for x in m.groups()) if m else None

    def __repr__(self):
        return f"writer:\n{self.writer}\nwaiter:\n{self.waiter}"


def sessions(sock):
    """heapd's count of attached sessions (heapctl status)."""
    out = subprocess.run([str(build_dir() / "heapctl"), "--socket", sock, "status"],
                         capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"^sessions\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else 0


def wait_attached(proc, sock, before, timeout=60.0):
    """Wait until proc has attached (one session more than before), so that
    the other peer's first wait does not include this one's start-up (a
    JVM compiles its peer first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if sessions(sock) > before:
            return
        time.sleep(0.05)


def run_pair(sock, root, writer, waiter, rounds, timeout=300):
    """Run waiter then writer peers to the end; both must exit 0."""
    env = peer_env()
    procs = []
    try:
        for lang, role in ((waiter, "waiter"), (writer, "writer")):
            before = sessions(sock)
            procs.append(subprocess.Popen(peer_argv(lang, sock, root, role, rounds),
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          text=True, env=env, cwd=REPO))
            if role == "waiter":
                wait_attached(procs[-1], sock, before)
        outs = [p.communicate(timeout=timeout)[0] for p in procs]
    finally:
        for p in procs:
            end_process(p)
    out = PairOutput(outs[1], outs[0])
    for p, role in zip(procs, ("waiter", "writer")):
        assert p.returncode == 0, f"{role} exited {p.returncode}\n{out}"
    return out
