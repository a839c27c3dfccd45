/*
 * bench_util.h -- what every benchmark program here needs: a monotonic
 * clock, the BENCH_SCALE factor applied to iteration counts, and stopping
 * at the first error (a number measured after one is noise).
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "uniheap.h"

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* BENCH_SCALE from the environment (a positive number), else 1. */
static inline double bench_scale_env(void)
{
	const char *s = getenv("BENCH_SCALE");
	return s && atof(s) > 0 ? atof(s) : 1.0;
}

/* n scaled, at least 10 iterations. */
static inline long bench_scaled(long n, double scale)
{
	long v = (long)(n * scale);
	return v < 10 ? 10 : v;
}

/* Exit on a libuniheap error, naming the program and what failed. */
static inline void bench_must(const char *prog, int rc, const char *what)
{
	if (rc != 0) {
		fprintf(stderr, "%s: %s: %s: %s\n", prog, what, uh_strerror(rc), uh_errmsg());
		exit(1);
	}
}

#endif /* BENCH_UTIL_H */
