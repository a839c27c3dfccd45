"""The bank auditor: sums every balance in read-only blocks until STOPFILE
exists, and reports each committed sum that was not EXPECTED.

Usage: bank_auditor.py EXPECTED STOPFILE OUTFILE
Writes JSON to OUTFILE: {"audits": n, "conflicts": n, "bad": [sums...]}.
Blocks alternate between `with heap.atomic():` and heap.atomic(fn); a sum
counts only once its block ended without Conflict.
"""

import json
import os
import sys
import time

import uniheap
from bankdefs import accounts


def main():
    expected, stopfile, outfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    audits = conflicts = 0
    bad = []
    with uniheap.connect() as heap:
        accts = accounts(heap)

        def total():
            return sum(a.balance for a in accts)

        while not os.path.exists(stopfile):
            try:
                if audits % 2:
                    with heap.atomic():
                        s = total()
                else:
                    heap.max_tries = 1
                    s = heap.atomic(total)
            except uniheap.Conflict:
                conflicts += 1
                continue
            audits += 1
            if s != expected:
                bad.append(s)
            time.sleep(0.0005)
    with open(outfile, "w") as f:
        json.dump({"audits": audits, "conflicts": conflicts, "bad": bad}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
