/*
 * bench_sync_io.c -- what a durable barrier costs on a file system, by how
 * the pages were written: stores through a shared mapping then msync (what
 * uniheap's sync durability does: clients write the heap in place), against
 * pwrite then fdatasync (what LMDB's default does). No heapd: this measures
 * the file system, to tell the protocol's share of a sync-class YCSB figure
 * from the medium's.
 *
 *   bench_sync_io [DIR] [PAGES] [BARRIERS]
 *
 * DIR (default $TMPDIR, else /tmp) gets a 64 MiB file, written once whole
 * first (a heap in service: its blocks are allocated and written). Each
 * barrier dirties PAGES (default 3) pages at a pseudo-random place, then
 * makes them durable; BARRIERS (default 400, times BENCH_SCALE) of each kind.
 * Prints microseconds per barrier of each kind and their ratio; for the
 * mapping, also the share spent in the stores themselves (the page faults
 * that make a cleaned page writable again).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench_util.h"

#define FILE_BYTES (64ull << 20)
#define PAGE 4096ull

struct io {
	int fd;
	char *map;
	uint64_t npages;
};

static uint64_t page_at(uint64_t i, uint64_t pages, uint64_t npages)
{
	return (i * 7919u) % (npages - pages);
}

/* A barrier of the mapping: stores, then msync of their span. */
static uint64_t mapped(struct io *io, uint64_t i, uint64_t pages, uint64_t *store_ns)
{
	uint64_t first = page_at(i, pages, io->npages), t0 = bench_now_ns();
	for (uint64_t p = 0; p < pages; p++)	/* bound: pages */
		io->map[(first + p) * PAGE + i % PAGE] = (char)i;
	*store_ns += bench_now_ns() - t0;
	if (msync(io->map + first * PAGE, pages * PAGE, MS_SYNC) != 0)
		return 1;
	return 0;
}

/* A barrier of the file: pwrite each page, then fdatasync. */
static uint64_t written(struct io *io, uint64_t i, uint64_t pages)
{
	static char buf[PAGE];
	uint64_t first = page_at(i, pages, io->npages);
	memset(buf, (int)(i & 255), sizeof(buf));
	for (uint64_t p = 0; p < pages; p++)	/* bound: pages */
		if (pwrite(io->fd, buf, PAGE, (off_t)((first + p) * PAGE)) != (ssize_t)PAGE)
			return 1;
	return fdatasync(io->fd) != 0;
}

static int open_file(struct io *io, const char *path)
{
	static char chunk[1 << 20];
	io->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (io->fd < 0)
		return -1;
	for (uint64_t off = 0; off < FILE_BYTES; off += sizeof(chunk))	/* 64 chunks */
		if (pwrite(io->fd, chunk, sizeof(chunk), (off_t)off) != (ssize_t)sizeof(chunk))
			return -1;
	if (fdatasync(io->fd) != 0)
		return -1;
	io->map = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, io->fd, 0);
	io->npages = FILE_BYTES / PAGE;
	return io->map == MAP_FAILED ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	uint64_t pages = argc > 2 ? strtoull(argv[2], NULL, 10) : 3;
	uint64_t n = (uint64_t)((argc > 3 ? atof(argv[3]) : 400) * bench_scale_env());
	char path[4096];
	struct io io;

	if (pages == 0 || pages > 1024 || n == 0) {
		fprintf(stderr, "usage: bench_sync_io [DIR] [PAGES 1..1024] [BARRIERS]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/bench_sync_io.%d", dir, (int)getpid());
	if (open_file(&io, path) != 0) {
		fprintf(stderr, "bench_sync_io: %s: %s\n", path, strerror(errno));
		unlink(path);
		return 1;
	}
	uint64_t store_ns = 0, t0 = bench_now_ns(), bad = 0;
	for (uint64_t i = 0; i < n; i++)	/* bound: n */
		bad |= mapped(&io, i, pages, &store_ns);
	uint64_t map_ns = bench_now_ns() - t0;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++)	/* bound: n */
		bad |= written(&io, i + n, pages);
	uint64_t file_ns = bench_now_ns() - t0;
	munmap(io.map, FILE_BYTES);
	close(io.fd);
	unlink(path);
	if (bad) {
		fprintf(stderr, "bench_sync_io: msync, pwrite or fdatasync failed\n");
		return 1;
	}
	double m = map_ns / 1e3 / (double)n, f = file_ns / 1e3 / (double)n;
	printf("bench_sync_io: %s, %llu pages per barrier, %llu barriers of each kind\n", dir,
	       (unsigned long long)pages, (unsigned long long)n);
	printf("  stores through the mapping + msync: %8.1f us per barrier (%.1f us of it in "
	       "the stores)\n", m, store_ns / 1e3 / (double)n);
	printf("  pwrite + fdatasync:                 %8.1f us per barrier\n", f);
	printf("  mapping / pwrite:                   %8.2fx\n", m / f);
	return 0;
}
