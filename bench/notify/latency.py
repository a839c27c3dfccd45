"""Wake-up latency of change notifications, from a writer's commit to the
waiter running, for every pair of C, Python, Java and Node processes, and
the same ping-pong on Redis keyspace notifications (pub/sub over a UNIX
socket, from Python), in one run. A benchmark, never a test.

The uniheap rows run tests/notify's peers (see tests/notify/test_pairs.py
for the protocol): the writer stores the monotonic clock and ping = i in
one block, the waiter, woken by uh_wait, notes now - then; each round waits
for the other side's answer first, so every figure is a wake from sleep.
The clock is read before the commit, so a figure includes the commit
(memory class, tmpfs).

The Redis row: a redis-server started here on a UNIX socket (no TCP) with
notify-keyspace-events K$; the writer SETs ts then ping (a MULTI/EXEC
block); the waiter, subscribed to ping's keyspace channel, wakes on the
message, GETs ts and answers with SET pong, which the writer waits for the
same way. Both are Python processes (redis-py, hiredis).

  python3 bench/notify/latency.py [ROUNDS]      (default 5000)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "notify"))
from peers import LANGS, Cell, heapd_running, peer_argv, run_pair  # noqa: E402

REDIS_PEER = r'''
import sys, time, redis
sock, role, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = redis.Redis(unix_socket_path=sock)
p = r.pubsub(ignore_subscribe_messages=True)
p.subscribe("__keyspace@0__:" + ("ping" if role == "waiter" else "pong"))
print("ready", flush=True)
lat = []
for i in range(1, rounds + 1):
    if role == "writer":
        with r.pipeline(transaction=True) as t:
            t.set("ts", time.monotonic_ns()).set("ping", i).execute()
    want = "ping" if role == "waiter" else "pong"
    deadline = time.monotonic() + 10.0
    while int(r.get(want) or 0) != i:
        if time.monotonic() > deadline:
            sys.exit("no message within 10 s")
        p.get_message(timeout=max(0.0, deadline - time.monotonic()))
    if role == "waiter":
        lat.append(time.monotonic_ns() - int(r.get("ts")))
        r.set("pong", i)
print(f"redis {role}: {rounds} rounds")
if lat:
    lat.sort()
    n = len(lat)
    print(f"latency_us p50={lat[n // 2] / 1e3:.1f} p99={lat[n * 99 // 100] / 1e3:.1f} "
          f"max={lat[-1] / 1e3:.1f}")
'''


def redis_pair(rounds):
    server = shutil.which("redis-server")
    if not server:
        return None
    d = Path(tempfile.mkdtemp(prefix="uniheap-redis-",
                              dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    sock = str(d / "redis.sock")
    srv = subprocess.Popen([server, "--port", "0", "--unixsocket", sock, "--save", "",
                            "--appendonly", "no", "--notify-keyspace-events", "K$",
                            "--dir", str(d)], stdout=subprocess.DEVNULL)
    try:
        for _ in range(500):
            if os.path.exists(sock):
                break
            time.sleep(0.01)
        waiter = subprocess.Popen([sys.executable, "-c", REDIS_PEER, sock, "waiter",
                                   str(rounds)], stdout=subprocess.PIPE, text=True)
        waiter.stdout.readline()                      # subscribed
        writer = subprocess.Popen([sys.executable, "-c", REDIS_PEER, sock, "writer",
                                   str(rounds)], stdout=subprocess.PIPE, text=True)
        writer.stdout.readline()
        wout = writer.communicate(timeout=600)[0]
        aout = waiter.communicate(timeout=60)[0]
        if writer.returncode or waiter.returncode:
            return None
        import re
        m = re.search(r"p50=([\d.]+) p99=([\d.]+) max=([\d.]+)", aout + wout)
        return tuple(float(x) for x in m.groups()) if m else None
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(d, ignore_errors=True)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    print(f"wake-up latency, commit to waiter running, {rounds} round trips per pair "
          f"(memory class, tmpfs), microseconds")
    print(f"  {'writer -> waiter':<22}{'p50':>8}{'p99':>9}{'max':>10}")
    rows = {}
    with heapd_running() as sock:
        with Cell(sock) as cell:
            for w in LANGS:
                for a in LANGS:
                    if (peer_argv(w, sock, cell.root, "writer", 1) is None or
                            peer_argv(a, sock, cell.root, "waiter", 1) is None):
                        print(f"  {w + ' -> ' + a:<22}  (a peer is not built)")
                        continue
                    cell.reset()
                    lat = run_pair(sock, cell.root, w, a, rounds).latency()
                    rows[(w, a)] = lat
                    print(f"  {w + ' -> ' + a:<22}{lat[0]:>8.1f}{lat[1]:>9.1f}{lat[2]:>10.1f}",
                          flush=True)
    red = redis_pair(rounds)
    if red:
        print(f"  {'redis pub/sub (python)':<22}{red[0]:>8.1f}{red[1]:>9.1f}{red[2]:>10.1f}")
        py = rows.get(("python", "python"))
        if py:
            print(f"  python -> python p50 vs Redis keyspace notification p50: "
                  f"{red[0] / py[0]:.1f}x faster")
    else:
        print("  redis: no redis-server (make deps installs it), or it failed")


if __name__ == "__main__":
    main()
