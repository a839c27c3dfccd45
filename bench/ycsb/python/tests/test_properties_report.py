"""Properties files, the command line, and the report lines."""
import pytest

from ycsb.measurements import Measurements, java_double, report_lines
from ycsb.properties import UsageError, parse_command_line, parse_properties


def test_properties_file_syntax():
    text = "\n".join([
        "# a comment", "! another", "",
        "a=1", "b : two words ", "c   3", "d=x\\", "   y", "e=tab\\there", "f=\\u0041",
    ])
    assert parse_properties(text) == {"a": "1", "b": "two words ", "c": "3", "d": "xy",
                                      "e": "tab\there", "f": "A"}


def test_command_line_overrides_files_in_order(tmp_path):
    one = tmp_path / "one"
    one.write_text("workload=site.ycsb.workloads.CoreWorkload\nrecordcount=10\nx=1\n")
    two = tmp_path / "two"
    two.write_text("recordcount=20\n")
    props = parse_command_line(["-P", str(one), "-P", str(two), "-p", "x=9", "-threads", "4",
                                "-load", "-db", "memory", "-s"])
    assert props["recordcount"] == "20"
    assert props["x"] == "9"
    assert props["threadcount"] == "4"
    assert props["dotransactions"] == "false"
    assert props["db"] == "memory"
    assert props["status"] == "true"


@pytest.mark.parametrize("args,message", [
    (["-p", "novalue"], "name=value"),
    (["-threads"], "missing argument value for -threads"),
    (["-threads", "two"], "integer"),
    (["-x"], "unknown option"),
    (["-p", "a=b"], "missing property: workload"),
    (["-P", "/nonexistent/workload"], "unable to open the properties file"),
])
def test_command_line_errors_name_the_argument(args, message):
    with pytest.raises(UsageError, match=message):
        parse_command_line(args)


def test_java_double():
    assert java_double(15625.0) == "15625.0"
    assert java_double(2.5) == "2.5"
    assert java_double(1e7) == "1.0E7"
    assert java_double(12345678.9) == "1.23456789E7"
    assert java_double(0.0001) == "1.0E-4"
    assert java_double(0.0) == "0.0"
    assert java_double(float("nan")) == "NaN"


def test_report_lines_have_the_java_client_layout():
    m = Measurements()
    for us in (10, 20, 30, 40):
        m.measure("READ", us)
        m.report_status("READ", "OK")
    m.measure("UPDATE-FAILED", 5)
    m.report_status("UPDATE", "ERROR")
    lines = report_lines(m, 200, 5)
    assert lines[:2] == ["[OVERALL], RunTime(ms), 200", "[OVERALL], Throughput(ops/sec), 25.0"]
    assert "[READ], Operations, 4" in lines
    assert "[READ], AverageLatency(us), 25.0" in lines
    assert "[READ], MinLatency(us), 10" in lines
    assert "[READ], MaxLatency(us), 40" in lines
    assert "[READ], 95thPercentileLatency(us), 40" in lines
    assert "[READ], 99thPercentileLatency(us), 40" in lines
    assert "[READ], Return=OK, 4" in lines
    assert "[UPDATE], Return=ERROR, 1" in lines
    assert "[UPDATE-FAILED], Operations, 1" in lines
    assert lines.index("[READ], Operations, 4") < lines.index("[UPDATE], Operations, 0")


def test_measurements_merge():
    a, b = Measurements(), Measurements()
    a.measure("READ", 3)
    b.measure("READ", 3)
    b.measure("READ", 4)
    a.report_status("READ", "OK")
    b.report_status("READ", "OK")
    a.merge(b)
    assert a.latencies["READ"] == {3: 2, 4: 1}
    assert a.returns["READ"] == {"OK": 2}
