"""Updates the accounts a killed process left locked.

Usage: crash_updater.py A B
Sets the first two accounts under bankdefs.ROOT to A and B in one
heap.atomic(fn) call (retried on Conflict until heapd has reaped the dead
session and released its locks). Exits 0; 1 (message on stderr) if any
try saw the dead block's values (666/667) or the update failed.
"""

import sys

import uniheap
from bankdefs import accounts


def main():
    va, vb = int(sys.argv[1]), int(sys.argv[2])
    seen_dead = []
    with uniheap.connect() as heap:
        heap.max_tries = 100000
        a, b = accounts(heap)[:2]

        def update():
            if a.balance in (666, 667) or b.balance in (666, 667) or a.owner == "dead":
                seen_dead.append((a.balance, b.balance))
            a.balance = va
            b.balance = vb

        heap.atomic(update)
        tries = heap.stats()["retries"] + 1
        if seen_dead:
            print(f"saw the dead block's writes: {seen_dead[:5]}", file=sys.stderr)
            return 1
        if (a.balance, b.balance) != (va, vb):
            print(f"update lost: {a.balance} {b.balance}", file=sys.stderr)
            return 1
    print(f"updated after {tries} tries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
