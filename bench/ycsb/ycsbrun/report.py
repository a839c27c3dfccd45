"""Reading a YCSB client's report ("[SECTION], metric, value" lines, the
same from the Java client and the ports) and judging it.

The Java client exits 0 even when its threads failed (it then reports a
throughput of 0), so a run passes only when the report shows every
operation it asked for, each one returned OK, and nothing was verified
wrong.
"""


def parse(text):
    """{section: {metric: value}} of the report lines in text; values are
    int or float where they parse, str otherwise. Other lines are ignored."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("["):
            continue
        parts = [p.strip() for p in line.split(",", 2)]
        if len(parts) != 3 or not parts[0].endswith("]"):
            continue
        section, metric, value = parts[0][1:-1], parts[1], parts[2]
        for conv in (int, float):
            try:
                value = conv(value)
                break
            except ValueError:
                pass
        out.setdefault(section, {})[metric] = value
    return out


# Sections that count operations the client asked for. READ-MODIFY-WRITE
# is timed on top of its READ and UPDATE parts, VERIFY checks reads.
_OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "DELETE")


def operations(report):
    """Operations the report counts (READ-MODIFY-WRITE as its two parts)."""
    n = sum(report.get(op, {}).get("Operations", 0) for op in _OPERATIONS)
    return n - report.get("READ-MODIFY-WRITE", {}).get("Operations", 0)


def problems(report, expected_ops, exit_status=0):
    """What is wrong with a run, as sentences; [] when it passed: the client
    exited 0, did expected_ops operations, every one returned OK, every
    verified read had the values written, and the throughput is above 0."""
    found = []
    if exit_status != 0:
        found.append(f"the client exited with status {exit_status}")
    if "OVERALL" not in report:
        found.append("no [OVERALL] lines: the client did not finish")
        return found
    if not report["OVERALL"].get("Throughput(ops/sec)", 0) > 0:
        found.append("throughput is 0 (the Java client reports that when its threads failed)")
    done = operations(report)
    if expected_ops is not None and done != expected_ops:
        found.append(f"{done} operations done, {expected_ops} asked for")
    for section, metrics in sorted(report.items()):
        if section.endswith("-FAILED"):
            found.append(f"{metrics.get('Operations', '?')} {section[:-7]} operations failed")
        bad = {m: v for m, v in metrics.items() if m.startswith("Return=") and m != "Return=OK"}
        for m, v in bad.items():
            found.append(f"{section}: {v} returned {m[7:]}")
        if section in _OPERATIONS or section == "VERIFY":
            ok = metrics.get("Return=OK", 0)
            if ok != metrics.get("Operations", 0):
                found.append(f"{section}: {ok} of {metrics.get('Operations', 0)} returned OK")
    return found
