"""Process helpers shared by the pytest suites (bindings-python/tests,
tests/service, the cross-language suites): every process a test starts is
stopped by its pid, never by name."""

import contextlib
import signal
import socket
import subprocess
import time


def end_process(proc, timeout=5.0, sig=signal.SIGTERM):
    """Send sig to proc (a Popen the caller started), wait up to timeout,
    then SIGKILL. Returns the exit status (negative: the signal that ended
    it). Can't fail."""
    if proc.poll() is None:
        try:
            proc.send_signal(sig)
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        except ProcessLookupError:
            pass
    return proc.returncode


def socket_accepts(path):
    """True if a UNIX stream socket at path accepts a connection now."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        s.close()


def wait_accepting(proc, path, timeout):
    """Poll until the UNIX socket at path accepts connections while proc
    runs. Returns None once it does; else why not (proc exited, or timeout
    passed with proc still running: the caller stops it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"heapd exited with {proc.returncode} before serving {path}"
        if socket_accepts(path):
            return None
        time.sleep(0.01)
    return f"heapd did not accept on {path} within {timeout} s"


def jdk25_java(home=None):
    """The java of a JDK 25 (what the Java binding builds with): home, else
    $JAVA25_HOME, else the first JDK 25 under /usr/lib/jvm, as
    bindings-java/java.mk finds it. None when there is none."""
    import os
    from pathlib import Path
    home = home or os.environ.get("JAVA25_HOME")
    for d in [Path(home)] if home else sorted(Path("/usr/lib/jvm").glob("*")):
        java = d / "bin" / "java"
        if java.exists() and 'version "25' in subprocess.run(
                [str(java), "-version"], capture_output=True, text=True).stderr:
            return java
    return None


def uniheap_jar(repo):
    """The Java binding's jar that `make` builds in repo, or None."""
    jars = [j for j in (repo / "bindings-java" / "target").glob("uniheap-*.jar")
            if not j.name.endswith(("-sources.jar", "-javadoc.jar", "-tests.jar"))]
    return jars[0] if jars else None


@contextlib.contextmanager
def heapd_serving(heapd, workdir, *args, timeout=10.0):
    """heapd (its path) creating workdir/heap.uh with args (size,
    durability...), serving on workdir/heapd.sock, its output in
    workdir/heapd.log; yields the socket once it accepts; always stopped
    (by its pid)."""
    sock = str(workdir / "heapd.sock")
    log = open(workdir / "heapd.log", "ab")
    proc = subprocess.Popen([str(heapd), "--heap", str(workdir / "heap.uh"), "--socket", sock,
                             "--create", *args],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        why = wait_accepting(proc, sock, timeout)
        if why:
            raise RuntimeError(why)
        yield sock
    finally:
        end_process(proc)
        log.close()
