"""A bank worker: transfers between the accounts under bankdefs.ROOT.

Usage: bank_worker.py WID COUNT SECONDS ACKFILE SEED MODE [GOFILE]
  MODE "fn":   each transfer runs in heap.atomic(fn), which retries it on
               a conflict;
  MODE "with": each in `with heap.atomic():`, retried here on Conflict.
Before each transfer it appends "I wid seq src dst amount" to ACKFILE, and
after its commit "A wid seq src dst amount moved" (moved: 0 when the source
could not pay). With GOFILE, it connects, then waits for GOFILE to exist
before the first transfer (so that several workers start together). Stops
after COUNT transfers or SECONDS. Exits 0, or 1 with
a message on stderr. The heap's socket comes from $UNIHEAP_SOCKET.
"""

import os
import random
import sys
import time

import uniheap
from bankdefs import accounts, record_append, transfer


def main():
    wid, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    ackpath, seed, mode = sys.argv[4], int(sys.argv[5]), sys.argv[6]
    gofile = sys.argv[7] if len(sys.argv) > 7 else None
    rng = random.Random(seed)
    fd = os.open(ackpath, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    conflicts = 0
    with uniheap.connect() as heap:
        heap.max_tries = 1_000_000
        accts = accounts(heap)
        n = len(accts)
        if gofile:
            wait_end = time.monotonic() + 30
            while not os.path.exists(gofile) and time.monotonic() < wait_end:
                time.sleep(0.002)
        end = time.monotonic() + seconds
        for seq in range(count):
            if time.monotonic() > end:
                break
            src = rng.randrange(n)
            dst = (src + 1 + rng.randrange(n - 1)) % n
            amount = rng.randint(1, 50)
            record_append(fd, f"I {wid} {seq} {src} {dst} {amount}")
            if mode == "fn":
                moved = heap.atomic(transfer, accts, src, dst, amount)
            else:
                while True:
                    try:
                        with heap.atomic():
                            moved = transfer(accts, src, dst, amount)
                        break
                    except uniheap.Conflict:
                        conflicts += 1
                        time.sleep(rng.random() * 0.002)
            record_append(fd, f"A {wid} {seq} {src} {dst} {amount} {moved}")
        stats = heap.stats()
    os.close(fd)
    print(f"worker {wid}: {seq + 1} transfers, {conflicts} conflicts caught, "
          f"{stats['retries']} retries, {stats['conflicts']} conflicts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
