"""What a store's data takes (bench/ycsb/ycsbrun: Store.footprint, the
summary's bytes-per-record table): measured on a real heapd and a real
LMDB environment, before and after a load of the Python client."""
import subprocess

import pytest

from conftest import REPO
from ycsbrun import clients, report, summary
from ycsbrun.execute import Run
from ycsbrun.services import build_dir
from ycsbrun.stores import lmdb_bytes, open_store

RECORDS = 20000


def load(store, backend):
    props = {"recordcount": RECORDS, "operationcount": 0, "seed": 1, **store.props}
    argv, env = clients.command("python", "load", backend, "a", props, 1,
                                build=build_dir(REPO))
    r = subprocess.run(argv, env={**store.env(), **env}, capture_output=True, text=True,
                       timeout=300)
    assert report.problems(report.parse(r.stdout), RECORDS, r.returncode) == [], \
        r.stdout + r.stderr


@pytest.mark.parametrize("backend", ["uniheap", "lmdb"])
def test_a_load_grows_the_footprint_by_at_least_its_payload(backend, tmp_path):
    if clients.available("python") is not None:
        pytest.fail(f"the Python client cannot run: {clients.available('python')}")
    with open_store(backend, "memory", build_dir(REPO), tmp_path, RECORDS) as store:
        before = store.footprint()
        assert before is not None and before >= 0
        load(store, backend)
        grown = store.footprint() - before
    # 10 fields of 100 bytes per record, and at most a few times that
    # (uniheap leases arenas a MiB at a time: enough records to amortize).
    assert RECORDS * 1000 <= grown <= RECORDS * 4000, grown


def test_an_environment_not_made_yet_takes_nothing(tmp_path):
    assert lmdb_bytes(tmp_path) == 0


def test_a_file_py_lmdb_does_not_read_counts_its_allocated_bytes(tmp_path):
    # lmdb-js writes LMDB's unreleased data format v2, which py-lmdb
    # refuses: the run measures the file's allocated bytes instead.
    data = tmp_path / "data.mdb"
    data.write_bytes(b"\0" * 8192)
    assert lmdb_bytes(tmp_path) == data.stat().st_blocks * 512 >= 8192


def _load_run(backend, lang, store_bytes):
    return Run("matrix", "memory", lang, backend, "load", "load", 1, 1000, 1000,
               report={"OVERALL": {"Throughput(ops/sec)": 100.0}}, store_bytes=store_bytes)


def test_the_summary_divides_by_the_records_and_compares_with_lmdb():
    runs = [_load_run("uniheap", "python", 1_200_000), _load_run("lmdb", "python", 1_500_000),
            _load_run("uniheap", "node", 1_300_000), _load_run("memory", "node", None)]
    table = summary.bytes_table(runs)
    assert "| memory | python | 1,200 | 1,500 | 0.80× |" in table
    assert "| memory | node | 1,300 | — | — |" in table
    assert summary.bytes_table([_load_run("lmdb", "java", 1_000_000)]) == ""
