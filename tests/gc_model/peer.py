#!/usr/bin/env python3
"""peer.py -- the Python participant of the cross-language GC model test
(tests/gc_model/test_languages.py; the protocol is prog_gc_model.c's,
described in test_languages.py):

    peer.py SOCKET ID NPROC SECONDS SEED

Builds chains of gcm.Node under its keys "w<ID>.k<K>" of the map at root
"gcm.map", holds some chains' heads as proxies (the proxy is the pin: no
explicit pin in Python), drops them, re-links its heads' `other` to any
participant's chain, removes keys and reads other participants' chains in
blocks, for SECONDS seconds, while heapd's collector runs cycles back to
back. Every chain it holds or keeps under its keys is checked (outside any
block) for being exactly the one it built, and one hop along `other` for
being whole: a FreedObjectError or a wrong tag, length or payload there
means the collector took something live.

Exit 0 when done (prints its counters), 1 on an unexpected error (a full
heap included), 2 when something live was found freed or torn."""
import random
import sys
import time
from pathlib import Path

try:
    import uniheap
except ImportError:     # run from a checkout without PYTHONPATH
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings-python"))
    import uniheap

NKEYS, NHELD, PAY_MAX = 64, 32, 47
TRIES = 1000       # a block's tries: test_languages.py, "Tries"


class Node(uniheap.PObject, name="gcm.Node"):
    next = uniheap.ref()
    other = uniheap.ref()
    tag = uniheap.i64()
    rest = uniheap.i64()
    pay = uniheap.bytes_()


class Torn(Exception):
    """A chain that is not whole, or not the one expected."""


def payload_of(tag):
    return bytes((tag % 251 + 37 * j) % 256 for j in range(1 + tag % PAY_MAX))


def check_chain(head, want=None):
    """Raise Torn unless the chain at head is whole (and, when want =
    (base, n) is given, the one it names); FreedObjectError propagates."""
    node, i, base = head, 0, None
    while node is not None:
        tag, rest, nxt, pay = node.tag, node.rest, node.next, node.pay
        if i == 0:
            base = tag
            if want and (base != want[0] or rest != want[1] - 1):
                raise Torn(f"head {head.offset:#x}: tag {tag:#x} rest {rest}, want {want}")
        if tag != base + i or (rest == 0) != (nxt is None) or i > 4:
            raise Torn(f"node {i} of {head.offset:#x}: tag {tag:#x} rest {rest} (base {base:#x})")
        if pay != payload_of(tag):
            raise Torn(f"node {i} of {head.offset:#x}: payload {pay!r}")
        node, i = nxt, i + 1


class Peer:
    def __init__(self, heap, me, nproc, seed):
        self.heap, self.me, self.nproc = heap, me, nproc
        self.rng = random.Random(seed * 1000003 + me)
        self.map = heap.roots["gcm.map"]
        self.own = [None] * NKEYS       # (base, n) of the chain under each key
        self.held = [None] * NHELD      # (proxy of the head, (base, n))
        self.n = dict.fromkeys(("build", "hold", "relink", "remove", "verify",
                                "peek_conflicts", "peek_freed"), 0)

    def key(self, w, k):
        return f"w{w}.k{k}"

    def build(self, step):
        k, n = self.rng.randrange(NKEYS), 1 + self.rng.randrange(4)
        base = self.me << 40 | step << 8

        def fn():
            nxt = None
            for i in reversed(range(n)):
                nxt = Node(self.heap, next=nxt, tag=base + i, rest=n - 1 - i,
                           pay=payload_of(base + i))
            self.map[self.key(self.me, k)] = nxt
        self.heap.atomic(fn)
        self.own[k] = (base, n)
        self.n["build"] += 1

    def hold(self):
        k, i = self.rng.randrange(NKEYS), self.rng.randrange(NHELD)
        if self.own[k] is None:
            return
        self.held[i] = (self.map[self.key(self.me, k)], self.own[k])
        self.n["hold"] += 1

    def unhold(self):
        self.held[self.rng.randrange(NHELD)] = None     # the proxy dies: its pin goes

    def relink(self):
        k, w2, k2 = (self.rng.randrange(NKEYS), self.rng.randrange(self.nproc),
                     self.rng.randrange(NKEYS))
        if self.own[k] is None:
            return

        def fn():
            head = self.map[self.key(self.me, k)]
            target = self.map.get(self.key(w2, k2))
            if target is not None:
                head.other = target
        self.heap.atomic(fn)
        self.n["relink"] += 1

    def remove(self):
        k = self.rng.randrange(NKEYS)
        if self.own[k] is None:
            return
        self.heap.atomic(self.map.__delitem__, self.key(self.me, k))   # conflicts re-run
        self.own[k] = None
        self.n["remove"] += 1

    def peek(self):
        w, k = self.rng.randrange(self.nproc), self.rng.randrange(NKEYS)

        def fn():
            head = self.map.get(self.key(w, k))
            if head is not None:
                check_chain(head)
        try:
            self.heap.atomic(fn)
        except uniheap.Conflict:
            self.n["peek_conflicts"] += 1
        except uniheap.FreedObjectError:
            # The chain was replaced, and collected, after the block read
            # its key: the block could not have committed either. (A chain
            # still under its key is its owner's to find freed.)
            self.n["peek_freed"] += 1

    def verify_live(self, what, head, want):
        try:
            check_chain(head, want)
            if head.other is not None:
                check_chain(head.other)
        except (Torn, uniheap.FreedObjectError) as e:
            print(f"peer python {self.me}: {what} chain {want}: {type(e).__name__}: {e}",
                  file=sys.stderr)
            sys.exit(2)

    def verify(self):
        for h in self.held:
            if h is not None:
                self.verify_live("held", h[0], h[1])
        for k, want in enumerate(self.own):
            if want is not None:
                self.verify_live("own key's", self.map[self.key(self.me, k)], want)
        self.n["verify"] += 1

    def run(self, seconds):
        stop = time.monotonic() + seconds
        step = 0
        while step % 64 or time.monotonic() < stop:
            step += 1
            r = self.rng.randrange(100)
            if r < 40:
                self.build(step)
            elif r < 55:
                self.hold()
            elif r < 62:
                self.unhold()
            elif r < 72:
                self.relink()
            elif r < 80:
                self.remove()
            elif r < 92:
                self.peek()
            else:
                self.verify()
        self.verify()
        return step


def main(argv):
    if len(argv) != 6:
        print("usage: peer.py SOCKET ID NPROC SECONDS SEED", file=sys.stderr)
        return 1
    sock, me, nproc, seconds, seed = argv[1], int(argv[2]), int(argv[3]), float(argv[4]), \
        int(argv[5])
    with uniheap.connect(sock) as heap:
        heap.max_tries = TRIES
        peer = Peer(heap, me, nproc, seed)
        try:
            steps = peer.run(seconds)
        except Torn as e:       # in a peek's block: a chain read whole was not
            print(f"peer python {me}: torn chain read in a block: {e}", file=sys.stderr)
            return 2
        except uniheap.Error as e:
            print(f"peer python {me}: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
        st = heap.stats()
        counts = " ".join(f"{k}={v}" for k, v in peer.n.items())
        print(f"peer python {me}: steps={steps} {counts} gc_cycles={st['gc_cycles']} "
              f"pins={st['pins']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
