"""A heap that grows while processes of every language use it (issue 29's
acceptance test, FORMAT.md 1.1): a 16 MiB heap is filled to $UH_GROW_TARGET
bytes (default 1G, the issue's figure) by four writers, one in
each of C, Python, Java and Node, while one reader in each language,
connected before the heap grew, reads and checks everything they publish.

The protocol is tests/c/prog_grow_fill.c's (the C writer and reader);
peer.py, peer.js and GrowPeer.java speak it too: writer W publishes block
k as a chain of 200 GrowFill records {value, next, a, b, c, d} valued
W * 1e9 + k * 1000 + i (the head holds i = 199) under the root "w<W>.<k>",
one block per transaction, and prints "blocks N", the blocks acknowledged;
a reader (read-only) follows writers 0..3's blocks in order as they
appear, checks each chain whole, and once DIR/done exists makes one more
pass and prints "read N".

test_four_languages_fill_a_growing_heap: no process reports an error,
every reader read every block, the heap grew by itself to the target,
`heapctl check` finds it sound and heapd never restarted (its pid, and
heapd_starts in its status, are the same at the end).

test_heapd_killed_while_the_heap_grows: the same writers (half the
blocks); once the heap has grown by itself to an eighth of the target (64
MiB at least), `heapctl grow` doubles it and heapd is SIGKILLed as soon as
the file is longer than the size it has published (FORMAT.md 1.1: a growth
under way), while the writers keep leasing; heapd is restarted on the
same heap, which opens no smaller than before that growth. The writers'
and readers' sessions attach anew on their own (uniheap.h: a block open
when heapd ended is rolled back as a conflict and run again); every block
each writer acknowledged is there, the readers that ran through the
restart and readers started afterwards read them all, and the heap checks
sound.

The writers share the blocks out so that the C writer, the fastest, makes
most of the bytes (~70%), Java 16% and Python and Node 7% each; a block is
12,800 bytes of records. On two otherwise idle cores both tests take 80 s
(the first: 75,000 blocks written in 16 s, the readers' checks 46 s; 15
million objects reachable at the end); UH_GROW_TARGET=256M, a quarter of
that.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))
from processes import end_process, jdk25_java, uniheap_jar, wait_accepting  # noqa: E402

HERE = Path(__file__).resolve().parent
MIB = 1 << 20
BLOCK_BYTES = 200 * 64
LANGS = ("c", "python", "java", "node")     # writer ids 0..3
SHARE = {"c": 0.70, "python": 0.07, "java": 0.16, "node": 0.07}
WAIT = 1800                                 # s: a bound, not a speed


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper())
    if not m:
        raise ValueError(f"UH_GROW_TARGET: not a size: {text!r}")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


TARGET = parse_size(os.environ.get("UH_GROW_TARGET", "1G"))
# A bit more than TARGET: the arenas' overhead. (Much more costs room for
# session logs in the 16 MiB pool: with 3000 of prog_grow_fill's blocks
# written, a 16M heap that may grow to 512M took 17 more writers, to 1G 4,
# to 2G 1; then "Attach: heap full: cannot allocate a 256 KiB session log".)
MAX_SIZE = TARGET + TARGET // 4
KILL_PART = 0.5             # the second test writes half as much


def build_dir():
    return Path(os.environ.get("UNIHEAP_BUILD") or REPO / "build").resolve()


def blocks_of(lang, part=1.0):
    """Blocks writer lang publishes: its share of 90% of part of TARGET
    bytes (with the arenas' overhead, about TARGET bytes in arenas)."""
    return int(TARGET * part * 0.9 * SHARE[lang] / BLOCK_BYTES) + 1


@pytest.fixture(scope="module")
def workdir():
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    d = Path(tempfile.mkdtemp(prefix="uniheap-grow-", dir=base))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def java_classes(workdir):
    """GrowPeer compiled with the binding's annotation processor; None
    without a JDK 25 or the jar."""
    java, jar = jdk25_java(), uniheap_jar(REPO)
    if not java or not jar:
        return None
    out = workdir / "java"
    r = subprocess.run([str(java.parent / "javac"), "-proc:full", "-cp", str(jar), "-d",
                        str(out), str(HERE / "GrowPeer.java")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"javac GrowPeer.java:\n{r.stdout}{r.stderr}"
    return out


def peer_argv(lang, java_classes, sock, *args):
    """The command line of lang's peer, or None if it is not built."""
    args = [sock, *map(str, args)]
    if lang == "c":
        prog = build_dir() / "tests" / "c" / "prog_grow_fill"
        return [str(prog), *args] if prog.exists() else None
    if lang == "python":
        return [sys.executable, "-X", "faulthandler", str(HERE / "peer.py"), *args]
    if lang == "node":
        node = shutil.which("node")
        return [node, str(HERE / "peer.js"), *args] if node else None
    if java_classes is None:
        return None
    cp = os.pathsep.join([str(uniheap_jar(REPO)), str(java_classes)])
    return [str(jdk25_java()), "--enable-native-access=ALL-UNNAMED", "-cp", cp, "GrowPeer",
            *args]


def peer_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO / "bindings-python")] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


class Heapd:
    """heapd on DIR/heap.uh (created on the first start: 16 MiB, growing to
    MAX_SIZE); every start a new process, stopped by its pid."""

    def __init__(self, d):
        self.dir, self.sock, self.proc = d, str(d / "heapd.sock"), None
        self.log = open(d / "heapd.log", "ab")

    def start(self):
        argv = [str(build_dir() / "heapd"), "--heap", str(self.dir / "heap.uh"),
                "--socket", self.sock]
        if not (self.dir / "heap.uh").exists():
            argv += ["--create", "--size", "16M", "--max-size", str(MAX_SIZE),
                     "--log-size", "256K", "--durability", "memory"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        why = wait_accepting(self.proc, self.sock, 60.0)
        assert why is None, why

    def stop(self, sig=signal.SIGTERM):
        if self.proc is not None:
            end_process(self.proc, sig=sig)

    def ctl(self, *args, timeout=600):
        return subprocess.run([str(build_dir() / "heapctl"), "--socket", self.sock, *args],
                              capture_output=True, text=True, timeout=timeout)

    def status(self):
        r = self.ctl("--json", "status", timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        return json.loads(r.stdout)


@pytest.fixture
def heapd(workdir):
    d = Path(tempfile.mkdtemp(prefix="heap-", dir=workdir))
    h = Heapd(d)
    try:
        h.start()
        yield h
    finally:
        h.stop()
        h.log.close()
        shutil.rmtree(d, ignore_errors=True)


class Peer:
    """One peer process, its output in a file (no pipe to fill)."""

    def __init__(self, name, argv, d):
        self.name, self.out = name, d / f"{name}.out"
        with open(self.out, "wb") as f:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=f,
                                         stderr=subprocess.STDOUT, env=peer_env(), cwd=REPO)

    def text(self):
        return self.out.read_text(errors="replace")

    def wait(self, timeout=WAIT):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        return self.proc.returncode

    def count(self, word):
        m = re.search(rf"^{word} (\d+)$", self.text(), re.M)
        return int(m.group(1)) if m else None

    def report(self):
        return f"--- {self.name} (exit {self.proc.returncode}):\n{self.text()[-2000:]}"


def argvs_or_fail(java_classes, sock, mode, *args):
    argv = {lang: peer_argv(lang, java_classes, sock, mode, *args) for lang in LANGS}
    missing = [lang for lang, a in argv.items() if a is None]
    if missing:
        pytest.fail(f"peers not built: {', '.join(missing)} (run make)")
    return argv


def start_readers(heapd, java_classes):
    """One reader per language, each connected (C: its session counted in
    heapd's status; the others print "ready") before this returns."""
    d = heapd.dir
    argv = argvs_or_fail(java_classes, heapd.sock, "read", len(LANGS), d)
    before = heapd.status()["sessions"]
    readers = [Peer("reader-c", argv["c"], d)]
    deadline = time.monotonic() + 120
    while heapd.status()["sessions"] <= before and time.monotonic() < deadline:
        assert readers[0].proc.poll() is None, readers[0].report()
        time.sleep(0.05)
    readers += [Peer(f"reader-{lang}", argv[lang], d) for lang in LANGS[1:]]
    for r in readers[1:]:
        while "ready" not in r.text() and time.monotonic() < deadline:
            assert r.proc.poll() is None, r.report()
            time.sleep(0.05)
        assert "ready" in r.text(), r.report()
    return readers


def start_writers(heapd, java_classes, part=1.0):
    """The writers, all attached before any writes: the Python, Java and
    Node ones print "ready" and wait for DIR/go; the C one, which starts
    at once, comes last. Their sessions' logs are in the pool (FORMAT.md
    1.1), and a growing heap leaves less room in it for a late writer's
    log (see MAX_SIZE)."""
    go = heapd.dir / "go"
    go.unlink(missing_ok=True)
    os.environ["UH_GROW_GO"] = str(go)
    try:
        writers = [Peer(f"writer-{lang}", peer_argv(lang, java_classes, heapd.sock, "write", w,
                                                    blocks_of(lang, part)), heapd.dir)
                   for w, lang in enumerate(LANGS) if lang != "c"]
    finally:
        del os.environ["UH_GROW_GO"]
    deadline = time.monotonic() + 120
    for w in writers:
        while "ready" not in w.text() and time.monotonic() < deadline:
            assert w.proc.poll() is None, w.report()
            time.sleep(0.05)
        assert "ready" in w.text(), w.report()
    go.touch()
    c = Peer("writer-c", peer_argv("c", java_classes, heapd.sock, "write", 0,
                                   blocks_of("c", part)), heapd.dir)
    return [c] + writers


def finish(peers):
    """Wait for every peer; a report of all of them."""
    for p in peers:
        p.wait()
    return "\n".join(p.report() for p in peers)


def stop_all(peers):
    for p in peers:
        end_process(p.proc)


def check_sound(heapd):
    r = heapd.ctl("check")
    assert r.returncode == 0 and r.stdout.startswith("ok:"), r.stdout + r.stderr
    return r.stdout.strip()


def read_all(heapd, readers, acked):
    """Let the readers make their last pass; each read every block."""
    (heapd.dir / "done").touch()
    report = finish(readers)
    total = sum(acked.values())
    for r in readers:
        assert r.proc.returncode == 0, report
        assert r.count("read") == total, f"{r.name} read {r.count('read')} of {total}\n{report}"


def test_four_languages_fill_a_growing_heap(heapd, java_classes):
    t0 = time.monotonic()
    st = heapd.status()
    assert int(st["heap_size"]) == 16 * MIB and int(st["max_size"]) == MAX_SIZE
    pid = heapd.proc.pid
    readers = start_readers(heapd, java_classes)
    assert int(heapd.status()["heap_size"]) == 16 * MIB     # readers came before growth
    writers = start_writers(heapd, java_classes)
    try:
        report = finish(writers)
        acked = {}
        for w, lang in zip(writers, LANGS):
            assert w.proc.returncode == 0, report
            acked[lang] = w.count("blocks")
            assert acked[lang] == blocks_of(lang), report
        t_write = time.monotonic() - t0
        read_all(heapd, readers, acked)
    finally:
        stop_all(writers + readers)
    st = heapd.status()
    checked = check_sound(heapd)
    assert heapd.proc.poll() is None and heapd.proc.pid == pid
    assert int(st["heapd_starts"]) == 1
    assert int(st["heap_size"]) >= TARGET, st
    assert int(st["arena_bytes"]) >= TARGET * 0.9, st
    print(f"{sum(acked.values())} blocks ({acked}) in {t_write:.1f} s, all read in "
          f"{time.monotonic() - t0:.1f} s; heap {int(st['heap_size']) >> 20} MiB, "
          f"{int(st['arena_bytes']) >> 20} MiB in arenas; {checked}")


def test_heapd_killed_while_the_heap_grows(heapd, java_classes):
    kill_at = max(64 * MIB, TARGET // 8)
    readers = start_readers(heapd, java_classes)
    writers = start_writers(heapd, java_classes, KILL_PART)
    later = []
    try:
        # Once the heap has grown to kill_at by itself, heapctl grow doubles
        # it and heapd is SIGKILLed GROW_KILL_DELAY s into that growth
        # (a step of 64 MiB or more takes longer than that on tmpfs), while
        # the writers go on leasing.
        deadline = time.monotonic() + WAIT
        while int(heapd.status()["heap_size"]) < kill_at:
            assert time.monotonic() < deadline and all(
                w.proc.poll() is None for w in writers), finish(writers)
            time.sleep(0.005)
        before = int(heapd.status()["heap_size"])
        grow = subprocess.Popen([str(build_dir() / "heapctl"), "--socket", heapd.sock, "grow",
                                 str(min(2 * before, MAX_SIZE))], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # Step 1 of a growth makes the file longer, the last one publishes
        # the size (FORMAT.md 1.1): kill as soon as the file is longer than
        # the published size, or when heapctl grow is done (too late).
        heap_file = heapd.dir / "heap.uh"
        stop = time.monotonic() + 60
        while (grow.poll() is None and heap_file.stat().st_size <= before
               and time.monotonic() < stop):
            time.sleep(0.0002)
        file_size = heap_file.stat().st_size
        heapd.stop(signal.SIGKILL)
        grow_out = grow.communicate(timeout=120)[0]
        heapd.start()
        st = heapd.status()
        size_killed = int(st["heap_size"])
        assert size_killed >= before, st
        assert int(st["heapd_starts"]) == 2, st
        report = finish(writers)
        acked = {}
        for w, lang in zip(writers, LANGS):
            assert w.proc.returncode == 0, report
            acked[lang] = w.count("blocks")
            assert acked[lang] == blocks_of(lang, KILL_PART), report
        # The readers that ran through the restart, and new ones.
        read_all(heapd, readers, acked)
        (heapd.dir / "done").unlink()
        later = start_readers(heapd, java_classes)
        read_all(heapd, later, acked)
    finally:
        stop_all(writers + readers + later)
    checked = check_sound(heapd)
    st = heapd.status()
    print(f"heapd killed at {before >> 20} MiB growing to {min(2 * before, MAX_SIZE) >> 20} "
          f"MiB, its file {file_size >> 20} MiB (heapctl grow: exit {grow.returncode}, "
          f"{grow_out.strip()[:60]!r}), reopened at {size_killed >> 20} MiB; "
          f"{sum(acked.values())} blocks acknowledged and read; heap "
          f"{int(st['heap_size']) >> 20} MiB; {checked}")
