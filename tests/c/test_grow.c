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
 * Arenas are not placed in the extension yet: this covers the file, the
 * header's words, heapd's and the clients' mappings and the RPC.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

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
		uh_off o = 0, prev = 0;
		int rc = uh_begin(h);
		for (int i = 0; rc == 0 && i < 100; i++) {
			rc = uh_alloc(h, cls, &o);
			if (rc == 0)
				rc = uh_set_i64(h, o, 0, first + i);
			if (rc == 0)
				rc = uh_set_ref(h, o, 1, prev);
			prev = o;
		}
		if (rc == 0)
			rc = uh_root_set(h, name, prev);
		if (rc == 0)
			rc = uh_commit(h);
		if (rc == 0)
			return 0;
		if (uh_in_block(h))
			uh_abort(h);
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

	create_refused("8M", "below");
	create_refused("16G", "too big");
	th_heapd_cleanup(&d);
	return th_summary("test_grow");
}
