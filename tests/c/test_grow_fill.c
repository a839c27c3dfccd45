/*
 * test_grow_fill.c -- several processes fill a heap that grows while they
 * run (FORMAT.md 1.1): a 16M heap that may grow to 384M, three writers
 * (prog_grow_fill write) publish blocks of 200 records until their
 * arenas need well over 256 MiB, while a read-only reader (prog_grow_fill
 * read), connected before any growth, follows and checks every block as
 * it is published. No process sees an error; every acknowledged block is
 * there with its content; the heap has grown to at least 256 MiB by
 * itself; heapctl check finds it sound. Then this process's writer,
 * attached before the fill, fills it to its maximum and meets a HeapFull
 * that names the limit and --max-size; the blocks of one writer dropped
 * and a GC cycle run, it publishes as many again in the space freed.
 * Logs live in the pool (FORMAT.md 1.1): --log-size 256K leaves room in
 * the 16M pool for the five writers' logs (heapd's collector, three
 * writers, this process) beside the quarter arenas may take there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

#define MIB (1ull << 20)
#define WRITERS 3
#define BLOCKS "7600"	/* per writer: 7600 x 200 x 64 bytes ~ 93 MiB */

static struct th_heapd d;

static pid_t spawn(const char *mode, const char *a, const char *b)
{
	char *argv[] = { (char *)th_bin("prog_grow_fill"), d.sock, (char *)mode, (char *)a,
			 (char *)b, NULL };
	return th_spawn(argv, NULL);
}

/* Run one prog_grow_fill to its end; its exit code, its output in out. */
static int run(const char *mode, const char *a, const char *b, char *out, size_t len)
{
	char *argv[] = { (char *)th_bin("prog_grow_fill"), d.sock, (char *)mode, (char *)a,
			 (char *)b, NULL };
	return th_run_capture(argv, out, len);
}

static void fill_together(void)
{
	pid_t w[WRITERS], r;
	char id[8], done[600];

	r = spawn("read", "3", d.dir);
	TH_CHECK(r > 0);
	for (int i = 0; i < WRITERS; i++) {	/* bound: WRITERS */
		snprintf(id, sizeof(id), "%d", i);
		w[i] = spawn("write", id, BLOCKS);
		TH_CHECK(w[i] > 0);
	}
	for (int i = 0; i < WRITERS; i++) {	/* bound: WRITERS */
		int rc = th_wait_exit_timeout(w[i], 600000);
		TH_CHECK_EQ(rc, 0);
		if (rc == -2)
			th_kill(w[i]);
	}
	snprintf(done, sizeof(done), "%s/done", d.dir);
	FILE *f = fopen(done, "w");
	TH_CHECK(f != NULL);
	if (f)
		fclose(f);
	int rc = th_wait_exit_timeout(r, 600000);
	TH_CHECK_EQ(rc, 0);
	if (rc == -2)
		th_kill(r);
}

/* This process's own writer, attached before the fill (its session log
 * is in the pool from the start): blocks of 100 records under "t.<k>"
 * until the heap is full or <blocks> are published; how many. */
static uint32_t cls;

static int publish_until(uh_heap *h, int blocks, int *rc)
{
	char name[32];
	int k = 0;
	for (*rc = 0; k < blocks; k++) {	/* bound: blocks */
		uh_off o = 0, prev = 0;
		snprintf(name, sizeof(name), "t.%d", k);
		*rc = uh_begin(h);
		for (int i = 0; *rc == 0 && i < 100; i++) {	/* bound: 100 records */
			*rc = uh_alloc(h, cls, &o);
			if (*rc == 0)
				*rc = uh_set_ref(h, o, 1, prev);
			prev = o;
		}
		if (*rc == 0)
			*rc = uh_root_set(h, name, prev);
		if (*rc == 0)
			*rc = uh_commit(h);
		if (*rc) {
			if (uh_in_block(h))
				uh_abort(h);
			break;
		}
	}
	return k;
}

int main(void)
{
	static char out[16384];
	uh_heap *h = NULL;
	int rc = 0;

	if (th_heapd_start(&d, "--size 16M --max-size 384M --log-size 256K") != 0) {
		th_fail(__FILE__, __LINE__, "heapd did not start");
		return th_summary("test_grow_fill");
	}
	TH_CHECK_RC(th_connect(&d, 0, &h));
	uh_field_spec f[] = { { "value", UH_T_I64, 0 }, { "next", UH_T_REF, 0 },
			      { "a", UH_T_I64, 0 }, { "b", UH_T_I64, 0 },
			      { "c", UH_T_I64, 0 }, { "d", UH_T_I64, 0 } };
	TH_CHECK_RC(uh_class_register(h, "GrowFill", f, 6, &cls));
	fill_together();
	uint64_t size = th_status_u64(&d, "heap_size");
	printf("heap grew to %llu MiB\n", (unsigned long long)(size / MIB));
	TH_CHECK(size >= 256 * MIB);
	/* A last pass of a reader that starts now, after the growth. */
	TH_CHECK_EQ(run("read", "3", d.dir, out, sizeof(out)), 0);
	if (!strstr(out, "read 22800"))
		th_fail(__FILE__, __LINE__, "reader after the fill: %s", out);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);

	/* To the maximum: HeapFull names the limit and the option. */
	int n = publish_until(h, 1 << 30, &rc);
	TH_CHECK_EQ(rc, UH_ENOSPC);
	printf("%d more blocks, then: %s\n", n, uh_errmsg());
	if (!strstr(uh_errmsg(), "maximum size") || !strstr(uh_errmsg(), "384 MiB") ||
	    !strstr(uh_errmsg(), "--max-size"))
		th_fail(__FILE__, __LINE__, "HeapFull at the maximum says: %s", uh_errmsg());
	TH_CHECK_EQ(th_status_u64(&d, "heap_size"), 384 * MIB);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);

	/* Space freed is reused: writer 0's blocks dropped (by this
	 * process), a cycle, and as many blocks again. */
	char name[32];
	for (int k = 0; k < 7600; k++) {	/* bound: writer 0's blocks */
		snprintf(name, sizeof(name), "w0.%d", k);
		TH_CHECK_RC(uh_root_del(h, name));
	}
	TH_CHECK_EQ(th_heapctl(&d, "gc --wait", out, sizeof(out)), 0);
	for (int k = 0; k < n; k++) {	/* bound: the blocks published above */
		snprintf(name, sizeof(name), "t.%d", k);
		TH_CHECK_RC(uh_root_del(h, name));
	}
	int again = publish_until(h, 15000, &rc);	/* writer 0 had 7600 x 200 */
	TH_CHECK_RC(rc);
	TH_CHECK_EQ(again, 15000);
	if (again != 15000)	/* what the cycles the leases ran found */
		th_heapd_log_tail(&d, 6000);
	TH_CHECK_EQ(th_heapctl(&d, "check", out, sizeof(out)), 0);
	uh_disconnect(h);
	th_heapd_cleanup(&d);
	return th_summary("test_grow_fill");
}
