"""demo_board.py -- the Python process of `make demo`.
Usage: python3 demo_board.py AMOUNT

Connects to heapd ($UNIHEAP_SOCKET), opens the root "demo.board" that the
C process published (its classes DemoBoard and DemoCounter are not
declared here: the proxies come from the heap's class table), says what
the counter holds and which process wrote it last, then adds AMOUNT to it
in one failure-atomic block (re-run if another process wins a conflict)
and says the value it committed.
"""
import os
import sys

import uniheap


def main():
    if len(sys.argv) != 2 or not sys.argv[1].lstrip("-").isdigit():
        print("usage: demo_board.py AMOUNT", file=sys.stderr)
        return 2
    amount = int(sys.argv[1])
    me = f"python (pid {os.getpid()})"
    with uniheap.connect() as heap:
        board = heap.roots.get("demo.board")
        if board is None:
            print(f"{me}: no root \"demo.board\" in this heap: run the C process first",
                  file=sys.stderr)
            return 1
        counter = board.counter
        print(f"{me}: found \"{board.title}\": counter = {counter.value}, "
              f"last written by pid {counter.writer_pid}")

        def add():
            counter.value += amount
            counter.writer_pid = os.getpid()
            return counter.value
        now = heap.atomic(add)
        print(f"{me}: added {amount} in one atomic block: counter = {now}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
