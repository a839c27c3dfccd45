"""The Python port draws what YCSB 0.17.0 draws.

Pinned values (FNV hashes, zipfian constants, key names, deterministic
field values) were printed by YCSB's own classes in site.ycsb:core:0.17.0.
Distribution checks use a fixed seed and tolerances far wider than the
sampling error (so they never flake) yet far narrower than any mistake in
the generators would give.
"""
import collections
import random

import pytest

from ycsb.counters import AcknowledgedCounter, Counter, SharedAcknowledgedCounter
from ycsb.generators import (SCRAMBLED_ZETAN, DiscreteGenerator, ScrambledZipfianGenerator,
                             SkewedLatestGenerator, UniformLongGenerator, ZipfianGenerator,
                             fnvhash64, zetastatic)
from ycsb.measurements import Measurements
from ycsb.properties import load_properties
from ycsb.values import deterministic_value, random_value
from ycsb.workload import CoreWorkload, make_counters, operation_chooser

from conftest import WORKLOADS


def workload(name=None, seed=1, **overrides):
    props = load_properties(WORKLOADS / f"workload{name}") if name else {}
    props.update({k: str(v) for k, v in overrides.items()})
    props.setdefault("recordcount", "1000")
    props.setdefault("operationcount", "1000")
    return CoreWorkload(props, random.Random(seed), *make_counters(props, shared=False),
                        Measurements())


# ---- FNV and key names ----

def test_fnvhash64_check_values():
    assert fnvhash64(0) == 6284781860667377211
    assert fnvhash64(1) == 8517097267634966620
    assert fnvhash64(1000) == 5952875239596136740
    assert fnvhash64(123456789) == 2350796791908741607
    assert fnvhash64(-1) == 8289690350564177859     # arithmetic shift of a negative long


def test_key_names_are_hashed_and_padded():
    w = workload()
    assert w.build_key_name(0) == "user6284781860667377211"
    assert w.build_key_name(1) == "user8517097267634966620"
    assert w.build_key_name(999) == "user2071219101098386137"
    padded = workload(zeropadding=21)
    assert padded.build_key_name(0) == "user006284781860667377211"
    ordered = workload(insertorder="ordered", zeropadding=6)
    assert ordered.build_key_name(42) == "user000042"


def test_load_inserts_keys_in_counter_order():
    class Recorder:
        def __init__(self):
            self.keys = []

        def insert(self, table, key, values):
            self.keys.append(key)
            assert table == "usertable"
            assert sorted(values) == [f"field{i}" for i in range(10)]
            assert all(len(v) == 100 for v in values.values())
            return "OK"
    db = Recorder()
    w = workload("a", insertstart=10)
    for _ in range(5):
        assert w.do_insert(db)
    assert db.keys == [w.build_key_name(k) for k in range(10, 15)]


# ---- zipfian ----

def test_zipfian_constants():
    z = ZipfianGenerator(random.Random(1), 0, 999)
    assert z.zeta2theta == pytest.approx(1.5034777750283594, rel=1e-15)
    assert z.zetan == pytest.approx(7.728953217284729, rel=1e-14)
    assert z.eta == pytest.approx(0.07480608670689805, rel=1e-14)
    big = ZipfianGenerator(random.Random(1), 0, 99999)
    assert big.zetan == pytest.approx(12.778338062551246, rel=1e-13)
    assert big.eta == pytest.approx(0.11622472739519558, rel=1e-13)


def test_zipfian_extends_zetan_but_keeps_eta_of_its_item_count():
    z = ZipfianGenerator(random.Random(1), 0, 999)
    eta0 = z.eta
    z.next_long(1500)
    assert z.zetan == pytest.approx(zetastatic(1500, 0.99), rel=1e-13)
    expected = (1 - (2.0 / 1000) ** 0.01) / (1 - z.zeta2theta / z.zetan)
    assert z.eta == pytest.approx(expected, rel=1e-13)
    assert z.eta != eta0


def test_zipfian_popularity_and_bounds():
    z = ZipfianGenerator(random.Random(7), 100, 1099)
    draws = [z.next_value() for _ in range(100_000)]
    assert min(draws) >= 100 and max(draws) <= 1099
    counts = collections.Counter(draws)
    # P(base) = 1/zetan = 12.9%, P(base+1) = 0.5^0.99/zetan = 6.5%
    assert counts[100] / len(draws) == pytest.approx(1 / z.zetan, abs=0.01)
    assert counts[101] / len(draws) == pytest.approx(0.5 ** 0.99 / z.zetan, abs=0.01)
    assert counts.most_common(1)[0][0] == 100


def test_scrambled_zipfian_uses_the_fixed_zetan_and_stays_in_range():
    s = ScrambledZipfianGenerator(random.Random(3), 0, 999)
    assert s._gen.zetan == SCRAMBLED_ZETAN == 26.46902820178302
    assert s._gen.items == 10_000_000_001
    draws = [s.next_value() for _ in range(50_000)]
    assert min(draws) >= 0 and max(draws) <= 999
    # the most popular item is the hash of the zipfian's first, scattered
    top = collections.Counter(draws).most_common(1)[0][0]
    assert top == fnvhash64(0) % 1000


def test_request_keys_never_exceed_the_last_insert():
    w = workload("a", recordcount=200, operationcount=1000, insertproportion=0.5)
    # the key space has room for the run's inserts (2x fudge factor)
    assert w.keychooser.itemcount == 200 + 1000 + 1
    for _ in range(5000):
        assert 0 <= w.next_keynum() <= 199


# ---- latest, uniform, scan length ----

def test_skewed_latest_bounds_follow_the_acknowledged_inserts():
    basis = AcknowledgedCounter(1000)
    latest = SkewedLatestGenerator(random.Random(5), basis)
    draws = [latest.next_value() for _ in range(20_000)]
    assert min(draws) >= 0 and max(draws) <= 999
    assert collections.Counter(draws).most_common(1)[0][0] == 999
    for _ in range(10):
        basis.acknowledge(basis.next_value())
    draws = [latest.next_value() for _ in range(20_000)]
    assert max(draws) <= 1009 and min(draws) >= 0
    assert collections.Counter(draws).most_common(1)[0][0] == 1009


def test_uniform_long_bounds():
    u = UniformLongGenerator(random.Random(2), -3, 3)
    draws = collections.Counter(u.next_value() for _ in range(70_000))
    assert sorted(draws) == list(range(-3, 4))
    assert all(abs(n / 70_000 - 1 / 7) < 0.01 for n in draws.values())


def test_scan_length_range():
    w = workload("e")
    lengths = [w.scanlength.next_value() for _ in range(20_000)]
    assert min(lengths) == 1 and max(lengths) == 100
    zipf = workload("e", scanlengthdistribution="zipfian")
    lengths = [zipf.scanlength.next_value() for _ in range(20_000)]
    assert min(lengths) == 1 and max(lengths) <= 100
    assert collections.Counter(lengths).most_common(1)[0][0] == 1


# ---- operation mix ----

@pytest.mark.parametrize("name,expected", [
    ("a", {"READ": 0.5, "UPDATE": 0.5}),
    ("b", {"READ": 0.95, "UPDATE": 0.05}),
    ("c", {"READ": 1.0}),
    ("d", {"READ": 0.95, "INSERT": 0.05}),
    ("e", {"SCAN": 0.95, "INSERT": 0.05}),
    ("f", {"READ": 0.5, "READMODIFYWRITE": 0.5}),
])
def test_operation_mix(name, expected):
    props = load_properties(WORKLOADS / f"workload{name}")
    chooser = operation_chooser(props, random.Random(11))
    n = 100_000
    counts = collections.Counter(chooser.next_value() for _ in range(n))
    assert set(counts) == set(expected)
    for op, p in expected.items():
        assert counts[op] / n == pytest.approx(p, abs=0.006), op


def test_discrete_generator_normalizes_weights():
    d = DiscreteGenerator(random.Random(4))
    d.add_value(3, "x")
    d.add_value(1, "y")
    counts = collections.Counter(d.next_value() for _ in range(40_000))
    assert counts["x"] / 40_000 == pytest.approx(0.75, abs=0.01)


def test_a_seed_repeats_the_run():
    def ops(seed):
        w = workload("a", seed=seed)
        return [(w.operationchooser.next_value(), w.next_keynum()) for _ in range(200)]
    assert ops(9) == ops(9)
    assert ops(9) != ops(10)


# ---- values ----

def test_deterministic_values_match_ycsb():
    assert deterministic_value("user6284781860667377211", "field0", 100) == (
        b"user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:"
        b"-169193395:-1039977118:-10")
    assert deterministic_value("user1", "field9", 100) == (
        b"user1:field9:-1268390937:701431326:1606534939:-534149429:-1854609471:"
        b"-1563934887:1739619784:-7954596")
    assert deterministic_value("user1", "field9", 10) == b"user1:fiel"


def test_random_values_are_printable():
    v = random_value(random.Random(8), 100_000)
    assert len(v) == 100_000
    assert min(v) >= 32 and max(v) <= 127
    # the three positions of YCSB's pattern draw from 32, 64 and 96 codes
    assert len(set(v[0::3])) == 32 and len(set(v[1::3])) == 64 and len(set(v[2::3])) == 64


def test_verify_row_flags_a_wrong_byte():
    w = workload("c", dataintegrity="true")
    key = w.build_key_name(3)
    good = w.build_values(key)
    w.verify_row(key, good)
    bad = dict(good, field4=good["field4"][:-1] + b"?")
    w.verify_row(key, bad)
    w.verify_row(key, {})
    assert w.measurements.returns["VERIFY"] == {"OK": 1, "UNEXPECTED_STATE": 1, "ERROR": 1}


# ---- counters ----

@pytest.mark.parametrize("make", [AcknowledgedCounter, SharedAcknowledgedCounter])
def test_acknowledged_counter_advances_over_contiguous_acks(make):
    c = make(100)
    assert c.last_value() == 99
    a, b, d = c.next_value(), c.next_value(), c.next_value()
    assert (a, b, d) == (100, 101, 102)
    c.acknowledge(b)
    assert c.last_value() == 99         # 100 is not acknowledged yet
    c.acknowledge(a)
    assert c.last_value() == 101
    c.acknowledge(d)
    assert c.last_value() == 102


def test_counter():
    c = Counter(5)
    assert c.last_value() == 4
    assert [c.next_value() for _ in range(3)] == [5, 6, 7]
    assert c.last_value() == 7
