"""connect() waits for heapd: a client started before heapd connects once
heapd comes up within the timeout; timeout=0 fails at once and a missing
heapd fails after the timeout, with Disconnected naming the socket and
saying heapd is not running. Timings are checked from below and only
generously from above (the machine may be loaded)."""
import os
import threading
import time

import pytest

import uniheap
from conftest import HeapD

GENEROUS = 60.0


def not_running(exc, sock):
    msg = str(exc)
    assert isinstance(exc, uniheap.Disconnected), repr(exc)
    assert "heapd is not running" in msg and sock in msg, msg
    assert "heapd --heap" in msg, msg


def test_client_started_before_heapd(tmp_dir):
    server = HeapD(tmp_dir)
    result = {}

    def early():
        try:
            result["heap"] = uniheap.connect(server.sock, timeout=GENEROUS)
        except Exception as e:          # reported below
            result["error"] = e

    t = threading.Thread(target=early)
    t.start()
    try:
        time.sleep(0.5)
        assert "heap" not in result and "error" not in result
        server.start()
        t.join(GENEROUS + 10)
        assert not t.is_alive()
        assert "error" not in result, result.get("error")
        with result["heap"] as heap:
            assert heap.info()["heap_size"] > 0
    finally:
        t.join(GENEROUS + 10)
        server.stop()


def test_timeout_zero_fails_at_once(tmp_dir):
    sock = os.path.join(tmp_dir, "nobody.sock")
    t0 = time.monotonic()
    with pytest.raises(uniheap.Disconnected) as ei:
        uniheap.connect(sock, timeout=0)
    assert time.monotonic() - t0 < GENEROUS
    not_running(ei.value, sock)


def test_missing_heapd_fails_after_the_timeout(tmp_dir):
    sock = os.path.join(tmp_dir, "nobody.sock")
    t0 = time.monotonic()
    with pytest.raises(uniheap.Disconnected) as ei:
        uniheap.connect(sock, timeout=1.0)
    took = time.monotonic() - t0
    assert 0.95 <= took < GENEROUS, took
    not_running(ei.value, sock)


def test_timeout_must_be_seconds(tmp_dir):
    sock = os.path.join(tmp_dir, "nobody.sock")
    with pytest.raises(ValueError):
        uniheap.connect(sock, timeout=-1)
    with pytest.raises(ValueError):
        uniheap.connect(sock, timeout=float("nan"))
    with pytest.raises(TypeError):
        uniheap.connect(sock, timeout="5")
