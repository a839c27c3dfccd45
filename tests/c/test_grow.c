/*
 * test_grow.c -- a heap that grows past its libpmemobj pool (FORMAT.md
 * 1.1) on heapctl grow, while a client runs: a 16M heap created with
 * --max-size 64M grows to 40M; the client that connected before goes on
 * committing and reading, a new one maps the grown file, heapd restarts on
 * it (and the first client re-attaches), a growth past --max-size fails
 * naming the limit, a file left longer than the header says (a growth that
 * did not publish) is cut back at the next start and a shorter one is
 * refused, heapctl check finds the heap sound, and --max-size is checked
 * at creation.
 *
 * Then arenas in the extension: on a 16M heap grown to 40M, a writer and
 * a read-only reader, both connected before the growth, see the writer's
 * blocks fill the pool and then the extension (the writer maps the new
 * part when heapd leases it an arena there, the reader when a reference
 * leads there) until the heap is full; every block is there, also after
 * a restart, and heapctl check finds the heap sound; the space of dropped
 * blocks is reused. And growth on demand: a writer fills a 16M heap that
 * may grow to 64M with no heapctl grow, and meets HeapFull naming the
 * limit only at 64M. And a file system that fills first: HeapFull says so.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "chain_block.h"

#define MIB (1ull << 20)

static struct th_heapd d;
static uint32_t cls;

static uint64_t file_size(void)
{
	struct stat st;
	return stat(d.heap, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* One block of 100 records, value first..first+99, as root name. */
static int publish(uh_heap *h, const char *name, int64_t first)
{
	for (int attempt = 0; attempt < 5; attempt++) {	/* a restart ends one block */
		int rc = chain_block(h, cls, name, 100, first);
		if (rc != UH_ECONFLICT)
			return rc;
	}
	return UH_ECONFLICT;
}

/* The 100 records of root name hold first+99 .. first. */
static void check(uh_heap *h, const char *name, int64_t first)
{
	uh_off o = 0;
	int64_t v = 0, n = 0;
	TH_CHECK_RC(uh_root_get(h, name, &o));
	while (o && n <= 100) {
		TH_CHECK_RC(uh_get_i64(h, o, 0, &v));
		TH_CHECK_EQ(v, first + 99 - n);
		n++;
		TH_CHECK_RC(uh_get_ref(h, o, 1, &o));
	}
	TH_CHECK_EQ(n, 100);
}

static void grow_refused(const char *args, const char *words)
{
	static char out[4096];
	int rc = th_heapctl(&d, args, out, sizeof(out));
	TH_CHECK(rc == 1);
	if (!strstr(out, words))
		th_fail(__FILE__, __LINE__, "heapctl %s: no \"%s\" in: %s", args, words, out);
}

static void create_refused(const char *extra, const char *words)
{
	static char out[4096];
	char path[700];
	snprintf(path, sizeof(path), "%s/refused.uh", d.dir);
	char *argv[] = { (char *)th_bin("heapd"), "--heap", path, "--socket", d.sock,
			 "--create", "--size", "16M", "--max-size", (char *)extra, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));
	TH_CHECK(rc > 0 && rc < 128);
	if (!strstr(out, words))
		th_fail(__FILE__, __LINE__, "--max-size %s: no \"%s\" in: %s", extra, words, out);
	TH_CHECK(access(path, F_OK) != 0);
}

static void root_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "b%d", i);
}

static char full_msg[1024];	/* what the last fill's HeapFull said */

/* Blocks of 100 records from a writer until the heap is full; how many. */
static int fill(uh_heap *w)
{
	char name[32];
	int n = 0, rc = 0;
	for (; n < 40000; n++) {	/* bound: a 40M heap holds ~10k blocks */
		root_name(name, sizeof(name), n);
		if ((rc = publish(w, name, (int64_t)n * 100)) != 0)
			break;
	}
	TH_CHECK_EQ(rc, UH_ENOSPC);
	snprintf(full_msg, sizeof(full_msg), "%s", uh_errmsg());
	printf("block %d: %s\n", n, full_msg);
	return n;
}

/* Every block dropped, the writer gone (its arenas back to heapd), a GC
 * cycle: the arenas it emptied are freed, those in the extension by
 * clearing their chunks' bits, and a new writer fills about as much. */
static int reuse(uh_heap **w, int n)
{
	static char out[8192];
	char name[32];
	for (int i = 0; i < n; i++) {	/* bound: the blocks published */
		root_name(name, sizeof(name), i);
		TH_CHECK_RC(uh_root_del(*w, name));
	}
	uh_disconnect(*w);
	*w = NULL;
	TH_CHECK_EQ(th_heapctl(&d, "gc --wait", out, sizeof(out)), 0);
	TH_CHECK_RC(th_connect(&d, 0, w));
	if (!*w)
		return 0;
	int n2 = fill(*w);
	printf("%d blocks again after the cycle\n", n2);
	TH_CHECK(n2 > n * 3 / 4);
	root_name(name, sizeof(name), n2 - 1);
	check(*w, name, (int64_t)(n2 - 1) * 100);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	return n2;
}

static void extension(void)
{
	uh_heap *w = NULL, *r = NULL;
	static char out[8192];
	char name[32];
	uh_off o = 0;

	TH_CHECK_RC(th_connect(&d, 0, &w));
	TH_CHECK_RC(th_connect(&d, UH_READONLY, &r));
	if (!w || !r)
		return;
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };
	TH_CHECK_RC(uh_class_register(w, "GrowRec", f, 2, &cls));
	TH_CHECK_EQ(th_heapctl(&d, "grow 40M", out, sizeof(out)), 0);
	int n = fill(w), k = 0;
	/* The first block past the pool, in an arena of the extension (24M
	 * of the 40M): the later blocks, more than a third of all, are there. */
	for (; k < n; k++) {	/* bound: the blocks published */
		root_name(name, sizeof(name), k);
		if (uh_root_get(w, name, &o) != 0 || UH_REF_OFFSET(o) >= 16 * MIB)
			break;
	}
	printf("%d blocks, from block %d past the pool\n", n, k);
	TH_CHECK(k > 0 && k < n && n - k > n / 3);
	for (int i = 0; i < n; i++) {	/* bound: the blocks published */
		root_name(name, sizeof(name), i);
		check(r, name, (int64_t)i * 100);
	}
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	n = reuse(&w, n);
	/* A restart recovers a heap whose arenas lie in both parts (the
	 * read-only reader re-attaches: a writer would need a session log,
	 * and the pool of a full heap has no room for one). */
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	for (int i = 0; i < n; i += 97) {	/* bound: the blocks published */
		root_name(name, sizeof(name), i);
		check(r, name, (int64_t)i * 100);
	}
	root_name(name, sizeof(name), n - 1);
	check(r, name, (int64_t)(n - 1) * 100);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	uh_disconnect(r);
	uh_disconnect(w);
}

/* A writer that has filled the heap (fill) with the blocks of GrowRec
 * records, *n of them; NULL if it could not connect. */
static uh_heap *filled(int *n)
{
	uh_heap *w = NULL;
	*n = 0;
	TH_CHECK_RC(th_connect(&d, 0, &w));
	if (!w)
		return NULL;
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };
	TH_CHECK_RC(uh_class_register(w, "GrowRec", f, 2, &cls));
	*n = fill(w);
	return w;
}

/* Every one of the n blocks is there, and heapctl check finds the heap sound. */
static void all_there(uh_heap *w, int n)
{
	static char out[8192];
	char name[32];
	for (int i = 0; i < n; i++) {	/* bound: the blocks published */
		root_name(name, sizeof(name), i);
		check(w, name, (int64_t)i * 100);
	}
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
}

/* Growth on demand: a 16M heap that may grow to 64M, filled by a writer
 * with no heapctl grow, grows by itself (a GC cycle first, then a
 * doubling) to its maximum; the lease that finds it there fails with
 * HeapFull naming the limit and --max-size; every block is there. */
static void on_demand(void)
{
	int n;
	uh_heap *w = filled(&n);
	if (!w)
		return;
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 64 * MIB);
	TH_CHECK_EQ(file_size(), 64 * MIB);
	if (!strstr(full_msg, "maximum size") || !strstr(full_msg, "64 MiB") ||
	    !strstr(full_msg, "--max-size"))
		th_fail(__FILE__, __LINE__, "HeapFull at the maximum says: %s", full_msg);
	all_there(w, n);
	uh_disconnect(w);
}

/* A full file system (heapd's hook UNIHEAP_GROW_FS_ROOM: room for 40M of
 * the heap file): a heap that may grow to 64M grows past its last
 * doubling that fits (32M) by smaller steps, to what fits; the lease that
 * needs more fails with HeapFull saying the file system is full, not
 * the maximum size; the file is as long as the heap
 * says, every block is there, the heap is sound, and the space of dropped
 * blocks is used again. */
static void fs_full(void)
{
	int n;
	uh_heap *w = filled(&n);
	if (!w)
		return;
	uint64_t size = th_status_u64(&d, "heap_size");
	TH_CHECK(size > 32 * MIB && size <= 40 * MIB);	/* past the last doubling that fit */
	TH_CHECK_EQ(file_size(), size);
	if (!strstr(full_msg, "file system") || strstr(full_msg, "maximum size"))
		th_fail(__FILE__, __LINE__, "HeapFull on a full file system says: %s", full_msg);
	all_there(w, n);
	reuse(&w, n);
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), size);
	uh_disconnect(w);
}

int main(void)
{
	uh_heap *h1 = NULL, *h2 = NULL;
	static char out[8192];

	if (th_heapd_start(&d, "--size 16M --max-size 64M") != 0) {
		th_fail(__FILE__, __LINE__, "heapd did not start");
		return th_summary("test_grow");
	}
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 16 * MIB);
	TH_CHECK_EQ(th_status_u64(&d, "pool_size"), 16 * MIB);
	TH_CHECK_EQ(th_status_u64(&d, "max_size"), 64 * MIB);
	TH_CHECK_RC(th_connect(&d, 0, &h1));
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 } };
	TH_CHECK_RC(uh_class_register(h1, "GrowRec", f, 2, &cls));
	TH_CHECK_RC(publish(h1, "before", 1000));

	/* 40M: whole 2 MiB chunks past the 16M pool. */
	TH_CHECK_EQ(th_heapctl(&d, "grow 39M", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 40 * MIB);
	TH_CHECK_EQ(file_size(), 40 * MIB);
	TH_CHECK_EQ(th_heapctl(&d, "grow 10M", out, sizeof(out)), 0);	/* no change */
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 40 * MIB);

	/* The client of before the growth goes on; a new one maps 40M. */
	TH_CHECK_RC(publish(h1, "during", 2000));
	check(h1, "before", 1000);
	TH_CHECK_RC(th_connect(&d, 0, &h2));
	uh_info in;
	TH_CHECK_RC(uh_heap_info(h2, &in));
	TH_CHECK_EQ(in.heap_size, 40 * MIB);
	check(h2, "before", 1000);
	check(h2, "during", 2000);

	grow_refused("grow 65M", "maximum size");

	/* A growth whose size was never published leaves the file longer
	 * than the header says: the next start cuts it back. */
	th_heapd_stop(&d);
	TH_CHECK(truncate(d.heap, (off_t)(50 * MIB)) == 0);
	TH_CHECK_EQ(th_heapd_start(&d, NULL), 0);
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 40 * MIB);
	TH_CHECK_EQ(file_size(), 40 * MIB);
	check(h2, "during", 2000);

	TH_CHECK_EQ(th_heapctl(&d, "grow 64M", out, sizeof(out)), 0);
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 64 * MIB);
	grow_refused("grow 66M", "maximum size");

	/* A restart opens the grown heap; the first client re-attaches. */
	TH_CHECK_EQ(th_heapd_restart(&d), 0);
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 64 * MIB);
	TH_CHECK_RC(publish(h1, "after", 3000));
	check(h1, "during", 2000);
	check(h2, "after", 3000);
	uh_disconnect(h1);
	uh_disconnect(h2);

	/* A file shorter than the header says is refused (truncated). */
	th_heapd_stop(&d);
	TH_CHECK(truncate(d.heap, (off_t)(60 * MIB)) == 0);
	TH_CHECK(th_heapd_start(&d, NULL) != 0);
	TH_CHECK(truncate(d.heap, (off_t)(64 * MIB)) == 0);
	TH_CHECK_EQ(th_heapd_start(&d, NULL), 0);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	th_heapd_stop(&d);
	TH_CHECK_EQ(file_size(), 64 * MIB);

	th_heapd_cleanup(&d);
	memset(&d, 0, sizeof(d));
	if (th_heapd_start(&d, "--size 16M --max-size 40M") == 0)
		extension();
	else
		th_fail(__FILE__, __LINE__, "heapd did not start");
	th_heapd_cleanup(&d);
	memset(&d, 0, sizeof(d));
	if (th_heapd_start(&d, "--size 16M --max-size 64M") == 0)
		on_demand();
	else
		th_fail(__FILE__, __LINE__, "heapd did not start");

	th_heapd_cleanup(&d);
	memset(&d, 0, sizeof(d));
	setenv("UNIHEAP_GROW_FS_ROOM", "41943040", 1);	/* 40M */
	int started = th_heapd_start(&d, "--size 16M --max-size 64M") == 0;
	unsetenv("UNIHEAP_GROW_FS_ROOM");
	if (started)
		fs_full();
	else
		th_fail(__FILE__, __LINE__, "heapd did not start");

	create_refused("8M", "below");
	create_refused("16G", "too big");
	th_heapd_cleanup(&d);
	return th_summary("test_grow");
}
