/*
 * pmtrace_preload.c -- LD_PRELOAD library that records heapd's persists
 * in the power-loss trace (common/pmtrace.h).
 *
 * heapd persists in two ways: its run-time state (log replay, lock and
 * bitmap changes, recovery GC) through pmemobj_flush/pmemobj_drain, and
 * its metadata in libpmemobj transactions. Both end in libpmemobj's calls
 * into libpmem (pmem_flush, pmem_drain, pmem_memcpy, ... or pmem_msync on
 * a file that is not pmem), which go through the dynamic linker: this
 * library defines the same functions, records what they persist, and
 * calls the real ones. So the trace holds every persist of heapd,
 * including the inside of libpmemobj's transactions, in order with the
 * clients' ones, without a line of heapd changed.
 *
 * An fsync of the heap file (heapd's growth, FORMAT.md 1.1: posix_fallocate,
 * then fsync) is recorded as the file's length, durable from then on.
 *
 * Only ranges inside a shared mapping of the heap file ($UH_PMTRACE_HEAP)
 * are recorded: the copy-on-write mappings of heapd's probe child
 * (pmemobj_check, its trial transactions) never reach the file. Nothing
 * happens unless $UH_PMTRACE is set.
 */
#include <dlfcn.h>
#include <libpmem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmtrace.h"

#define MAX_MAPS 16

struct heap_map {
	char *start;
	uint64_t len;
	uint64_t file_off;
	int shared;
};

static struct heap_map maps[MAX_MAPS];
static int nmaps;
static pthread_mutex_t maps_mu = PTHREAD_MUTEX_INITIALIZER;

/* Re-read /proc/self/maps for the mappings of the heap file. */
static void load_maps(void)
{
	const char *heap = getenv("UH_PMTRACE_HEAP");
	struct stat st;
	char line[1024];
	FILE *f;

	nmaps = 0;
	if (!heap || stat(heap, &st) != 0 || !(f = fopen("/proc/self/maps", "r")))
		return;
	while (nmaps < MAX_MAPS && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off, ino;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s %lx %*s %lu", &s, &e, perms, &off, &ino) != 5 ||
		    ino != (unsigned long)st.st_ino)
			continue;
		maps[nmaps++] = (struct heap_map){ (char *)s, e - s, off, perms[3] == 's' };
	}
	fclose(f);
}

/* The mapping of the heap file that holds addr, or NULL. */
static const struct heap_map *map_of(const void *addr)
{
	const struct heap_map *m = NULL;

	pthread_mutex_lock(&maps_mu);
	for (int pass = 0; pass < 2 && !m; pass++) {
		if (pass)
			load_maps();	/* a mapping made since the last look */
		for (int i = 0; i < nmaps && !m; i++)
			if ((const char *)addr >= maps[i].start &&
			    (const char *)addr < maps[i].start + maps[i].len)
				m = &maps[i];
	}
	pthread_mutex_unlock(&maps_mu);
	return m;
}

static void record(const void *addr, size_t len, uint32_t kind)
{
	if (!uh_pmtrace_on())
		return;
	const struct heap_map *m = map_of(addr);
	if (!m || !m->shared)
		return;
	/* As file offsets: base = where file offset 0 would be mapped. */
	uh_pmtrace_flush(m->start - m->file_off, m->file_off + m->len, addr, len, kind);
}

static void barrier(void)
{
	uh_pmtrace_write(UH_PMT_BARRIER, 0, NULL, 0);
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

void pmem_flush(const void *addr, size_t len)
{
	REAL(pmem_flush)(addr, len);
	record(addr, len, UH_PMT_FLUSH);
}

void pmem_drain(void)
{
	REAL(pmem_drain)();
	barrier();
}

void pmem_persist(const void *addr, size_t len)
{
	REAL(pmem_persist)(addr, len);
	record(addr, len, UH_PMT_FLUSH);
	barrier();
}

void pmem_deep_flush(const void *addr, size_t len)
{
	REAL(pmem_deep_flush)(addr, len);
	record(addr, len, UH_PMT_FLUSH);
	barrier();
}

/* msync writes whole pages back and returns when they are durable. */
static void record_pages(const void *addr, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = (uintptr_t)addr & ~(page - 1);
	uintptr_t e = ((uintptr_t)addr + len + page - 1) & ~(page - 1);

	record((const void *)s, e - s, UH_PMT_PERSIST);
}

int pmem_msync(const void *addr, size_t len)
{
	int rc = REAL(pmem_msync)(addr, len);
	record_pages(addr, len);
	return rc;
}

int msync(void *addr, size_t len, int flags)
{
	int rc = REAL(msync)(addr, len, flags);
	if (flags & MS_SYNC)
		record_pages(addr, len);
	return rc;
}

/* The pmem_mem* functions store, flush (unless NOFLUSH) and drain
 * (unless NODRAIN). */
static void after_store(void *dest, size_t len, unsigned flags)
{
	if (flags & PMEM_F_MEM_NOFLUSH)
		return;
	record(dest, len, UH_PMT_FLUSH);
	if (!(flags & PMEM_F_MEM_NODRAIN))
		barrier();
}

void *pmem_memcpy(void *dest, const void *src, size_t len, unsigned flags)
{
	void *r = REAL(pmem_memcpy)(dest, src, len, flags);
	after_store(dest, len, flags);
	return r;
}

void *pmem_memmove(void *dest, const void *src, size_t len, unsigned flags)
{
	void *r = REAL(pmem_memmove)(dest, src, len, flags);
	after_store(dest, len, flags);
	return r;
}

void *pmem_memset(void *dest, int c, size_t len, unsigned flags)
{
	void *r = REAL(pmem_memset)(dest, c, len, flags);
	after_store(dest, len, flags);
	return r;
}

/* A growth's length is durable once fsync returns (FORMAT.md 1.1 step 2). */
int fsync(int fd)
{
	int rc = REAL(fsync)(fd);
	const char *heap = getenv("UH_PMTRACE_HEAP");
	struct stat st, hs;

	if (rc == 0 && uh_pmtrace_on() && heap && fstat(fd, &st) == 0 && stat(heap, &hs) == 0 &&
	    st.st_ino == hs.st_ino && st.st_dev == hs.st_dev)
		uh_pmtrace_write(UH_PMT_LENGTH, (uint64_t)st.st_size, NULL, 0);
	return rc;
}
