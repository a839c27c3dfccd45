"""String and bytes values in one hash map across Python, Java and Node.

Each language has a peer taking ``SOCKET ROOT ME EARLIER`` (peer.py,
MapPeer.java, peer.js): it checks every value the earlier writers (a
comma list) left in the hash map under ROOT, keys "<lang>-<i>" with lang's
values and keys "shared-<i>" with the last writer's, and the map's size;
then it puts its own 120 keys and overwrites the 120 shared ones. Values
are str / String / string for even i and bytes / byte[] / Buffer for odd,
of (i * 37) % 200 bytes: kept inline in the entry up to 128 bytes
(FORMAT.md 11.3), as objects beyond, so every language reads both kinds
as every other wrote them, and replaces one kind by the other. The peers
run in turn, python, java, node, python, java, node: each reads what
each of the others wrote. Then heapctl check must find the heap sound.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO / "tests"))
from processes import heapd_serving, jdk25_java, uniheap_jar  # noqa: E402

ROOT = "xl.inline"
ORDER = ("python", "java", "node", "python", "java", "node")


def build_dir():
    return Path(os.environ.get("UNIHEAP_BUILD") or REPO / "build").resolve()


def peer_argv(lang, sock, earlier):
    """lang's peer command line, or None when it is not built."""
    args = [sock, ROOT, lang, ",".join(earlier)]
    if lang == "python":
        return [sys.executable, str(HERE / "peer.py")] + args
    if lang == "node":
        node = shutil.which("node")
        return [node, str(HERE / "peer.js")] + args if node else None
    java, jar = jdk25_java(), uniheap_jar(REPO)
    if not java or not jar:
        return None
    return [str(java), "--enable-native-access=ALL-UNNAMED", "-cp", str(jar),
            str(HERE / "MapPeer.java")] + args


@pytest.fixture
def heapd():
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    d = Path(tempfile.mkdtemp(prefix="uniheap-xlmaps-", dir=base))
    try:
        with heapd_serving(build_dir() / "heapd", d, "--size", "64M",
                           "--durability", "memory") as sock:
            yield sock
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_languages_read_each_others_values(heapd):
    for lang in set(ORDER):
        if peer_argv(lang, heapd, []) is None:
            pytest.fail(f"the {lang} peer is not built: run make")
    env = dict(os.environ, UNIHEAP_BUILD=str(build_dir()))
    for n, lang in enumerate(ORDER):
        earlier = ORDER[:n]
        r = subprocess.run(peer_argv(lang, heapd, earlier), capture_output=True, text=True,
                           env=env, timeout=120)
        assert r.returncode == 0, f"{lang} after {earlier}: {r.stdout}{r.stderr}"
        want = 120 * (len(set(earlier)) + 1) if earlier else 0
        assert f"peer {lang}: checked {want} values, wrote 240" in r.stdout, r.stdout
    check = subprocess.run([str(build_dir() / "heapctl"), "--socket", heapd, "check"],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
