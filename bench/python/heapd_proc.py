"""A private heapd for the Python benchmarks: started on a fresh heap in a
folder of the caller's, waited for (libuniheap's connect retries while the
socket is missing or refuses, up to 10 s), stopped by the caller."""
import os
import subprocess

import uniheap


def start_heapd(build, tmp, args):
    """heapd --create on tmp/heap with its socket at tmp/heapd.sock and
    its log at tmp/log, plus args; returns (process, socket path)."""
    sock = os.path.join(tmp, "heapd.sock")
    cmd = [str(build / "heapd"), "--heap", os.path.join(tmp, "heap"), "--socket", sock,
           "--create"] + list(args)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(tmp, "log"), "w"))
    try:
        uniheap.connect(sock, timeout=10).close()
    except uniheap.Disconnected:
        proc.kill()
        raise SystemExit("heapd did not start")
    return proc, sock
