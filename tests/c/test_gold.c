/*
 * test_gold.c -- golden heap files (tests/gold/v<N>).
 *
 *  1. regenerate: a fresh heap (--size 32M, durability memory) filled by
 *     prog_gold_gen, checked by prog_gold_check, so generator and checker
 *     agree with today's library;
 *  2. each checked-in tests/gold/v<N>/basic.heap.gz, gunzipped to a temp
 *     dir and opened (not created) by today's heapd, checked by the same
 *     prog_gold_check: today's code still reads what every version wrote.
 *     heapd upgrades the v1, v2 and v3 files to version 4 in place when it
 *     opens them.
 *  3. maps: tests/gold/v2/maps.heap.gz holds hash maps and sorted maps
 *     written by the format 2 code (prog_gold_maps.c): checked, changed
 *     (old nodes and entries meet the encodings of today), checked again
 *     and after a restart; and the same on a heap today's code wrote.
 *
 * UH_GOLD_REGEN=1 writes the heap of step 1 over the checked-in file of
 * the current version (gzip -9 -n) before step 2: only do that when the
 * format changed, and bump the version if an old file can no longer be
 * read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

#define GOLD_ARGS "--size 32M"

#define GOLD_VERSION_NOW 4	/* what regenerate() writes */

/* tests/gold/v<version>/<set>.heap.gz next to this source file. */
static void gold_path(char *buf, size_t len, int version, const char *set)
{
	const char *src = __FILE__;
	const char *slash = strrchr(src, '/');
	int dirlen = slash ? (int)(slash - src) : 1;

	snprintf(buf, len, "%.*s/../gold/v%d/%s.heap.gz", dirlen, slash ? src : ".",
		 version, set);
}

static int sh(const char *cmd)
{
	static char out[4096];
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));

	if (rc != 0)
		fprintf(stderr, "`%s` exit %d: %s\n", cmd, rc, out);
	return rc;
}

static int run_check(struct th_heapd *d, const char *what)
{
	static char out[16384];
	char *argv[] = { (char *)th_bin("prog_gold_check"), "--socket", d->sock, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));

	printf("%s: %s", what, out);
	if (rc != 0)
		th_fail(__FILE__, __LINE__, "%s: prog_gold_check exit %d", what, rc);
	else
		th_passed++;
	return rc;
}

static void regenerate(void)
{
	static char out[4096];
	struct th_heapd d = { 0 };
	char *argv[] = { (char *)th_bin("prog_gold_gen"), "--socket", d.sock, NULL };
	char cmd[2400];

	if (th_heapd_start(&d, GOLD_ARGS) != 0) {
		th_fail(__FILE__, __LINE__, "heapd --create " GOLD_ARGS " failed");
		return;
	}
	argv[2] = d.sock;
	if (th_run_capture(argv, out, sizeof(out)) != 0) {
		th_fail(__FILE__, __LINE__, "prog_gold_gen: %s", out);
		th_heapd_cleanup(&d);
		return;
	}
	run_check(&d, "regenerated heap");
	th_heapd_stop(&d);
	if (getenv("UH_GOLD_REGEN") && !strcmp(getenv("UH_GOLD_REGEN"), "1")) {
		char gz[1024];
		gold_path(gz, sizeof(gz), GOLD_VERSION_NOW, "basic");
		snprintf(cmd, sizeof(cmd), "gzip -9 -n -c '%s' > '%s'", d.heap, gz);
		TH_CHECK(sh(cmd) == 0);
		printf("wrote %s\n", gz);
	}
	/* Reopen it once: a heap heapd wrote and closed checks the same. */
	if (th_heapd_start(&d, NULL) == 0)
		run_check(&d, "regenerated heap, reopened");
	else
		th_fail(__FILE__, __LINE__, "reopen of the regenerated heap failed");
	th_heapd_cleanup(&d);
}

/* Unpack tests/gold/v<version>/<set>.heap.gz into a fresh folder and start
 * heapd on it (opened, not created). 0 when heapd runs. */
static int unpack(int version, const char *set, struct th_heapd *d)
{
	char gold_gz[1024];
	char tmpl[] = "/tmp/uniheap-gold-XXXXXX";
	char cmd[2400];
	const char *tmp = getenv("TMPDIR");
	char dir[512];

	gold_path(gold_gz, sizeof(gold_gz), version, set);
	if (access(gold_gz, R_OK) != 0) {
		th_fail(__FILE__, __LINE__, "%s: %s (regenerate: UH_GOLD_REGEN=1 test_gold)",
			gold_gz, strerror(errno));
		return -1;
	}
	if (tmp && *tmp && strlen(tmp) < 60) {
		snprintf(dir, sizeof(dir), "%s/uniheap-gold-XXXXXX", tmp);
	} else {
		snprintf(dir, sizeof(dir), "%s", tmpl);
	}
	if (!mkdtemp(dir)) {
		th_fail(__FILE__, __LINE__, "mkdtemp %s: %s", dir, strerror(errno));
		return -1;
	}
	/* The harness adopts the dir (and removes it at cleanup). */
	snprintf(d->dir, sizeof(d->dir), "%s", dir);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s' > '%s/heap.uh'", gold_gz, dir);
	if (sh(cmd) != 0) {
		th_fail(__FILE__, __LINE__, "gunzip %s failed", gold_gz);
		rmdir(dir);
		return -1;
	}
	if (th_heapd_start(d, NULL) != 0) {
		th_fail(__FILE__, __LINE__, "heapd refused the golden heap %s", gold_gz);
		return -1;
	}
	return 0;
}

static void checked_in(int version)
{
	struct th_heapd d = { 0 };
	char what[64];

	if (unpack(version, "basic", &d) == 0) {
		snprintf(what, sizeof(what), "golden heap v%d", version);
		run_check(&d, what);
		/* And once more after this heapd's own recovery wrote to it. */
		snprintf(what, sizeof(what), "golden heap v%d, reopened", version);
		if (th_heapd_restart(&d) == 0)
			run_check(&d, what);
		else
			th_fail(__FILE__, __LINE__, "heapd restart on the golden heap failed");
	}
	th_heapd_cleanup(&d);
}

/* prog_gold_maps in one mode ("--check" takes the phase). */
static int run_maps(struct th_heapd *d, const char *mode, const char *phase, const char *what)
{
	static char out[16384];
	char *argv[] = { (char *)th_bin("prog_gold_maps"), "--socket", d->sock, (char *)mode,
			 (char *)phase, NULL };
	int rc = th_run_capture(argv, out, sizeof(out));

	printf("%s: %s", what, out);
	if (rc != 0)
		th_fail(__FILE__, __LINE__, "%s: prog_gold_maps %s exit %d", what, mode, rc);
	else
		th_passed++;
	return rc;
}

/* Phase 0 is there: check it, change it into phase 1, check that, and
 * again after a restart (recovery GC walks whatever encodings it holds). */
static void maps_steps(struct th_heapd *d, const char *what)
{
	char w[128];

	snprintf(w, sizeof(w), "%s, as written", what);
	if (run_maps(d, "--check", "0", w) != 0)
		return;
	snprintf(w, sizeof(w), "%s, changed", what);
	if (run_maps(d, "--modify", NULL, w) != 0 || run_maps(d, "--check", "1", w) != 0)
		return;
	snprintf(w, sizeof(w), "%s, changed and reopened", what);
	if (th_heapd_restart(d) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd restart failed", what);
		return;
	}
	run_maps(d, "--check", "1", w);
}

static void maps(void)
{
	struct th_heapd d = { 0 };

	if (th_heapd_start(&d, "--size 64M") != 0) {
		th_fail(__FILE__, __LINE__, "heapd --create --size 64M failed");
	} else if (run_maps(&d, "--gen", NULL, "maps written today") == 0) {
		maps_steps(&d, "maps written today");
	}
	th_heapd_cleanup(&d);
	memset(&d, 0, sizeof(d));
	if (unpack(2, "maps", &d) == 0)
		maps_steps(&d, "golden maps v2");
	th_heapd_cleanup(&d);
}

int main(void)
{
	regenerate();
	for (int v = 1; v <= GOLD_VERSION_NOW; v++)
		checked_in(v);
	maps();
	return th_summary("test_gold");
}
