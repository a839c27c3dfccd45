"""A port of YCSB 0.17.0's client and CoreWorkload to Python, with
database bindings for uniheap and its peers (LMDB, Redis, an in-process
dict). `python3 -m ycsb` takes the Java client's command line; see
bench/ycsb/README.md."""
