#!/usr/bin/env python3
"""peer.py -- the Python writer or reader of the cross-language growth test
(tests/grow/test_growth.py; the protocol is tests/c/prog_grow_fill.c's):

    peer.py SOCKET write ID BLOCKS [FIRST]
    peer.py SOCKET read WRITERS DIR

write: prints "ready" once connected and, if $UH_GROW_GO names a file,
  waits for it; then publishes blocks FIRST.. BLOCKS - 1 (FIRST: 0), block k a chain of
  200 GrowFill records valued ID * 1e9 + k * 1000 + i (the head holds i =
  199), under the root "w<ID>.<k>", one block each; prints "blocks N", N
  the blocks acknowledged (committed) in all, and exits 0, or 3 after a
  HeapFull (its message printed), 1 after another error.
read: read-only; prints "ready" once connected, then follows every
  writer's blocks (writers 0..WRITERS-1) in order while they are published
  and checks each whole chain; once DIR/done exists, one more pass, then
  prints "read N" and exits 0 if every check passed (else 2)."""
import os
import sys
import time
from pathlib import Path

try:
    import uniheap
except ImportError:     # run from a checkout without PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings-python"))
    import uniheap

REC = 200


class GrowFill(uniheap.PObject, name="GrowFill"):
    value = uniheap.i64()
    next = uniheap.ref()
    a = uniheap.i64()
    b = uniheap.i64()
    c = uniheap.i64()
    d = uniheap.i64()


def value(me, k, i):
    return me * 1000000000 + k * 1000 + i


def wait_go():
    """Connected: say so, then wait for $UH_GROW_GO (a file), if set."""
    print("ready", flush=True)
    go = os.environ.get("UH_GROW_GO")
    while go and not os.path.exists(go):
        time.sleep(0.005)


def write(heap, me, blocks, first):
    wait_go()
    k = first
    roots = heap.roots

    def publish():
        prev = None
        for i in range(REC):
            prev = GrowFill(heap, value=value(me, k, i), next=prev)
        roots[f"w{me}.{k}"] = prev
    try:
        while k < blocks:
            heap.atomic(publish)
            k += 1
    except uniheap.HeapFull as e:
        print(f"blocks {k}\nfull: {e}", flush=True)
        return 3
    except uniheap.Error as e:
        print(f"blocks {k}", flush=True)
        print(f"writer {me}, block {k}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"blocks {k}", flush=True)
    return 0


def read_block(roots, w, k):
    """1: block k of writer w is published and whole; 0: not yet."""
    o = roots.get(f"w{w}.{k}")
    if o is None:
        return 0
    n = 0
    while o is not None and n <= REC:
        want = value(w, k, REC - 1 - n)
        if o.value != want:
            raise ValueError(f"w{w}.{k} record {n}: {o.value}, want {want}")
        o, n = o.next, n + 1
    if n != REC:
        raise ValueError(f"w{w}.{k}: {n} records")
    return 1


def read(heap, writers, done):
    print("ready", flush=True)
    nxt, total, last = [0] * writers, 0, False
    roots = heap.roots
    while not last:
        last = os.path.exists(done)
        for w in range(writers):
            while read_block(roots, w, nxt[w]):
                nxt[w] += 1
                total += 1
        if not last:
            time.sleep(0.002)
    print(f"read {total}", flush=True)
    return 0


def main(argv):
    if len(argv) < 5 or argv[2] not in ("write", "read"):
        print(__doc__, file=sys.stderr)
        return 2
    sock, mode = argv[1], argv[2]
    with uniheap.connect(sock, readonly=mode == "read") as heap:
        if mode == "write":
            return write(heap, int(argv[3]), int(argv[4]), int(argv[5]) if len(argv) > 5 else 0)
        try:
            return read(heap, int(argv[3]), os.path.join(argv[4], "done"))
        except (ValueError, uniheap.Error) as e:
            print(f"reader: {type(e).__name__}: {e}", file=sys.stderr)
            return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
