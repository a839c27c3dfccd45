/*
 * gc_graph.h -- the object graph the GC benchmarks mark: N records
 * {next, other, v}; next chains each node to the one made before it (so
 * all N are reachable from the root "bench.graph"), other names a
 * uniformly random earlier node (so the mark's accesses jump around the
 * heap as in a real object graph). Built in blocks of 10,000 allocations.
 */
#ifndef GC_GRAPH_H
#define GC_GRAPH_H

#include <stdint.h>

#include "harness.h"

/* Heap size (MiB) that holds the graph of n with room to spare: 48-byte
 * slots, twice that for the arenas' slack and the logs, plus 64 MiB. */
uint64_t gc_graph_heap_mib(uint64_t n);

/* Build the graph of n nodes (n >= 2) on d's heap from a session of its
 * own, root it, print how long it took; exits on an error (prog names
 * the program in the message). */
void gc_graph_build(const struct th_heapd *d, const char *prog, uint64_t n);

#endif /* GC_GRAPH_H */
