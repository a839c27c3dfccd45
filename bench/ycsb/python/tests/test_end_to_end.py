"""A tiny end-to-end run on a real heapd: a load and runs of the YCSB
clients on one uniheap table, data integrity on, every operation OK, and
heapctl check passing afterwards with the exact record count."""
import os
import subprocess

import pytest

from conftest import REPO
from ycsbrun import clients, report
from ycsbrun.services import Heapd, build_dir, temp_dir

RECORDS = 1000
OPS = 1000


@pytest.fixture
def heapd():
    folder = temp_dir("ycsb-e2e-")
    d = Heapd(build_dir(REPO), folder, durability="memory", size="256M")
    yield d
    d.stop()
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def run_client(heapd, lang, phase, workload, threads=1, **extra):
    props = {"recordcount": RECORDS, "operationcount": OPS, "dataintegrity": "true",
             "seed": 1, **extra}
    if lang == "java":
        props.pop("seed")
    argv, env = clients.command(lang, phase, "uniheap", workload, props, threads,
                                build=build_dir(REPO))
    r = subprocess.run(argv, env={**heapd.env(), **env}, capture_output=True, text=True,
                       timeout=300)
    parsed = report.parse(r.stdout)
    expected = RECORDS if phase == "load" else OPS
    assert report.problems(parsed, expected, r.returncode) == [], r.stdout + r.stderr
    return parsed


def record_count(heapd):
    code = ("import uniheap; h = uniheap.connect(); "
            "print(len(h.roots['ycsb.usertable'])); h.close()")
    argv, env = clients.command("python", "run", "uniheap", "a", {})
    r = subprocess.run([argv[0], "-c", code], env={**heapd.env(), **env}, capture_output=True,
                       text=True, timeout=60, check=True)
    return int(r.stdout)


def languages_with_uniheap():
    return [lang for lang in clients.LANGUAGES
            if clients.available(lang) is None and clients.has_db(lang, "uniheap")]


def test_load_then_run_a_and_e_with_integrity(heapd):
    """The table is loaded by one language and run by every language that
    has a uniheap binding in the tree; every read verified."""
    langs = languages_with_uniheap()
    assert "python" in langs and "node" in langs, langs
    loader = "java" if "java" in langs else "python"
    run_client(heapd, loader, "load", "a")
    for lang in langs:
        if lang == loader:
            continue
        a = run_client(heapd, lang, "run", "a", threads=2)
        assert a["VERIFY"]["Return=OK"] == a["READ"]["Operations"] > 0, lang
        ok, out = heapd.check()
        assert ok, out
        assert record_count(heapd) == RECORDS
    e = run_client(heapd, loader, "run", "e")
    assert e["SCAN"]["Return=OK"] > 0
    inserted = e.get("INSERT", {}).get("Return=OK", 0)
    ok, out = heapd.check()
    assert ok, out
    assert record_count(heapd) == RECORDS + inserted


def test_memory_client_runs_d_with_two_threads(tmp_path):
    """Each thread of the in-process map keeps a private table, so it draws
    its insert keys from private counters too: reads never miss."""
    argv, env = clients.command("python", "run", "memory", "d",
                                {"recordcount": 500, "operationcount": 2000,
                                 "dataintegrity": "true", "seed": 1}, threads=2)
    r = subprocess.run(argv, env={**os.environ, **env}, capture_output=True,
                       text=True, timeout=120)
    parsed = report.parse(r.stdout)
    assert report.problems(parsed, 2000, r.returncode) == [], r.stdout + r.stderr
    assert parsed["VERIFY"]["Return=OK"] == parsed["READ"]["Operations"]


def test_python_record_operations(heapd):
    """The Python backend's one-call operations on ycsb.Record (get_fields,
    set_field, scan_fields, put_record): each gives what YCSB asks, a
    replaced record is freed, and a missing key is NOT_FOUND."""
    import uniheap
    from ycsb.backends.uniheap_db import UniheapDB
    from ycsb.db import NOT_FOUND, OK

    db = UniheapDB({"uniheap.socket": str(heapd.socket)})
    db.init()
    try:
        old = {f"field{i}": b"o" * 10 for i in range(10)}
        new = {f"field{i}": b"n" * 10 for i in range(10)}
        assert db.insert("usertable", "user1", old) == OK
        assert db.read("usertable", "user1", None) == (OK, old)
        assert db.read("usertable", "nobody", None) == (NOT_FOUND, None)
        first = db.table("usertable")["user1"]
        assert db.insert("usertable", "user1", new) == OK          # replaces and frees
        with pytest.raises(uniheap.FreedObjectError):
            first.field0
        assert db.read("usertable", "user1", ["field3"]) == (OK, {"field3": b"n" * 10})
        assert db.update("usertable", "user1", {"field2": b"u"}) == OK
        assert db.update("usertable", "user1", {"field4": b"v", "field5": b"w"}) == OK
        assert db.update("usertable", "nobody", {"field2": b"u"}) == NOT_FOUND
        want = dict(new, field2=b"u", field4=b"v", field5=b"w")
        assert db.read("usertable", "user1", None) == (OK, want)
        assert db.insert("usertable", "user2", old) == OK
        assert db.scan("usertable", "user", 5, None) == (OK, [want, old])
        assert db.scan("usertable", "user2", 5, ["field1"]) == (OK, [{"field1": b"o" * 10}])
        assert db.delete("usertable", "user1") == OK
        assert db.delete("usertable", "user1") == NOT_FOUND
        assert db.scan("usertable", "", 5, None) == (OK, [old])
    finally:
        db.cleanup()
