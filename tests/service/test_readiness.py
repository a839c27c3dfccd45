"""Readiness for a service manager (systemd Type=notify), checked without
systemd: heapd sends READY=1 to $NOTIFY_SOCKET only once its socket serves
gRPC calls, and STOPPING=1 when SIGTERM stops it."""

import socket

import grpc
import pytest

from conftest import Daemon, built, clean_env, socket_accepts

HEALTH_CHECK = "/grpc.health.v1.Health/Check"
SERVING = b"\x08\x01"  # HealthCheckResponse{status: SERVING}, wire format


def heapd_argv(tmp_dir):
    return [built("heapd"), "--heap", tmp_dir / "heap", "--create", "--size", "64M",
            "--durability", "memory", "--socket", tmp_dir / "heapd.sock"]


def notify_listener(address):
    """A datagram socket bound where $NOTIFY_SOCKET will point."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(address)
    s.settimeout(30)
    return s


def assignments(datagram):
    return dict(line.split("=", 1) for line in datagram.decode().splitlines() if line)


def health_now(sock):
    """One health Check that does not wait for the server to come up:
    it fails at once unless heapd serves now."""
    with grpc.insecure_channel(f"unix:{sock}") as ch:
        check = ch.unary_unary(HEALTH_CHECK)
        return check(b"", timeout=10, wait_for_ready=False)


@pytest.mark.parametrize("where", ["path", "abstract"])
def test_ready_only_when_serving_then_stopping(tmp_dir, daemons, where):
    if where == "path":
        address = env_value = str(tmp_dir / "notify.sock")
    else:
        address = f"\0uniheap-test-notify-{tmp_dir.name}"
        env_value = "@" + address[1:]
    sock = tmp_dir / "heapd.sock"
    with notify_listener(address) as listener:
        d = Daemon(heapd_argv(tmp_dir), sock, tmp_dir / "heapd.log",
                   env=clean_env(NOTIFY_SOCKET=env_value))
        daemons.append(d.launch())
        ready = assignments(listener.recv(4096))
        # The moment READY=1 arrives, calls already succeed.
        assert socket_accepts(sock)
        assert health_now(sock) == SERVING
        assert ready["READY"] == "1", ready
        assert ready["STATUS"] == f"serving {tmp_dir / 'heap'} on {sock}"

        d.proc.send_signal(15)
        stopping = assignments(listener.recv(4096))
        assert stopping == {"STOPPING": "1"}
        assert d.proc.wait(timeout=30) == 0


def test_unreachable_notify_socket_is_not_fatal(tmp_dir, daemons):
    """A NOTIFY_SOCKET nobody listens on costs a warning in the log, not
    the service."""
    sock = tmp_dir / "heapd.sock"
    d = Daemon(heapd_argv(tmp_dir), sock, tmp_dir / "heapd.log",
               env=clean_env(NOTIFY_SOCKET=tmp_dir / "nobody.sock"))
    daemons.append(d.start())
    assert health_now(sock) == SERVING
    assert d.stop() == 0
    log = d.log_text()
    assert "event=notify" in log and str(tmp_dir / "nobody.sock") in log, log
