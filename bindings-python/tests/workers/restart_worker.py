"""A client with no reconnect logic, for test_heapd_restart: the Python
twin of tests/c/prog_restart_worker.c (same roots, same ops, same output).

    restart_worker.py NAME ACK_FILE STOP_FILE      (UNIHEAP_SOCKET set)
"""
import os
import sys
import time

import uniheap


def main():
    name, ack, stop = sys.argv[1:4]
    heap = uniheap.connect()
    root = f"rs.{name}"

    def setup():
        if root not in heap.roots:
            heap.roots[root] = uniheap.PList(heap)
        if "rs.count" not in heap.roots:
            heap.roots["rs.count"] = uniheap.PArray(heap, "i64", 1)

    heap.atomic(setup)
    items, count = heap.roots[root], heap.roots["rs.count"]
    i, longest = 0, 0.0
    with open(ack, "a", buffering=1) as acks:
        while not os.path.exists(stop):
            i += 1

            def op():
                if len(items) != i - 1:
                    raise AssertionError(f"the list has {len(items)} elements before op {i}")
                items.append(i)
                count[0] += 1

            before = heap.stats()["reattaches"]
            t0 = time.monotonic()
            heap.atomic(op)
            if heap.stats()["reattaches"] != before:
                longest = max(longest, time.monotonic() - t0)
            acks.write(f"{i} {heap.stats()['reattaches']}\n")
            time.sleep(0.001)
    st = heap.stats()
    print(f"ops={i} reattaches={st['reattaches']} reattach_ms_max={longest * 1e3:.1f} "
          f"reattach_ms_total={st['reattach_ns'] / 1e6:.1f}")
    heap.close()


if __name__ == "__main__":
    main()
