"""Running one YCSB client: its status lines shown as progress while it
runs, its report parsed and judged when it ends."""
import collections
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field

from . import clients, report

# The latency columns kept per run: operation -> report section.
LATENCY_OPS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE")


@dataclass
class Run:
    """What one client run was and what it gave."""
    block: str              # matrix, xlang, solo, mixed
    durability: str
    language: str
    backend: str
    phase: str              # load or run
    workload: str           # load, a..f
    threads: int
    records: int
    operations: int
    loader: str = ""        # the language that loaded the table, when another
    exit_status: int = 0
    seconds: float = 0.0
    report: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    skipped: str = ""       # why the run was not made
    gc: str = ""            # "loop": GC cycles ran back to back during it (YCSB_GC)
    gc_cycles: int = 0      # ... cycles done meanwhile
    gc_given_up: int = 0    # ... cycles given up meanwhile
    heapd_cpu_s: float = 0.0    # CPU time heapd used while the client ran (uniheap)
    client_cpu_s: float = 0.0   # CPU time (user + system) of the client process itself
    grow_steps: list = field(default_factory=list)  # µs of each growth of the heap (YCSB_GROW)
    heap_bytes: int = 0         # the heap's size after the run (YCSB_GROW)
    store_bytes: int = None     # a load: what the store's data grew by (Store.footprint)

    @property
    def ok(self):
        return not self.skipped and not self.problems

    @property
    def throughput(self):
        return self.report.get("OVERALL", {}).get("Throughput(ops/sec)", 0.0)

    def latency(self, op, metric):
        return self.report.get(op, {}).get(metric)


class Client:
    """A started client process; wait() gives its Run."""

    def __init__(self, run, argv, env, label, echo=True):
        self.run = run
        self.label = label
        self.echo = echo
        self.stdout = []
        self.stderr = collections.deque(maxlen=40)
        self.start = time.monotonic()
        self.proc = subprocess.Popen(argv, env={**os.environ, **env}, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
        self._threads = [threading.Thread(target=self._read, args=(self.proc.stdout, False),
                                          daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, True),
                                          daemon=True)]
        for t in self._threads:
            t.start()

    def _read(self, stream, is_err):
        for line in stream:
            if not is_err:
                self.stdout.append(line)
                continue
            self.stderr.append(line)
            if self.echo and " sec: " in line and "operations" in line:
                # the client's status line: "<date> <time> 10 sec: 1234
                # operations; ...", the Java client's followed by per
                # operation histograms in brackets (left out here)
                before, after = line.split(" sec: ", 1)
                secs = before.rsplit(" ", 1)[-1]
                status = after.split(" [", 1)[0].strip().rstrip(";")
                print(f"      {self.label}: {secs} s, {status}", flush=True)

    def _reap(self, timeout):
        """Wait for the client with wait4, which gives its CPU time too;
        False if it is still running after timeout seconds."""
        deadline = time.monotonic() + timeout
        while True:     # bounded by the deadline
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                self.run.client_cpu_s = usage.ru_utime + usage.ru_stime
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    def wait(self, timeout):
        if not self._reap(timeout):
            self.proc.kill()            # ours, by its own handle
            self._reap(60)
            self.run.problems.append(f"timed out after {timeout} s")
        for t in self._threads:
            t.join(timeout=10)
        r = self.run
        r.seconds = time.monotonic() - self.start
        r.exit_status = self.proc.returncode
        r.report = report.parse("".join(self.stdout))
        expected = r.operations if r.phase == "run" else r.records
        r.problems += report.problems(r.report, expected, r.exit_status)
        if r.problems:
            r.problems.append("stderr: " + "".join(self.stderr)[-1500:].strip())
        return r


def cpu_seconds(pid):
    """CPU time (user + system) process pid has used so far, or 0."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def start(run, store_props, store_env, build, extra_props=None, echo=True):
    """Start the client of run against a store; returns a Client."""
    props = {"recordcount": run.records,
             "operationcount": run.operations if run.phase == "run" else run.records,
             "status.interval": 5}
    props.update(store_props)
    props.update(extra_props or {})
    wl = "a" if run.phase == "load" else run.workload
    argv, env = clients.command(run.language, run.phase, run.backend, wl, props, run.threads,
                                status=True, build=build)
    label = f"{run.language}/{run.backend}"
    return Client(run, argv, {**store_env, **env}, label, echo)

