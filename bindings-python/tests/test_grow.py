"""A heap that grows while this process is connected (FORMAT.md 1.1): the
objects another process made in the part the heap grew into after this
process connected are readable and writable through proxies here, and
info() reports the heap's size now, the most it may grow to and the bytes
its arenas hold, as heapctl status does.

The other process is tests/c/prog_grow_fill (its blocks: chains of 200
GrowFill records valued id * 1e9 + k * 1000 + i, under the roots
"w<id>.<k>")."""
import shutil

import pytest

import uniheap
from conftest import HeapD, binary, make_temp_dir, run_prog

MIB = 1 << 20
OFFSET = (1 << 48) - 1  # a reference's offset bits (its generation above)
REC = 200
BLOCKS = 1500       # 1500 x 200 x 64 bytes ~ 18 MiB: past the 16 MiB pool


class GrowFill(uniheap.PObject, name="GrowFill"):
    value = uniheap.i64()
    next = uniheap.ref()
    a = uniheap.i64()
    b = uniheap.i64()
    c = uniheap.i64()
    d = uniheap.i64()


@pytest.fixture
def growing():
    """heapd on a 16 MiB heap that may grow to 256 MiB; stopped after."""
    d = make_temp_dir()
    server = HeapD(d, size="16M", create_args=["--max-size", "256M", "--log-size", "256K"])
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(d, ignore_errors=True)


def test_objects_in_the_grown_part_read_and_write(growing):
    binary("prog_grow_fill")
    with uniheap.connect(growing.sock) as heap:
        i = heap.info()
        assert i["heap_size"] == i["cur_size"] == 16 * MIB
        assert i["max_size"] == 256 * MIB
        assert 0 < i["used_size"] <= i["cur_size"]

        r = run_prog("prog_grow_fill", growing.sock, "write", "0", str(BLOCKS), timeout=300)
        assert r.returncode == 0 and f"blocks {BLOCKS}" in r.stdout, r.stdout + r.stderr

        beyond = []
        for k in range(BLOCKS):
            o, n = heap.roots[f"w0.{k}"], 0
            while o is not None:
                assert o.value == k * 1000 + REC - 1 - n
                if o.offset & OFFSET >= 16 * MIB:
                    beyond.append(o)
                o, n = o.next, n + 1
            assert n == REC
        assert beyond, "no record in the part the heap grew into"

        # Writes there, through the proxies, seen by another process too.
        rec = beyond[-1]

        def bump():
            rec.a = rec.value + 1
        heap.atomic(bump)
        assert rec.a == rec.value + 1

        i = heap.info()
        assert i["cur_size"] > 16 * MIB and i["max_size"] == 256 * MIB
        assert rec.offset & OFFSET < i["heap_size"] <= i["cur_size"]
        assert i["used_size"] > 16 * MIB
        st = growing.heapctl("status")
        assert st.returncode == 0
        assert "grows to at most 256" in st.stdout, st.stdout
    (growing.dir / "done").touch()     # the reader's one pass, then exit
    r = run_prog("prog_grow_fill", growing.sock, "read", "1", str(growing.dir))
    assert r.returncode == 0 and f"read {BLOCKS}" in r.stdout, r.stdout + r.stderr
