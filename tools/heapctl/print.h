/*
 * print.h -- heapctl's human-readable output: aligned columns, sizes in
 * binary units, durations in h/m/s.
 */
#ifndef HEAPCTL_PRINT_H
#define HEAPCTL_PRINT_H

#include <stdio.h>

#include "uniheap/v1/heapd.pb.h"

namespace heapctl {

void print_status(FILE *out, const uniheap::v1::StatusResponse &s);
void print_grow(FILE *out, const uniheap::v1::GrowResponse &r);
void print_classes(FILE *out, const uniheap::v1::ListClassesResponse &r);
void print_roots(FILE *out, const uniheap::v1::ListRootsResponse &r);
void print_stats(FILE *out, const uniheap::v1::StatsResponse &s);
void print_gc(FILE *out, const uniheap::v1::GcResponse &r);

} /* namespace heapctl */

#endif /* HEAPCTL_PRINT_H */
