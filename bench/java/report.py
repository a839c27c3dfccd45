"""Ratios of the Java binding's JMH run (bench/java/run.sh).

Usage: report.py JMH_JSON
Prints ns/op of each benchmark, then uniheap against its peers measured in
the same run: field get/set against a plain Java field, map get against
HashMap and lmdbjava, the speedup of 2 threads over 1 (ops/s ratio), and
YCSB's record read and scan against lmdbjava (time per operation), in a
block through proxies, and as bench/ycsb's Java DBs do them (uniheap: one
call copies a record, or a leaf's records for a scan; LMDB: each value
decoded into ByteIterators), and its one-field update (one call against
lmdbjava's read-modify-write transaction, each committed).
"""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        runs = json.load(f)
    score = {}
    for r in runs:
        name = r["benchmark"].rsplit(".", 1)[-1]
        keys = r.get("params", {}).get("keys")
        m = r["primaryMetric"]
        # JMH writes the error as the string "NaN" for fewer than 3 iterations.
        score[(name, keys)] = (m["score"], float(m["scoreError"]), r["threads"])
    print("\nbench/java results (ns per operation; 2T: per operation of each of 2 threads)")
    for (name, keys), (s, err, _) in sorted(score.items(), key=lambda kv: (kv[0][1] or "", kv[0][0])):
        label = name + (f" [{keys} keys]" if keys else "")
        print(f"  {label:36s} {s:10.2f} ± {err:.2f}")

    def ratio(a, b, keys=None):
        x, y = score.get((a, keys)), score.get((b, keys))
        return x[0] / y[0] if x and y and y[0] else float("nan")

    print("\nratios (same run)")
    print(f"  field get: uniheap / Java field        {ratio('uniheapFieldGet', 'javaFieldGet'):6.1f}x")
    print(f"  field set: uniheap / Java field        {ratio('uniheapFieldSet', 'javaFieldSet'):6.1f}x")
    for keys in sorted({k for (_, k) in score if k}, key=int):
        print(f"  map get [{keys} keys]: uniheap / HashMap   {ratio('uniheap', 'hashMap', keys):6.2f}x,"
              f"  uniheap / lmdbjava {ratio('uniheap', 'lmdbjava', keys):5.2f}x")
        for impl in ("uniheap", "hashMap", "lmdbjava"):
            one, two = score.get((impl, keys)), score.get((impl + "2T", keys))
            if one and two:
                print(f"    {impl:9s} 2 threads / 1 thread throughput: {2 * one[0] / two[0]:4.2f}x")

    for what in ("read", "scan"):
        for sfx, label in (("", "1 thread"), ("2T", "2 threads")):
            r = ratio(what + "Uniheap" + sfx, what + "Lmdb" + sfx)
            if r == r:
                print(f"  YCSB {what} ({label}): uniheap / lmdbjava time   {r:5.2f}x")
    # What bench/ycsb's Java DBs do now: uniheap's record (or a leaf's
    # records) copied in one call, a field of it written in one call;
    # LMDB's values decoded into YCSB's ByteIterators.
    for what, mine, peer in (("read", "readUniheapRecord", "readLmdbRecord"),
                             ("update", "updateUniheapRecord", "updateLmdb"),
                             ("scan", "scanUniheapRecords", "scanLmdbRecords")):
        r = ratio(mine, peer)
        if r == r:
            print(f"  YCSB {what}, record calls (1 thread): uniheap / lmdbjava time   {r:5.2f}x")


if __name__ == "__main__":
    main()
