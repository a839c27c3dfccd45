"""Shared paths of the Python port's tests (bench/ycsb/python/tests).

The tests import the port (bench/ycsb/python) and the runner's service
helpers (bench/ycsb/ycsbrun: heapd and friends, started and stopped by
pid); the uniheap package comes from $PYTHONPATH or bindings-python.
"""
import importlib.util
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
PORT = TESTS.parent
YCSB = PORT.parent
REPO = YCSB.parent.parent
WORKLOADS = YCSB / "workloads"

for p in (PORT, YCSB):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
if importlib.util.find_spec("uniheap") is None:
    sys.path.append(str(REPO / "bindings-python"))
