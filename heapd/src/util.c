/*
 * util.c -- small helpers every file of heapd's core uses: the clocks,
 * error messages, byte counts for messages, and the heap bounds check.
 *
 * This is the bottom layer of the core (see core.h): it calls nothing
 * else of heapd, so any file may use it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "core.h"

uint64_t hd_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t hd_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int hd_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *hd_fmt_bytes(char *buf, size_t len, uint64_t n)
{
	static const char *unit[] = { "KiB", "MiB", "GiB", "TiB" };
	if (n < 1024) {
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
		return buf;
	}
	int u = 0;
	uint64_t div = 1024;
	while (u < 3 && n >= div * 1024) {	/* at most 3 steps */
		div *= 1024;
		u++;
	}
	/* One decimal, dropped when it rounds to .0 ("2 MiB", "1.5 MiB"). */
	uint64_t tenths = (n * 10 + div / 2) / div;
	if (tenths % 10 == 0)
		snprintf(buf, len, "%llu %s", (unsigned long long)(tenths / 10), unit[u]);
	else
		snprintf(buf, len, "%llu.%llu %s", (unsigned long long)(tenths / 10),
			 (unsigned long long)(tenths % 10), unit[u]);
	return buf;
}

int hd_in_heap(const struct hd *hd, uint64_t off, uint64_t len)
{
	return off <= hd->heap_size && len <= hd->heap_size - off;
}
