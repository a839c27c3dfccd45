/*
 * grow.c -- growing the heap file past its libpmemobj pool (FORMAT.md
 * 1.1): the file is made longer with every block allocated, synced, mapped
 * into heapd's view, and only then is the new size published in the
 * header, in one libpmemobj transaction.
 *
 * Invariants: hd->heap_size is the header's cur_size, and heapd's view
 * maps [0, heap_size); the file is never shorter than cur_size, and a
 * longer file is the trace of a growth that did not publish (hd_open
 * trims it). Test hooks: UNIHEAP_GROW_CRASH_AT (growcrash.c) kills heapd
 * after each step; UNIHEAP_GROW_FS_ROOM (fallocate_file). Caller holds
 * hd->mu: every lease takes it, so no arena is placed while the size
 * moves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

/* Growth goes in multiples of UH_GROW_ALIGN past the extension's start,
 * the last one cut at max_size. */
static uint64_t grow_target(const struct uh_hdr *h, uint64_t want)
{
	uint64_t max = uh_hdr_max_size(h), ext = hd_ext_start(h);
	uint64_t t = want <= ext ? ext : ext + UH_ALIGN_UP(want - ext, UH_GROW_ALIGN);
	return t < max ? t : max;
}

/* posix_fallocate of [from, to). Test hook: UNIHEAP_GROW_FS_ROOM=BYTES
 * gives the heap file a file system with room for BYTES of it only: a
 * growth past that fails as posix_fallocate does on a full file system
 * (ENOSPC), so a test meets that HeapFull without filling a real one. */
static int fallocate_file(int fd, uint64_t from, uint64_t to)
{
	const char *room = getenv("UNIHEAP_GROW_FS_ROOM");
	if (room && to > strtoull(room, NULL, 10))
		return ENOSPC;
	return posix_fallocate(fd, (off_t)from, (off_t)(to - from));
}

/* Steps 1-3 of FORMAT.md 1.1: the blocks exist, the length is durable,
 * heapd's view covers them. The mapping starts at the page that holds
 * the old end (a pool's size need not be a page multiple) and replaces
 * the view's mapping of that page by the same bytes. */
static int extend_file(struct hd *hd, uint64_t from, uint64_t to, char *err, size_t errlen)
{
	char a[32];
	int fd = open(hd->path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return hd_err(err, errlen, UH_EIO, "cannot open %s: %s", hd->path, strerror(errno));
	int e = fallocate_file(fd, from, to);
	if (e) {
		close(fd);
		if (e == ENOSPC || e == EDQUOT)
			return hd_err(err, errlen, UH_ENOSPC, "heap full: the file system of %s has "
				      "no room to grow it to %s", hd->path,
				      hd_fmt_bytes(a, sizeof(a), to));
		return hd_err(err, errlen, UH_EIO, "cannot grow %s: %s", hd->path, strerror(e));
	}
	hd_grow_crash_point(hd, "fallocated");
	if (hd->hdr->durability != UH_DUR_MEMORY && fsync(fd) != 0) {
		e = errno;
		close(fd);
		return hd_err(err, errlen, UH_EIO, "cannot grow %s: fsync: %s", hd->path,
			      strerror(e));
	}
	hd_grow_crash_point(hd, "synced");
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t at = from / page * page;
	void *v = mmap(hd->base + at, (size_t)(to - at), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED, fd, (off_t)at);
	e = errno;
	close(fd);
	if (v == MAP_FAILED)
		return hd_err(err, errlen, UH_EIO, "cannot map the grown part of %s: %s", hd->path,
			      strerror(e));
	return 0;
}

/* Step 4: the new size, durable and visible. */
static int publish(struct hd *hd, uint64_t to, char *err, size_t errlen)
{
	struct uh_hdr *h = hd->hdr;
	volatile int rc = 0;
	TX_BEGIN(hd->pop) {
		hd_tx_add(hd, &h->cur_size, sizeof(h->cur_size));
		__atomic_store_n(&h->cur_size, to, __ATOMIC_RELEASE);
		hd_grow_crash_point(hd, "publish_tx");
	} TX_ONABORT {
		rc = hd_err(err, errlen, UH_EIO, "cannot update the header of %s: %s", hd->path,
			    pmemobj_errormsg());
	} TX_END
	return rc;
}

int hd_grow_locked(struct hd *hd, uint64_t want, char *err, size_t errlen)
{
	char a[32], b[32];
	uint64_t from = hd->heap_size, max = uh_hdr_max_size(hd->hdr);
	if (want <= from)
		return 0;
	if (want > max)
		return hd_err(err, errlen, UH_ENOSPC,
			      "heap full: %s cannot grow to %s, its maximum size is %s (--max-size)",
			      hd->path, hd_fmt_bytes(a, sizeof(a), want),
			      hd_fmt_bytes(b, sizeof(b), max));
	uint64_t to = grow_target(hd->hdr, want);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = extend_file(hd, from, to, err, errlen);
	if (!rc) {
		hd_grow_crash_point(hd, "mapped");
		rc = publish(hd, to, err, errlen);
	}
	if (rc)
		return rc;
	hd_grow_crash_point(hd, "published");
	__atomic_store_n(&hd->heap_size, to, __ATOMIC_RELEASE);
	uh_arena_index_free(&hd->ix);
	uh_arena_index_init(&hd->ix, hd->base, hd->heap_size, hd->hdr);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Signed: tv_nsec of the end is below that of the start whenever a
	 * second boundary lies between them. */
	int64_t ns = (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 +
		     (int64_t)(t1.tv_nsec - t0.tv_nsec);
	hd->last_grow_us = (uint64_t)ns / 1000u;
	hd_log("info", "grow", "heap=%s from=%llu to=%llu max=%llu us=%llu", hd->path,
	       (unsigned long long)from, (unsigned long long)to, (unsigned long long)max,
	       (unsigned long long)hd->last_grow_us);
	return 0;
}

int hd_grow(struct hd *hd, uint64_t want, uint64_t *size, uint64_t *us, char *err,
	    size_t errlen)
{
	pthread_mutex_lock(&hd->mu);
	int rc = hd_grow_locked(hd, want, err, errlen);
	*size = hd->heap_size;
	*us = hd->last_grow_us;
	pthread_mutex_unlock(&hd->mu);
	return rc;
}
