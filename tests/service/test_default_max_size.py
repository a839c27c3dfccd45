"""A heap created without --max-size may grow (FORMAT.md 1.1, "Sizes"):
its maximum is --size plus the free space of its file system, at most
15 GiB, and it grows while a client stays connected; --max-size equal to
--size makes a heap that never grows, and HeapFull names that limit."""

import json
import os

from conftest import Daemon, built, clean_env, run

GROW_FILE_MAX = 15 << 30
SIZE = 16 << 20


def start(tmp_dir, daemons, *extra):
    sock = tmp_dir / "heapd.sock"
    d = Daemon([built("heapd"), "--heap", tmp_dir / "heap", "--create", "--size", "16M",
                "--durability", "memory", "--socket", sock, *extra],
               sock, tmp_dir / "heapd.log", env=clean_env())
    daemons.append(d.start())
    return sock


def heapctl(sock, *args):
    return run([built("heapctl"), "--socket", sock, *args])


def status(sock):
    r = heapctl(sock, "--json", "status")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def sizes(st):
    """(size now, maximum size) from heapctl status --json."""
    return int(st["heap_size"]), int(st["max_size"])


def test_default_max_is_the_file_systems_room(tmp_dir, daemons):
    fs = os.statvfs(tmp_dir)
    sock = start(tmp_dir, daemons)
    cur, mx = sizes(status(sock))
    assert cur == SIZE
    # Free space moves a little between heapd's statvfs and ours (the heap
    # file itself was allocated in between): compare within 64 MiB.
    want = min(GROW_FILE_MAX, SIZE + fs.f_bavail * fs.f_frsize) // (2 << 20) * (2 << 20)
    assert mx <= GROW_FILE_MAX
    assert abs(mx - want) <= 64 << 20, (mx, want)
    r = heapctl(sock, "grow", "40M")
    assert r.returncode == 0, r.stderr
    cur, _ = sizes(status(sock))
    assert cur >= 40 << 20
    assert os.stat(tmp_dir / "heap").st_size == cur


def test_max_size_equal_to_size_never_grows(tmp_dir, daemons):
    sock = start(tmp_dir, daemons, "--max-size", "16M")
    cur, mx = sizes(status(sock))
    assert (cur, mx) == (SIZE, SIZE)
    r = heapctl(sock, "grow", "40M")
    assert r.returncode != 0
    assert "maximum size is 16 MiB (--max-size)" in r.stderr, r.stderr
    assert sizes(status(sock)) == (SIZE, SIZE)
