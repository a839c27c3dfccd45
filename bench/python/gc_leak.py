"""The online GC's leak loop, issue 28's Python example, with the heap's
use sampled while it runs: each step is a block that makes a new Node the
one a root holds, so every step leaves the previous Node unreachable.

    python3 bench/python/gc_leak.py [--steps 3000000] [--heap 64M]
                                    [--gc-fill PCT] [--gc-every SIZE]

A private heapd on a fresh heap in /dev/shm (tmpfs), durability memory;
its automatic triggers are heapd's defaults unless --gc-fill/--gc-every
say otherwise (by default a cycle runs once the slots in use fill 75 % of
the heap, and when a lease finds no room).
Every --every seconds a thread reads `heapctl --json status`: the arenas
and the bytes they hold, the cycles run so far and the last one's figures
(objects marked: the live set; objects and bytes freed). At the end: the
steady state (the samples of the second half of the run) against the
live set. A benchmark, never a test: it fails only if the loop fails.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bindings-python"))

import uniheap  # noqa: E402
from heapd_proc import start_heapd  # noqa: E402


class Node(uniheap.PObject, name="bench.gcleak.Node"):
    v = uniheap.i64()


class Head(uniheap.PObject, name="bench.gcleak.Head"):
    cur = uniheap.ref()


def status(build, sock):
    r = subprocess.run([str(build / "heapctl"), "--socket", sock, "--json", "status"],
                       capture_output=True, text=True, timeout=60)
    return json.loads(r.stdout) if r.returncode == 0 else None


class Sampler:
    """Samples heapctl status every `every` seconds until stopped."""

    def __init__(self, build, sock, every, progress):
        self.build, self.sock, self.every, self.progress = build, sock, every, progress
        self.rows = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.main, daemon=True)

    def main(self):
        t0 = time.monotonic()
        while not self.stop.wait(self.every):    # until stopped
            s = status(self.build, self.sock)
            if s is None:
                continue
            cycles = s.get("gc_cycles") or []
            last = cycles[0] if cycles else {}
            self.rows.append({
                "t": time.monotonic() - t0, "steps": self.progress[0],
                "arenas": int(s.get("arenas", 0)), "arena_bytes": int(s.get("arena_bytes", 0)),
                "cycles": int(last.get("cycle", 0)), "marked": int(last.get("marked", 0)),
                "freed": int(last.get("freed", 0)),
                "bytes_freed": int(last.get("bytes_freed", 0)),
                "trigger": last.get("trigger", ""), "outcome": last.get("outcome", "")})


def mib(n):
    return n / 1048576


def report(rows, steps, secs, heap):
    print(f"{'t s':>6} {'steps':>10} {'arenas':>7} {'arena MiB':>10} {'cycles':>7} "
          f"{'marked':>7} {'freed':>9} {'MiB freed':>10}  last cycle")
    stride = max(1, len(rows) // 20)
    for r in rows[::stride]:
        print(f"{r['t']:6.1f} {r['steps']:10,} {r['arenas']:7} {mib(r['arena_bytes']):10.1f} "
              f"{r['cycles']:7} {r['marked']:7} {r['freed']:9,} {mib(r['bytes_freed']):10.1f}  "
              f"{r['trigger']}: {r['outcome']}")
    late = rows[len(rows) // 2:]
    if not late:
        return
    marked = [r["marked"] for r in late if r["cycles"]]
    cycles = rows[-1]["cycles"]
    print(f"\n{steps:,} steps in {secs:.1f} s ({steps / secs:,.0f} steps/s), heap {heap}, "
          f"{cycles} cycles")
    print(f"steady state (second half of the samples): arenas {min(r['arenas'] for r in late)}"
          f"-{max(r['arenas'] for r in late)}, holding "
          f"{mib(min(r['arena_bytes'] for r in late)):.1f}-"
          f"{mib(max(r['arena_bytes'] for r in late)):.1f} MiB; live set (objects the last "
          f"cycles marked) {min(marked) if marked else 0}-{max(marked) if marked else 0}; "
          f"each cycle freed {sum(r['freed'] for r in late) // max(1, len(late)):,} objects "
          f"on average")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3000000)
    ap.add_argument("--heap", default="64M")
    ap.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    ap.add_argument("--gc-fill", help="heapd --gc-fill (default: heapd's, 75)")
    ap.add_argument("--gc-every", help="heapd --gc-every (default: heapd's, off)")
    args = ap.parse_args()
    build = Path(os.environ.get("UNIHEAP_BUILD") or REPO / "build").resolve()
    extra = []
    if args.gc_fill:
        extra += ["--gc-fill", args.gc_fill]
    if args.gc_every:
        extra += ["--gc-every", args.gc_every]
    tmp = tempfile.mkdtemp(prefix="gcleak-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK)
                           else None)
    proc = None
    try:
        proc, sock = start_heapd(build, tmp, ["--size", args.heap, "--max-size", args.heap,
                                            "--durability", "memory"] + extra)
        print(f"heapd {' '.join(['--size', args.heap, '--max-size', args.heap] + extra)}, "
              f"durability memory, tmpfs; "
              f"{args.steps:,} steps")
        progress = [0]
        with uniheap.connect(sock) as h:
            head = Head(h)
            h.roots["head"] = head
            sampler = Sampler(build, sock, args.every, progress)
            sampler.thread.start()
            t0 = time.monotonic()
            for n in range(args.steps):
                with h.atomic():
                    head.cur = Node(h, v=n)
                if n % 1000 == 0:
                    progress[0] = n
            secs = time.monotonic() - t0
            progress[0] = args.steps
            sampler.stop.set()
            sampler.thread.join()
            assert head.cur.v == args.steps - 1
        report(sampler.rows, args.steps, secs, args.heap)
    finally:
        if proc is not None:
            proc.terminate()        # ours, by its own handle
            proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
