"""Puts keys into a shared PMap and counts them in the same map.

Usage: map_writer.py WID COUNT GOFILE
The map is root "t.mp.map" (str keys). Each step, in one heap.atomic(fn)
call (re-run on Conflict): m["w<WID>-<i>"] = i and m["count"] += 1; every
tenth step also deletes the key of step i - 5. Waits for GOFILE first.
Exits 0 when done.
"""

import os
import sys
import time

import uniheap


def main():
    wid, count, gofile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    with uniheap.connect() as heap:
        heap.max_tries = 1_000_000
        m = heap.roots["t.mp.map"]
        end = time.monotonic() + 30
        while not os.path.exists(gofile) and time.monotonic() < end:
            time.sleep(0.002)

        def step(i):
            m[f"w{wid}-{i}"] = i
            m["count"] = m["count"] + 1
            if i % 10 == 9:
                del m[f"w{wid}-{i - 5}"]

        for i in range(count):
            heap.atomic(step, i)
        print(f"writer {wid}: {heap.stats()['retries']} retries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
