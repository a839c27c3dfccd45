"""Process helpers shared by the pytest suites (bindings-python/tests,
tests/service): every process a test starts is stopped by its pid, never
by name."""

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
