"""What the bank workers and the tests that start them share: the account
class, the root, and fixed-size acknowledgement records."""

import os

import uniheap

ROOT = "t.bank.accounts"
RECORD_LEN = 64   # divides the page size: a SIGKILL never tears a record


class Account(uniheap.PObject, name="t.bank.Account"):
    balance = uniheap.i64()
    owner = uniheap.string()


def create_accounts(heap, n, initial):
    """n accounts with `initial` each, published as a PList under ROOT in
    one block. Returns the list of proxies."""
    with heap.atomic():
        accts = [Account(heap, balance=initial, owner=f"acct{i}") for i in range(n)]
        heap.roots[ROOT] = uniheap.PList(heap, accts)
    return accts


def accounts(heap):
    return list(heap.roots[ROOT])


def record_append(fd, text):
    """Append text as one RECORD_LEN-byte record (padded, newline-ended)."""
    data = text.encode()
    if len(data) >= RECORD_LEN:
        raise ValueError(f"record too long: {text!r}")
    data = data.ljust(RECORD_LEN - 1) + b"\n"
    if os.write(fd, data) != RECORD_LEN:
        raise OSError("short write of an ack record")


def read_records(path):
    """Records of a file written by record_append, as lists of words; a
    trailing partial record (impossible by construction) is an error."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) % RECORD_LEN:
        raise AssertionError(f"{path}: torn record ({len(data)} bytes)")
    return [data[i:i + RECORD_LEN].decode().split()
            for i in range(0, len(data), RECORD_LEN)]


def transfer(accts, src, dst, amount):
    """Body of one transfer; no overdraft. Returns 1 if it moved money."""
    s, d = accts[src], accts[dst]
    if s.balance < amount:
        return 0
    s.balance -= amount
    d.balance += amount
    return 1
