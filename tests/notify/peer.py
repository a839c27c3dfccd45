#!/usr/bin/env python3
"""peer.py -- the Python peer of the cross-language wake-up test
(tests/notify, run by test_pairs.py; NOTIFY protocol):

    peer.py SOCKET ROOT ROLE ROUNDS        ROLE = writer | waiter

ROOT names a record NotifyCell {ping, pong, ts: i64} that the test made;
it is read through the generic proxy (not declared here).
  writer: for i in 1..ROUNDS: one block sets ts = monotonic ns and
          ping = i; then waits until pong == i.
  waiter: for i in 1..ROUNDS: waits until ping == i, notes monotonic ns
          - ts as the wake-up latency, then sets pong = i.
Each wait reads the token first, then the field, then waits since that
token, with a 10 s timeout: a timeout is a lost wake-up (stderr, exit 3).
Prints `peer python ROLE: ROUNDS rounds`, and for the waiter a second
line `latency_us p50=X p99=Y max=Z`."""
import sys
import time
from pathlib import Path

try:
    import uniheap
except ImportError:     # run from a checkout without PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings-python"))
    import uniheap

TIMEOUT_S = 10.0


def wait_until(heap, cell, field, value):
    """Wait until cell.<field> == value; exit 3 on a lost wake-up."""
    while True:
        tok = heap.token(cell)
        if getattr(cell, field) == value:
            return
        if heap.wait(cell, since=tok, timeout=TIMEOUT_S) is None:
            print(f"peer python: no wake-up within {TIMEOUT_S:.0f} s waiting for "
                  f"{field} == {value} (now {getattr(cell, field)})", file=sys.stderr)
            sys.exit(3)


def writer(heap, cell, rounds):
    for i in range(1, rounds + 1):
        with heap.atomic():
            cell.ts = time.monotonic_ns()
            cell.ping = i
        wait_until(heap, cell, "pong", i)


def waiter(heap, cell, rounds):
    lat = []
    for i in range(1, rounds + 1):
        wait_until(heap, cell, "ping", i)
        lat.append(time.monotonic_ns() - cell.ts)
        cell.pong = i
    return lat


def percentile(sorted_ns, p):
    return sorted_ns[min(len(sorted_ns) - 1, int(len(sorted_ns) * p))] / 1000.0


def main(argv):
    if len(argv) != 5 or argv[3] not in ("writer", "waiter"):
        print("usage: peer.py SOCKET ROOT writer|waiter ROUNDS", file=sys.stderr)
        return 2
    sock, root, role, rounds = argv[1], argv[2], argv[3], int(argv[4])
    with uniheap.connect(sock) as heap:
        cell = heap.roots[root]
        if role == "writer":
            writer(heap, cell, rounds)
        else:
            lat = sorted(waiter(heap, cell, rounds))
    print(f"peer python {role}: {rounds} rounds")
    if role == "waiter" and lat:
        print(f"latency_us p50={percentile(lat, 0.50):.1f} p99={percentile(lat, 0.99):.1f} "
              f"max={lat[-1] / 1000.0:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
