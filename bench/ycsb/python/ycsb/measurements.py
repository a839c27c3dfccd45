"""Latencies and return codes per operation, and the report the Java
client prints.

Latencies are whole microseconds from time.perf_counter_ns (monotonic),
truncated like YCSB's (int)((end - start) / 1000). A worker counts how
often each latency occurred (a dict is ~25x cheaper per operation than
hdrh's record_value); the counts go into one HdrHistogram per operation,
3 significant digits as YCSB's Recorder(3), when the report is made, so
the figures are HdrHistogram's, computed over the same values.
"""
import decimal
import math

from hdrh.histogram import HdrHistogram

OK = "OK"
# The operations in the order the report shows them; others follow sorted.
_ORDER = ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE", "VERIFY"]
_HIGHEST_US = 3600 * 1000 * 1000            # one hour; longer ones are clamped


class Measurements:
    """What one worker measured: latency counts per measurement name and
    return codes per operation. Picklable (plain dicts) so that workers
    can send theirs to the parent, which merges them."""

    def __init__(self):
        self.latencies = {}     # name -> {latency_us: count}
        self.returns = {}       # operation -> {status name: count}

    def measure(self, name, latency_us):
        c = self.latencies.get(name)
        if c is None:
            c = self.latencies[name] = {}
        c[latency_us] = c.get(latency_us, 0) + 1

    def report_status(self, op, status):
        r = self.returns.get(op)
        if r is None:
            r = self.returns[op] = {}
        r[status] = r.get(status, 0) + 1

    def latency_counts(self, name):
        """The {latency_us: count} dict of name (made if new), for a
        caller that counts into it directly."""
        c = self.latencies.get(name)
        if c is None:
            c = self.latencies[name] = {}
        return c

    def return_counts(self, op):
        """The {status: count} dict of op (made if new)."""
        r = self.returns.get(op)
        if r is None:
            r = self.returns[op] = {}
        return r

    def merge(self, other):
        for name, counts in other.latencies.items():
            mine = self.latencies.setdefault(name, {})
            for v, n in counts.items():
                mine[v] = mine.get(v, 0) + n
        for op, codes in other.returns.items():
            mine = self.returns.setdefault(op, {})
            for s, n in codes.items():
                mine[s] = mine.get(s, 0) + n

    def histogram(self, name):
        h = HdrHistogram(1, _HIGHEST_US, 3)
        for v, n in self.latencies.get(name, {}).items():
            h.record_value(min(v, _HIGHEST_US), n)
        return h


def java_double(d):
    """d as Java's Double.toString prints it (what the report shows)."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "0.0"
    if 1e-3 <= abs(d) < 1e7:
        r = repr(float(d))
        return r if ("." in r or "e" in r) else r + ".0"
    sign, digits, exp = decimal.Decimal(repr(float(d))).normalize().as_tuple()
    digits = "".join(map(str, digits))
    e = exp + len(digits) - 1
    frac = digits[1:] or "0"
    return f"{'-' if sign else ''}{digits[0]}.{frac}E{e}"


def _ordinal(p):
    if p != int(p):
        return java_double(p)
    j = int(p)
    if j % 100 in (11, 12, 13):
        return f"{j}th"
    return f"{j}{['th', 'st', 'nd', 'rd', 'th', 'th', 'th', 'th', 'th', 'th'][j % 10]}"


def _names_in_order(m):
    names = set(m.latencies) | set(m.returns)
    first = [n for n in _ORDER if n in names]
    return first + sorted(names - set(first))


def report_lines(m, runtime_ms, operations, percentiles=(95.0, 99.0)):
    """The lines of the Java client's text report: [OVERALL] run time and
    throughput, then per operation its count, latencies and returns."""
    throughput = 1000.0 * operations / runtime_ms if runtime_ms else float("nan")
    lines = [f"[OVERALL], RunTime(ms), {runtime_ms}",
             f"[OVERALL], Throughput(ops/sec), {java_double(throughput)}"]
    for name in _names_in_order(m):
        h = m.histogram(name)
        n = h.get_total_count()
        lines.append(f"[{name}], Operations, {n}")
        lines.append(f"[{name}], AverageLatency(us), "
                     f"{java_double(h.get_mean_value() if n else float('nan'))}")
        lines.append(f"[{name}], MinLatency(us), {h.get_min_value() if n else 0}")
        lines.append(f"[{name}], MaxLatency(us), {h.get_max_value()}")
        for p in percentiles:
            lines.append(f"[{name}], {_ordinal(p)}PercentileLatency(us), "
                         f"{h.get_value_at_percentile(p)}")
        codes = m.returns.get(name, {})
        for status in sorted(codes, key=lambda s: (s != OK, s)):
            lines.append(f"[{name}], Return={status}, {codes[status]}")
    return lines


def parse_percentiles(text):
    """The hdrhistogram.percentiles property ("95,99") as floats."""
    try:
        return tuple(float(p) for p in text.split(","))
    except ValueError:
        return (95.0, 99.0)
