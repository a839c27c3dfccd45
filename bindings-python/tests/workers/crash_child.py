"""Dies (by the test's SIGKILL) in the middle of a block.

Usage: crash_child.py READYFILE
Inside `with heap.atomic():` it writes both accounts under bankdefs.ROOT
(666 and 667), allocates a new account and publishes it as root
"t.crash.ghost", then creates READYFILE and sleeps, never committing.
"""

import os
import sys
import time

import uniheap
from bankdefs import Account, accounts


def main():
    ready = sys.argv[1]
    heap = uniheap.connect()
    a, b = accounts(heap)[:2]
    with heap.atomic():
        a.balance = 666
        b.balance = 667
        a.owner = "dead"
        heap.roots["t.crash.ghost"] = Account(heap, balance=1)
        with open(ready + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(ready + ".tmp", ready)
        time.sleep(120)
    return 1   # never reached when the test kills us


if __name__ == "__main__":
    sys.exit(main())
