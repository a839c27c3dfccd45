"""The servers a YCSB run needs: heapd on a fresh heap, redis-server on a
private UNIX socket. Each is started in a folder of its own, stopped by the
pid this module started (SIGTERM, then SIGKILL after a grace period), and
stopped at exit if a caller forgot; nothing is ever stopped by name.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The process helpers the test suites share (tests/processes.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from processes import end_process, socket_accepts  # noqa: E402

_started = {}       # pid -> Popen, until stopped


def _stop_all():
    for proc in list(_started.values()):
        _stop(proc, grace=2.0)


atexit.register(_stop_all)


def _stop(proc, grace=10.0):
    """SIGTERM, wait up to grace seconds, SIGKILL; returns the exit status."""
    _started.pop(proc.pid, None)
    return end_process(proc, timeout=grace)


def temp_dir(prefix, base=None):
    """A new folder for a heap, an LMDB environment or a Redis server: under
    base if given, else on tmpfs (/dev/shm) when there is one. Socket paths
    inside it must fit AF_UNIX's 108 bytes."""
    if base is None:
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


class ServiceError(Exception):
    """A server did not start; the message quotes its log."""


def _wait_until(ready, proc, what, log, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ready():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    tail = Path(log).read_text(errors="replace")[-2000:] if Path(log).exists() else ""
    _stop(proc)
    raise ServiceError(f"{what} did not start (exit status {proc.returncode}); its log:\n{tail}")


def build_dir(repo):
    """The CMake build folder: $UNIHEAP_BUILD, else <repo>/build."""
    return Path(os.environ.get("UNIHEAP_BUILD") or Path(repo) / "build").resolve()


class Heapd:
    """heapd serving a new heap file in folder (created --durability mode),
    of size bytes that may grow to max_size (default: size, no growth)."""

    def __init__(self, build, folder, durability="memory", size="1G", log_size=None,
                 max_size=None):
        self.build = Path(build)
        self.folder = Path(folder)
        self.heap = self.folder / "ycsb.heap"
        self.socket = self.folder / "heapd.sock"
        self.log = self.folder / "heapd.log"
        self.durability = durability
        for b in ("heapd", "heapctl"):
            if not (self.build / b).exists():
                raise ServiceError(f"{self.build / b} is missing: run make first")
        args = [str(self.build / "heapd"), "--heap", str(self.heap), "--create",
                "--size", size, "--max-size", max_size or size,
                "--durability", durability, "--socket", str(self.socket)]
        if log_size:
            args += ["--log-size", log_size]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        _started[self.proc.pid] = self.proc
        _wait_until(self.healthy, self.proc, "heapd", self.log)

    def heapctl(self, *args, json=False):
        cmd = [str(self.build / "heapctl"), "--socket", str(self.socket)]
        if json:
            cmd.append("--json")
        return subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=600)

    def healthy(self):
        return self.socket.exists() and self.heapctl("health").returncode == 0

    def check(self):
        """(passed, output) of heapctl check."""
        r = self.heapctl("check")
        return r.returncode == 0, (r.stdout + r.stderr).strip()

    def env(self):
        """Environment for clients of this heapd."""
        return dict(os.environ, UNIHEAP_SOCKET=str(self.socket))

    def stop(self):
        return _stop(self.proc)


class Redis:
    """redis-server on a UNIX socket in folder, no TCP port. Durability
    class memory: no persistence at all; sync: an append-only file
    fsynced at every write (appendfsync always)."""

    def __init__(self, folder, durability="memory"):
        exe = shutil.which("redis-server")
        if exe is None:
            raise ServiceError("redis-server is not installed: run make deps")
        self.folder = Path(folder)
        self.socket = self.folder / "redis.sock"
        self.log = self.folder / "redis.log"
        args = [exe, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
                "--dir", str(self.folder), "--logfile", str(self.log), "--save", "",
                "--daemonize", "no"]
        if durability == "sync":
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        else:
            args += ["--appendonly", "no"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     stdin=subprocess.DEVNULL)
        _started[self.proc.pid] = self.proc
        _wait_until(self.ping, self.proc, "redis-server", self.log)

    def ping(self):
        return socket_accepts(self.socket)

    def stop(self):
        return _stop(self.proc)
