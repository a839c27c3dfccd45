"""`make demo` (scripts/demo.sh) on a fresh heap in a temporary folder:
it exits 0, and every language whose binding is in the tree has its
process open the shared root, see the others' updates and add its own,
which the C process watching the counter sees."""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AMOUNTS = {"python": 100, "java": 1000, "node": 10000}


def languages_in_tree():
    langs = ["python", "node"]
    if (REPO / "bindings-java" / "pom.xml").exists():
        langs.insert(1, "java")
    return langs


def run_demo(var):
    build = os.environ.get("UNIHEAP_BUILD") or str(REPO / "build")
    return subprocess.run(["scripts/demo.sh"], cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, DEMO_VAR=str(var), BUILD=build), timeout=120)


def test_every_language_updates_the_shared_board():
    base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    var = Path(tempfile.mkdtemp(prefix="uniheap-demo-", dir=base))
    try:
        r = run_demo(var)
        out = r.stdout
        assert r.returncode == 0, out + r.stderr
        for lang in languages_in_tree():
            assert f"demo: {lang} left out" not in out, out
        assert "process 1: incremented the counter to 1 " in out, out
        assert "process 2: added 10 in one atomic block: counter = 11" in out, out
        total = 11
        for lang in languages_in_tree():
            # each one finds the updates of every process before it
            found = re.search(rf"^{lang} \(pid \d+\): found .*: counter = (\d+), "
                              r"last written by pid \d+$", out, re.M)
            assert found and int(found.group(1)) == total, (lang, out)
            total += AMOUNTS[lang]
            assert re.search(rf"^{lang} \(pid \d+\): added {AMOUNTS[lang]} in one atomic "
                             rf"block: counter = {total}$", out, re.M), (lang, out)
        assert f"process 1: woken by the update, read in its own mapping: counter = {total}," in out, out
        # a second run finds the board and goes on counting
        again = run_demo(var)
        assert again.returncode == 0, again.stdout + again.stderr
        assert f"process 1: incremented the counter to {total + 1} " in again.stdout
    finally:
        shutil.rmtree(var, ignore_errors=True)
