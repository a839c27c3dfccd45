/*
 * pmtrace.h -- the persistence trace of the power-loss tests.
 *
 * When $UH_PMTRACE names a file, every flush and barrier a process asks
 * for is appended to it as one record: libuniheap's uh_flush/uh_barrier
 * (which logapply's persist callbacks end in), and, through the tests'
 * LD_PRELOAD library, libpmemobj's calls into libpmem made by heapd. One
 * write(2) per record on an O_APPEND descriptor keeps the records of all
 * processes in the order they happened. A test rebuilds from the trace
 * every state a power loss could leave on the media (tests/c/powerloss.c).
 *
 * A growth (FORMAT.md 1.1) changes the file's length with posix_fallocate
 * and makes it durable with fsync: the preload library records the length
 * after each fsync of the heap file (a LENGTH record).
 *
 * A flush record carries the bytes of the whole cache lines it covers as
 * they were at the flush: that is what a clwb writes back. Offsets are
 * from the start of the heap file.
 */
#ifndef UH_PMTRACE_H
#define UH_PMTRACE_H

#include <stddef.h>
#include <stdint.h>

#define UH_PMTRACE_MAGIC 0x52544d50u	/* "PMTR" */
#define UH_PMTRACE_LINE 64u

enum uh_pmtrace_kind {
	UH_PMT_FLUSH = 1,	/* lines written back, durable at the thread's next barrier */
	UH_PMT_BARRIER = 2,	/* every earlier flush of this thread is durable */
	UH_PMT_PERSIST = 3,	/* durable on return (msync): pages, in any order until then */
	UH_PMT_MARK = 4,	/* the test's own note (an acknowledgement), data = its bytes */
	UH_PMT_LENGTH = 5,	/* an fsync of the heap file returned: off = its length, durable */
};

struct uh_pmtrace_rec {
	uint32_t magic;
	uint32_t kind;
	uint32_t tid;		/* barriers order the flushes of one thread */
	uint32_t reserved;
	uint64_t off;		/* FLUSH/PERSIST: file offset, line-aligned */
	uint64_t len;		/* bytes of data after the record */
};

/* 1 when $UH_PMTRACE is set (checked once per process). */
int uh_pmtrace_on(void);
/* Append a record; data (len bytes) follows it. A no-op when off. */
void uh_pmtrace_write(uint32_t kind, uint64_t off, const void *data, uint64_t len);
/* A flush of [addr, addr + len) of a mapping of the heap file that starts
 * at base: recorded as the whole lines it covers, clipped to map_len. */
void uh_pmtrace_flush(const char *base, uint64_t map_len, const void *addr, uint64_t len,
		      uint32_t kind);

#endif /* UH_PMTRACE_H */
