"""uniheap's online GC run back to back while a client runs (YCSB_GC):
one `heapctl --json gc --wait --repeat 0` process, which asks heapd for a
cycle as soon as the last one ended (no process start per cycle), read
line by line (one JSON answer per cycle), and stopped by its pid.

    with GcLoop(store.heapd) as loop:
        ... run the client ...
    loop.done, loop.given_up, loop.failed
"""
import json
import subprocess
import threading


class GcLoop:
    def __init__(self, heapd):
        self.heapd = heapd
        self.done = 0
        self.given_up = 0
        self.failed = ""        # why heapctl gc stopped on its own, if it did
        self._stopping = False
        self._proc = None
        self._reader = threading.Thread(target=self._read, daemon=True)

    def _read(self):
        for line in self._proc.stdout:      # until heapctl ends
            try:
                outcome = json.loads(line)["cycle"]["outcome"]
            except (ValueError, KeyError, TypeError):
                continue
            if outcome == "done":
                self.done += 1
            else:
                self.given_up += 1

    def __enter__(self):
        cmd = [str(self.heapd.build / "heapctl"), "--socket", str(self.heapd.socket), "--json",
               "gc", "--wait", "--repeat", "0"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      stdin=subprocess.DEVNULL, text=True)
        self._reader.start()
        return self

    def __exit__(self, *exc):
        if self._proc.poll() is not None:
            self.failed = (f"heapctl gc --wait --repeat 0 ended with {self._proc.returncode}: "
                           + self._proc.stderr.read().strip()[-300:])
        else:
            self._proc.terminate()          # ours, by its own handle
        self._proc.wait(timeout=60)
        self._reader.join(timeout=10)
