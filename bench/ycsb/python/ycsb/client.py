"""The client: what site.ycsb.Client does, for the Python port.

    python3 -m ycsb -load|-t -db uniheap -P workloads/workloada \\
        -p recordcount=1000 -threads 2 -s

Client threads are processes (started with multiprocessing's "spawn":
CPython's GIL would serialize threads, and neither a uniheap heap nor an
LMDB environment may cross fork()). Each connects its own DB; the key
counters they share live in shared memory. The clock starts once every
worker has connected and built its workload, and stops when the last one
has done its share; the report then merges their measurements.
"""
import datetime
import multiprocessing as mp
import os
import queue
import random
import sys
import threading
import time
import traceback

from .backends import db_class, make_db
from .db import DBError, DBWrapper
from .measurements import Measurements, parse_percentiles, report_lines
from .properties import UsageError, parse_command_line
from .workload import CoreWorkload, WorkloadError, make_counters

USAGE = """usage: python3 -m ycsb [options]
  -threads n       client threads (processes), default 1 (property threadcount)
  -target n        aim at n operations per second in total (property target)
  -load            run the load phase
  -t               run the transaction phase (default)
  -db name         uniheap, lmdb, memory, redis, or module:Class (property db)
  -P file          a workload properties file; several are read in order
  -p name=value    a property, over those of the files
  -s               print status to stderr every status.interval seconds (10)
  -l label         a label for the status lines"""

_PROGRESS_EVERY = 256           # ops between progress updates and clock checks


def _op_count(props):
    if props.get("dotransactions", "true").lower() != "false":
        return int(props.get("operationcount", "0"))
    if "insertcount" in props:
        return int(props["insertcount"])
    return int(props.get("recordcount", "0"))


def _share(opcount, threads, index):
    """Java's split: every thread opcount/threads, the first opcount%threads
    one more."""
    return opcount // threads + (1 if index < opcount % threads else 0)


class Worker:
    """One client thread: its DB connection, workload and measurements."""

    def __init__(self, index, threads, props, counters):
        self.props = props
        self.measurements = Measurements()
        seed = props.get("seed")
        rng = random.Random(f"{seed}:{index}" if seed is not None else None)
        self.opcount = _share(_op_count(props), threads, index)
        self.dotransactions = props.get("dotransactions", "true").lower() != "false"
        target = int(props.get("target", "0"))
        self.tick_ns = int(1e9 * threads / target) if target > 0 else 0
        self.max_seconds = int(props.get("maxexecutiontime", "0"))
        db = make_db(props)
        db.init()
        self.db = DBWrapper(db, self.measurements)
        self.workload = CoreWorkload(props, rng, *counters, self.measurements)
        self.opsdone = 0

    def run(self, progress):
        """Run this thread's share; progress(opsdone) is called every few
        hundred operations."""
        step = (self.workload.do_transaction if self.dotransactions
                else self.workload.do_insert)
        db = self.db
        opcount = self.opcount
        start = time.monotonic_ns()
        deadline = start + self.max_seconds * 10**9 if self.max_seconds else 0
        tick = self.tick_ns
        done = 0
        stopped = False
        while not stopped and (opcount == 0 or done < opcount):
            # Up to the next progress update, in a loop of its own.
            n = _PROGRESS_EVERY - done % _PROGRESS_EVERY
            if opcount:
                n = min(n, opcount - done)
            for _ in range(n):
                if not step(db):
                    stopped = True
                    break
                done += 1
                if tick:
                    _sleep_until(start + done * tick)
            if done % _PROGRESS_EVERY == 0 and not stopped:
                progress(done)
                if deadline and time.monotonic_ns() >= deadline:
                    break
        self.opsdone = done
        progress(done)

    def close(self):
        self.db.db.cleanup()


def _sleep_until(deadline_ns):
    while (left := deadline_ns - time.monotonic_ns()) > 0:
        time.sleep(left / 1e9)


def _remaining(seconds):
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} hours {seconds % 3600 // 60} minutes"
    if seconds >= 60:
        return f"{seconds // 60} minutes"
    return f"{seconds} seconds"


class StatusThread(threading.Thread):
    """Prints the Java client's status line every interval seconds:
    '<time> <s> sec: <n> operations; <x> current ops/sec; est completion in ...'"""

    def __init__(self, total_ops, read_progress, interval, label):
        super().__init__(daemon=True)
        self.total_ops = total_ops
        self.read_progress = read_progress
        self.interval = interval
        self.label = label
        self.stopped = threading.Event()

    def run(self):
        start = time.monotonic()
        last_t, last_ops = start, 0
        while not self.stopped.wait(self.interval):
            now = time.monotonic()
            ops = self.read_progress()
            rate = (ops - last_ops) / (now - last_t) if now > last_t else 0.0
            stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S:%f")[:-3]
            msg = f"{self.label}{stamp} {int(now - start)} sec: {ops} operations; "
            if ops:
                msg += f"{rate:.2f} current ops/sec; "
            if self.total_ops and ops:
                left = (self.total_ops - ops) * (now - start) / ops
                msg += f"est completion in {_remaining(left)}"
            print(msg, file=sys.stderr, flush=True)
            last_t, last_ops = now, ops


# ---- one process: the client thread runs here ----

def _run_local(props, label):
    counters = make_counters(props, shared=False)
    worker = Worker(0, 1, props, counters)
    progress = [0]
    status = _start_status(props, label, lambda: progress[0])
    st = time.monotonic_ns()
    try:
        worker.run(lambda n: progress.__setitem__(0, n))
    finally:
        en = time.monotonic_ns()
        if status:
            status.stopped.set()
        worker.close()
    return worker.opsdone, (en - st) // 10**6, worker.measurements, 0


def _start_status(props, label, read_progress):
    if props.get("status", "false").lower() != "true":
        return None
    t = StatusThread(_op_count(props), read_progress, float(props.get("status.interval", "10")),
                     label)
    t.start()
    return t


# ---- several processes ----

def _process_main(index, threads, props, counters, progress, messages, start, abort):
    """Body of a worker process: connect, report ready, wait for the start,
    run, send the measurements back."""
    try:
        worker = Worker(index, threads, props, counters or make_counters(props, shared=False))
    except Exception:
        messages.put(("error", index, traceback.format_exc()))
        return 1
    messages.put(("ready", index, None))
    start.wait()
    if abort.value:
        worker.close()
        return 1

    def report(n):
        progress[index] = n
    try:
        worker.run(report)
    except Exception:
        messages.put(("error", index, traceback.format_exc()))
        worker.close()
        return 1
    messages.put(("done", index, (worker.opsdone, worker.measurements)))
    worker.close()
    return 0


def _expect(procs, messages, kind, count):
    """Wait for count messages of kind from the workers; returns them, or
    raises RuntimeError with the first error a worker reported (or died of)."""
    got = []
    while len(got) < count:
        try:
            what, index, payload = messages.get(timeout=0.5)
        except queue.Empty:
            dead = [p for p in procs if p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"client thread process {procs.index(dead[0])} exited with "
                                   f"status {dead[0].exitcode} before it said {kind}")
            continue
        if what == "error":
            raise RuntimeError(f"client thread {index} failed:\n{payload}")
        if what == kind:
            got.append(payload)
    return got


def _run_processes(props, threads, label):
    ctx = mp.get_context("spawn")
    # A binding whose every thread keeps a private table (the in-process
    # dict) gets private counters too: a key another thread inserted would
    # not be in this thread's table.
    private = getattr(db_class(props.get("db", "uniheap")), "PRIVATE_TABLES", False)
    counters = None if private else make_counters(props, shared=True)
    progress = ctx.RawArray("q", threads)
    messages = ctx.Queue()
    start = ctx.Event()
    abort = ctx.RawValue("b", 0)
    procs = [ctx.Process(target=_process_main, name=f"ycsb-client-{i}",
                         args=(i, threads, props, counters, progress, messages, start, abort))
             for i in range(threads)]
    for p in procs:
        p.start()
    failed = 0
    status = None
    try:
        _expect(procs, messages, "ready", threads)
        status = _start_status(props, label, lambda: sum(progress))
        st = time.monotonic_ns()
        start.set()
        results = _expect(procs, messages, "done", threads)
        en = time.monotonic_ns()
    except RuntimeError as e:
        print(e, file=sys.stderr, flush=True)
        abort.value = 1
        start.set()
        results, failed = [], 1
        st = en = time.monotonic_ns()
    finally:
        if status:
            status.stopped.set()
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():            # ours, by its own handle
                p.terminate()
                p.join()
            if p.exitcode:
                failed = 1
    m = Measurements()
    opsdone = 0
    for n, wm in results:
        opsdone += n
        m.merge(wm)
    return opsdone, (en - st) // 10**6, m, failed


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    print("Command line: " + " ".join(argv), file=sys.stderr)
    try:
        props = parse_command_line(argv)
        threads = int(props.get("threadcount", "1"))
        opcount = _op_count(props)
    except (UsageError, ValueError) as e:
        print(USAGE, file=sys.stderr)
        print(f"ycsb: {e}", file=sys.stderr)
        return 2
    if opcount and threads > opcount:
        threads = opcount
        print("Warning: the threadcount is bigger than recordcount, the threadcount will be "
              "recordcount!")
    label = props.get("label", "")
    print(f"YCSB Python port (CoreWorkload of 0.17.0), db={props.get('db', 'uniheap')}, "
          f"threads={threads}, pid {os.getpid()}", file=sys.stderr)
    print("Starting test.", file=sys.stderr, flush=True)
    try:
        if threads <= 1:
            opsdone, runtime, m, failed = _run_local(props, label)
        else:
            opsdone, runtime, m, failed = _run_processes(props, threads, label)
    except (DBError, WorkloadError) as e:
        print(f"ycsb: {e}", file=sys.stderr)
        return 1
    percentiles = parse_percentiles(props.get("hdrhistogram.percentiles", "95,99"))
    print("\n".join(report_lines(m, runtime, opsdone, percentiles)), flush=True)
    return 1 if failed else 0
