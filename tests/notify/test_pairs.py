"""Change notifications across languages: a writer in each language wakes a
waiter in each other language (12 ordered pairs of C, Python, Java, Node).

Each language has one peer program taking ``SOCKET ROOT ROLE ROUNDS``
(ROLE: writer | waiter), on a NotifyCell { ping, pong, ts: i64 } this test
creates under ROOT. For i in 1..ROUNDS the writer sets ts (CLOCK_MONOTONIC,
ns) and ping = i in one block, then waits (its language's wait) for
pong == i; the waiter waits for ping == i, notes the latency from ts and
sets pong = i. Every wait takes a token, reads, then waits since that
token, and is bounded by 10 s: a wait that reaches the bound is a lost
wake-up, and the peer exits 3. So each pair checks both directions.

ROUNDS: $UH_NOTIFY_ROUNDS, default 200. bench/notify runs the same peers
for the latency figures (same-language pairs too).
"""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from peers import LANGS, Cell, heapd_running, peer_argv, run_pair  # noqa: E402

ROUNDS = int(os.environ.get("UH_NOTIFY_ROUNDS", "200"))


@pytest.fixture(scope="module")
def cell():
    with heapd_running() as sock:
        with Cell(sock) as c:
            yield c


@pytest.mark.parametrize("writer,waiter",
                         [(w, a) for w in LANGS for a in LANGS if w != a])
def test_writer_wakes_waiter(cell, writer, waiter):
    for lang in (writer, waiter):
        if peer_argv(lang, cell.sock, cell.root, "waiter", 1) is None:
            pytest.fail(f"the {lang} peer is not built: run make")
    cell.reset()
    out = run_pair(cell.sock, cell.root, writer, waiter, ROUNDS)
    assert f"peer {writer} writer: {ROUNDS} rounds" in out.writer, out
    assert f"peer {waiter} waiter: {ROUNDS} rounds" in out.waiter, out
    assert "latency_us p50=" in out.waiter, out
    assert cell.values() == (ROUNDS, ROUNDS)
