"""peer.py -- the Python peer of the cross-language test of hash-map
values (test_inline_values.py, which describes the protocol):

    python3 peer.py SOCKET ROOT ME [EARLIER,...]

Checks what the earlier writers left in the hash map under ROOT, then adds
its own keys and overwrites the shared ones. Exit 0 ("peer ME: checked N
values, wrote M"), 2 with every mismatch printed, 1 on another error.
"""
import sys
from pathlib import Path

NKEYS = 120


def value(lang, i):
    """Key i's value as lang writes it: a str for even i, bytes for odd,
    of (i * 37) % 200 bytes (inline in the entry up to 128, an object
    beyond)."""
    n, seed = (i * 37) % 200, len(lang)
    if i % 2 == 0:
        return "".join(chr(97 + (i + j + seed) % 26) for j in range(n))
    return bytes((i * 7 + j + seed) % 256 for j in range(n))


def check(m, earlier):
    """Mismatches of the map against what the earlier writers put."""
    bad = []
    for lang in set(earlier):
        for i in range(NKEYS):
            got = m.get(f"{lang}-{i}")
            if got != value(lang, i):
                bad.append(f"{lang}-{i}: {got!r:.60}")
    for i in range(NKEYS if earlier else 0):
        if m.get(f"shared-{i}") != value(earlier[-1], i):
            bad.append(f"shared-{i}: not {earlier[-1]}'s")
    want = NKEYS * (len(set(earlier)) + 1) if earlier else 0
    if len(m) != want:
        bad.append(f"{len(m)} keys, not {want}")
    return bad


def main():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings-python"))
    import uniheap
    sock, root, me = sys.argv[1:4]
    earlier = [w for w in (sys.argv[4] if len(sys.argv) > 4 else "").split(",") if w]
    with uniheap.connect(sock) as heap:
        if root not in heap.roots:
            heap.roots[root] = uniheap.PMap(heap, key=str)
        m = heap.roots[root]
        bad, checked = check(m, earlier), len(m)
        for line in bad:
            print(f"peer {me}: MISMATCH {line}")
        if bad:
            return 2
        for i in range(NKEYS):
            m[f"{me}-{i}"] = value(me, i)
            m[f"shared-{i}"] = value(me, i)
        print(f"peer {me}: checked {checked} values, wrote {2 * NKEYS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
