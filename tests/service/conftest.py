"""Shared fixtures of the service tests: heapd run the way a user or the
system service runs it (default socket, readiness, reflection, installed
files), always on a fresh heap in a temporary folder.

Every process started here is stopped by its pid (SIGTERM, then SIGKILL
after a timeout), also when a test fails; heapd runs under
`setpriv --pdeathsig` so that it dies with the test process. Binaries come
from $UNIHEAP_BUILD (default: <repo>/build).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IS_ROOT = os.geteuid() == 0

sys.path.insert(0, str(REPO / "tests"))
from processes import end_process, socket_accepts, wait_accepting  # noqa: E402,F401

# Variables that choose heapd's socket or readiness protocol: a test sets
# the ones it means, never inherits them from the shell running it.
SOCKET_VARS = ("UNIHEAP_SOCKET", "XDG_RUNTIME_DIR", "NOTIFY_SOCKET")


def build_dir():
    return Path(os.environ.get("UNIHEAP_BUILD") or REPO / "build").resolve()


def built(name):
    """Path of a program of the build tree (heapd, heapctl, uniheap-check,
    examples/c/demo_readme)."""
    path = build_dir() / name
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (make)")
    return str(path)


def clean_env(**values):
    """os.environ without SOCKET_VARS, plus values (None removes)."""
    env = {k: v for k, v in os.environ.items() if k not in SOCKET_VARS}
    for k, v in values.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def as_user(uid, groups=()):
    """argv prefix that runs a program as uid, with gid uid and the
    supplementary groups given; empty for None."""
    if uid is None:
        return []
    extra = [f"--groups={','.join(map(str, groups))}"] if groups else ["--clear-groups"]
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", *extra]


def spare_uid(k=0):
    """The k-th of a few uids (and gids) no account and no other test run
    uses: heapd and clients run as them when the tests run as root, so
    /tmp/uniheap-<uid> is theirs alone even while other runs of this suite
    use their own."""
    return 2000000000 + (os.getpid() % 100000) * 10 + k


def run(argv, timeout=60, **kw):
    """Run a program to its end; a CompletedProcess with text output."""
    kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True,
                          timeout=timeout, **kw)


_live = {}  # pid -> Popen, stopped at the latest when the session ends


def stop_process(proc, timeout=10.0):
    """SIGTERM proc (one we started), wait, SIGKILL after timeout; its exit
    status (negative: the signal that ended it). Can't fail."""
    rc = end_process(proc, timeout)
    _live.pop(proc.pid, None)
    return rc


class Daemon:
    """One heapd started with argv (a heapd path and its options), env and
    cwd, optionally as another uid (with supplementary groups), logging to
    log. start() returns once `sock` accepts connections."""

    def __init__(self, argv, sock, log, env=None, cwd=None, uid=None, groups=()):
        self.argv = [str(a) for a in argv]
        self.sock = str(sock)
        self.log = Path(log)
        self.env = env if env is not None else clean_env()
        self.cwd = cwd
        self.uid = uid
        self.groups = groups
        self.proc = None

    def launch(self):
        """Start heapd and return at once."""
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                ["setpriv", "--pdeathsig", "SIGTERM", *as_user(self.uid, self.groups),
                 *self.argv],
                env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT)
        _live[self.proc.pid] = self.proc
        return self

    def start(self, timeout=20.0):
        """Start heapd and return once its socket accepts connections."""
        why = wait_accepting(self.launch().proc, self.sock, timeout)
        if why is None:
            return self
        self.stop()
        raise RuntimeError(f"{why}:\n{self.log_text()}")

    def stop(self):
        """SIGTERM; heapd's exit status (0: a clean stop)."""
        return stop_process(self.proc) if self.proc else None

    def log_text(self):
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""


def pytest_sessionfinish(session, exitstatus):
    for proc in list(_live.values()):
        stop_process(proc, timeout=5.0)


@pytest.fixture
def tmp_dir():
    """A fresh folder, short enough for AF_UNIX socket paths; removed after."""
    d = Path(tempfile.mkdtemp(prefix="uniheap-svc-", dir="/tmp"))
    d.chmod(0o755)  # other test uids walk through it to their own subfolders
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def daemons():
    """Start heapds through this list (daemons.append(Daemon(...).start()),
    or .launch()); every one still running at the end is stopped."""
    started = []
    yield started
    for d in started:
        d.stop()


@pytest.fixture(scope="session")
def installed():
    """A prefix that `cmake --install` filled from the build tree; shared
    by the tests of this run, removed after."""
    prefix = Path(tempfile.mkdtemp(prefix="uniheap-prefix-", dir="/tmp"))
    prefix.chmod(0o755)
    r = run(["cmake", "--install", build_dir(), "--prefix", prefix], timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    yield prefix
    shutil.rmtree(prefix, ignore_errors=True)
