"""Shared fixtures of the Python binding's tests.

Every test that needs a heap gets a private heapd on a fresh heap in a new
temporary folder (tmpfs when /dev/shm is there): ``heapd`` is that daemon,
``heap`` a connection to it. Every process started here is recorded by pid
and stopped by pid (SIGTERM, then SIGKILL after a timeout), also when a test
fails; nothing is ever killed by name.

Binaries come from $UNIHEAP_BUILD (default: <repo>/build): heapd, heapctl and
the C test programs build/tests/c/prog_*.
"""

import atexit
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
BINDINGS = TESTS.parent
REPO = BINDINGS.parent
WORKERS = TESTS / "workers"

# `python3 -m pytest bindings-python/tests` works without PYTHONPATH too;
# a uniheap package found on PYTHONPATH is used as it is.
if importlib.util.find_spec("uniheap") is None:
    sys.path.insert(0, str(BINDINGS))
# The folder holding the uniheap package under test (children use it too).
_spec = importlib.util.find_spec("uniheap")
PACKAGE_ROOT = (Path(_spec.origin).resolve().parent.parent if _spec and _spec.origin
                else BINDINGS)
# Process helpers shared with tests/service.
sys.path.insert(0, str(REPO / "tests"))
from processes import end_process, wait_accepting  # noqa: E402

# Modules the worker scripts share with the tests (bankdefs ...).
if str(WORKERS) not in sys.path:
    sys.path.append(str(WORKERS))


def build_dir():
    """Folder of the CMake build: $UNIHEAP_BUILD, else <repo>/build."""
    return Path(os.environ.get("UNIHEAP_BUILD") or REPO / "build").resolve()


def binary(name):
    """Path of heapd, heapctl or a tests/c prog_* program."""
    if name.startswith("prog_"):
        path = build_dir() / "tests" / "c" / name
    else:
        path = build_dir() / name
    if not path.exists():
        pytest.fail(f"{path} is missing: build the C part first (make)")
    return str(path)


# ---- processes we started: stopped by pid, never by name ----

_live = {}  # pid -> Popen


def track(proc):
    """Remember proc so that it is stopped even if the test forgets it."""
    _live[proc.pid] = proc
    return proc


def stop_process(proc, timeout=5.0, sig=signal.SIGTERM):
    """Send sig to proc (one we started), wait up to timeout, then SIGKILL.
    Returns the exit status. Can't fail."""
    rc = end_process(proc, timeout, sig)
    _live.pop(proc.pid, None)
    return rc


_owner_pid = os.getpid()


def _kill_all_live():
    if os.getpid() != _owner_pid:          # a forked child owns none of them
        return
    for proc in list(_live.values()):
        if proc.poll() is None:
            try:
                proc.kill()
                proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
    _live.clear()


atexit.register(_kill_all_live)


def temp_base():
    """A tmpfs folder when there is one (/dev/shm), else the temp dir. The
    socket path must fit AF_UNIX's 108 bytes."""
    if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        return "/dev/shm"
    base = tempfile.gettempdir()
    return base if len(base) < 60 else "/tmp"


def make_temp_dir(prefix="uniheap-py-"):
    return Path(tempfile.mkdtemp(prefix=prefix, dir=temp_base()))


# heapd runs under this tiny launcher: it asks the kernel to SIGTERM heapd
# when the test process dies (even by SIGKILL), then execs heapd. Done in a
# separate process because preexec_fn is unsafe in a process that has
# threads (libuniheap's gRPC threads).
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "ppid = int(sys.argv[1])\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))\n"
    "except Exception:\n"
    "    pass\n"
    "if os.getppid() != ppid:\n"
    "    sys.exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


class HeapD:
    """One private heapd on DIR/heap.uh, serving DIR/heapd.sock, logging to
    DIR/heapd.log. start() creates the heap when the file is missing and
    reopens it otherwise, so stop()+start() (restart()) keeps the heap."""

    def __init__(self, directory, size="64M", durability="memory", create_args=()):
        self.dir = Path(directory)
        self.create_args = list(create_args)    # more --create options (--max-size)
        self.heap = self.dir / "heap.uh"
        self.sock = str(self.dir / "heapd.sock")
        self.log = self.dir / "heapd.log"
        self.size = size
        self.durability = durability
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self, timeout=10.0):
        """Start heapd and wait until its socket accepts connections."""
        assert not self.running(), "heapd already running"
        argv = [binary("heapd"), "--heap", str(self.heap), "--socket", self.sock]
        if not self.heap.exists():
            # --max-size = --size: a test's heap keeps the size it asked for
            # (heapd's default lets it grow); create_args may override it.
            argv += ["--create", "--size", self.size, "--max-size", self.size,
                     "--durability", self.durability, *self.create_args]
        with open(self.log, "ab") as log:
            self.proc = track(subprocess.Popen(
                [sys.executable, "-S", "-c", _LAUNCHER, str(os.getpid())] + argv,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT))
        why = wait_accepting(self.proc, self.sock, timeout)
        if why is None:
            return self
        self.stop()
        raise RuntimeError(f"{why}\n{self.log_tail()}")

    def stop(self, timeout=5.0):
        """SIGTERM, wait, SIGKILL after timeout. No-op when not running."""
        if self.proc is not None:
            stop_process(self.proc, timeout)
            self.proc = None

    def kill(self):
        """SIGKILL heapd (a crash); the heap file stays."""
        if self.proc is not None:
            stop_process(self.proc, 5.0, signal.SIGKILL)
            self.proc = None

    def restart(self):
        self.stop()
        return self.start()

    def heapctl(self, *args, timeout=30):
        """Run heapctl --socket <sock> args...; a CompletedProcess (text)."""
        return subprocess.run([binary("heapctl"), "--socket", self.sock, *args],
                              capture_output=True, text=True, timeout=timeout)

    def log_tail(self, nbytes=3000):
        try:
            data = self.log.read_bytes()
        except OSError:
            return ""
        return data[-nbytes:].decode("utf-8", "replace")


def python_env(heapd=None, **extra):
    """Environment for a Python child process: same interpreter setup,
    bindings-python first on PYTHONPATH, UNIHEAP_SOCKET of heapd."""
    env = dict(os.environ)
    paths = [str(PACKAGE_ROOT), str(WORKERS)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["UNIHEAP_BUILD"] = str(build_dir())
    env["PYTHONUNBUFFERED"] = "1"
    if heapd is not None:
        env["UNIHEAP_SOCKET"] = heapd.sock
    env.update({k: str(v) for k, v in extra.items()})
    return env


def spawn_python(args, heapd=None, env=None, **popen_kw):
    """Start `python <args>` (a worker script path + its arguments, or
    ["-c", code]); tracked, so stopped at the end of the test at the latest."""
    popen_kw.setdefault("stdin", subprocess.DEVNULL)
    return track(subprocess.Popen([sys.executable, *map(str, args)],
                                  env=env or python_env(heapd), **popen_kw))


def run_python(args, heapd=None, timeout=60, env=None):
    """Run a Python child to its end; a CompletedProcess (text)."""
    return subprocess.run([sys.executable, *map(str, args)], env=env or python_env(heapd),
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def run_prog(name, *args, timeout=60):
    """Run a C test program build/tests/c/<name>; a CompletedProcess."""
    return subprocess.run([binary(name), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def wait_for(pred, timeout=10.0, interval=0.01):
    """Poll pred() until it is true (returns its value) or timeout (None)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


# ---- fixtures ----

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture
def tmp_dir():
    """A fresh folder on tmpfs, removed afterwards."""
    d = make_temp_dir()
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def heapd(request):
    """A private heapd on a fresh 64M heap (memory durability) in a new
    temporary folder; stopped (by pid) and removed after the test."""
    d = make_temp_dir()
    server = HeapD(d)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            sys.stderr.write(f"---- tail of heapd.log ----\n{server.log_tail()}\n----\n")
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def connect(heapd):
    """connect(**kw) opens one more connection to the test's heapd; every
    connection made through it is closed after the test."""
    import uniheap

    opened = []

    def _connect(sock=None, **kw):
        h = uniheap.connect(sock or heapd.sock, **kw)
        opened.append(h)
        return h

    yield _connect
    for h in opened:
        try:
            h.close()
        except Exception:
            pass


@pytest.fixture
def heap(connect):
    """A connection to the test's private heapd."""
    return connect()


@pytest.fixture
def uniheap_mod():
    import uniheap
    return uniheap
