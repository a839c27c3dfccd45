/*
 * test_gold.c -- golden heap files (tests/gold/v<N>).
 *
 *  1. regenerate: a fresh heap (--size 32M, durability memory) filled by
 *     prog_gold_gen, checked by prog_gold_check, so generator and checker
 *     agree with today's library;
 *  2. each checked-in tests/gold/v<N>/basic.heap.gz, gunzipped to a temp
 *     dir and opened (not created) by today's heapd, checked by the same
 *     prog_gold_check: today's code still reads what every version wrote.
 *     heapd upgrades the v1 to v9 files to version 10 in place when it
 *     opens them (and adds the built-in classes and growth words they
 *     lack).
 *  3. maps: tests/gold/v2/maps.heap.gz holds hash maps and sorted maps
 *     written by the format 2 code (prog_gold_maps.c): checked, changed
 *     (old nodes and entries meet the encodings of today), checked again
 *     and after a restart; and the same on a heap today's code wrote,
 *     with online GC cycles every 2 MiB of arenas leased.
 *  3b. inline: tests/gold/v10/inline.heap.gz holds a hash map whose
 *     entries keep string and bytes values inline (prog_gold_inline.c):
 *     checked, changed, checked again and after a restart; first the same
 *     on a fresh heap, whose file UH_GOLD_REGEN=1 writes over it.
 *  4. pending: tests/gold/v3/pending.heap.gz and v4/pending.heap.gz were
 *     left by clients of the format 3 and format 4 code that died with one
 *     block COMMITTED but not applied and one still open
 *     (prog_gold_pending.c). Read from the file first: its version,
 *     exactly those two logs, the committed one's writes not in place yet.
 *     Then today's heapd must replay the one by its version's rules (its
 *     checksum: FNV-1a, the word sum), roll the other back and upgrade to
 *     10: prog_gold_pending --check finds exactly the committed state, also
 *     after a restart. The same on a heap today's code leaves that way.
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

#include "format.h"
#include "harness.h"

#define GOLD_ARGS "--size 32M"

#define GOLD_VERSION_NOW 10	/* what regenerate() writes */

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

/* Run one of the prog_gold_* programs (argv[0] from th_bin): its output
 * is shown, its exit status is a check of its own. */
static int run_prog(char *const argv[], const char *what)
{
	static char out[16384];
	int rc = th_run_capture(argv, out, sizeof(out));

	printf("%s: %s", what, out);
	if (rc != 0)
		th_fail(__FILE__, __LINE__, "%s: %s %s exit %d", what, argv[0],
			argv[3] ? argv[3] : "", rc);
	else
		th_passed++;
	return rc;
}

static int run_check(struct th_heapd *d, const char *what)
{
	char *argv[] = { (char *)th_bin("prog_gold_check"), "--socket", d->sock, NULL };

	return run_prog(argv, what);
}

/* With UH_GOLD_REGEN=1: the heap d wrote (heapd stopped) becomes the
 * checked-in tests/gold/v<now>/<set>.heap.gz. */
static void write_gold(const struct th_heapd *d, const char *set)
{
	char gz[1024], cmd[2400];

	if (!getenv("UH_GOLD_REGEN") || strcmp(getenv("UH_GOLD_REGEN"), "1"))
		return;
	gold_path(gz, sizeof(gz), GOLD_VERSION_NOW, set);
	snprintf(cmd, sizeof(cmd), "gzip -9 -n -c '%s' > '%s'", d->heap, gz);
	TH_CHECK(sh(cmd) == 0);
	printf("wrote %s\n", gz);
}

static void regenerate(void)
{
	static char out[4096];
	struct th_heapd d = { 0 };
	char *argv[] = { (char *)th_bin("prog_gold_gen"), "--socket", d.sock, NULL };

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
	write_gold(&d, "basic");
	/* Reopen it once: a heap heapd wrote and closed checks the same. */
	if (th_heapd_start(&d, NULL) == 0)
		run_check(&d, "regenerated heap, reopened");
	else
		th_fail(__FILE__, __LINE__, "reopen of the regenerated heap failed");
	th_heapd_cleanup(&d);
}

/* Unpack tests/gold/v<version>/<set>.heap.gz into a fresh folder as
 * d->heap, heapd not started. 0 when the file is there. */
static int unpack_file(int version, const char *set, struct th_heapd *d)
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
	snprintf(d->heap, sizeof(d->heap), "%s/heap.uh", dir);
	return 0;
}

/* The same, and start heapd on it (opened, not created). 0 when heapd
 * runs. */
static int unpack(int version, const char *set, struct th_heapd *d)
{
	if (unpack_file(version, set, d) != 0)
		return -1;
	if (th_heapd_start(d, NULL) != 0) {
		th_fail(__FILE__, __LINE__, "heapd refused the golden heap v%d/%s", version, set);
		return -1;
	}
	return 0;
}

/* Every heap heapd has opened has its growth words (FORMAT.md 2.2): one
 * that predates them is its pool and does not grow. */
static void check_size_words(const char *path, int version)
{
	size_t n;
	char *b = th_read_file(path, &n);
	long off = b ? th_find_uh_header(b, n) : -1;

	if (off < 0) {
		th_fail(__FILE__, __LINE__, "golden heap v%d: no header after heapd opened it",
			version);
	} else {
		const struct uh_hdr *h = (const struct uh_hdr *)(b + off);
		TH_CHECK_EQ(h->cur_size, h->heap_size);
		TH_CHECK_EQ(h->max_size, h->heap_size);
		TH_CHECK_EQ(h->chunk_map_off, 0);
		TH_CHECK_EQ(h->heap_size, n);
	}
	free(b);
}

static void checked_in(int version)
{
	struct th_heapd d = { 0 };
	char what[64];

	if (unpack(version, "basic", &d) == 0) {
		snprintf(what, sizeof(what), "golden heap v%d", version);
		run_check(&d, what);
		check_size_words(d.heap, version);
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
	char *argv[] = { (char *)th_bin("prog_gold_maps"), "--socket", d->sock, (char *)mode,
			 (char *)phase, NULL };

	return run_prog(argv, what);
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

	/* GC cycles every 2 MiB of arenas leased: they give back the arenas
	 * of the --gen session that the changes empty, and the --modify
	 * session, whose arena index still spans them, must find the large
	 * tables libpmemobj then places inside that memory (common/arena.c). */
	if (th_heapd_start(&d, "--size 64M --gc-every 2M") != 0) {
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

static int run_inline(struct th_heapd *d, const char *mode, const char *phase, const char *what)
{
	char *argv[] = { (char *)th_bin("prog_gold_inline"), "--socket", d->sock, (char *)mode,
			 (char *)phase, NULL };

	return run_prog(argv, what);
}

/* Phase 0 there: check, change to phase 1, check, and after a restart. */
static void inline_steps(struct th_heapd *d, const char *what)
{
	if (run_inline(d, "--check", "0", what) != 0 ||
	    run_inline(d, "--modify", NULL, what) != 0 || run_inline(d, "--check", "1", what) != 0)
		return;
	if (th_heapd_restart(d) != 0)
		th_fail(__FILE__, __LINE__, "%s: heapd restart failed", what);
	else
		run_inline(d, "--check", "1", what);
}

static void inline_maps(void)
{
	struct th_heapd d = { 0 };

	if (th_heapd_start(&d, GOLD_ARGS) != 0) {
		th_fail(__FILE__, __LINE__, "heapd --create " GOLD_ARGS " failed");
	} else if (run_inline(&d, "--gen", NULL, "inline map written today") == 0) {
		th_heapd_stop(&d);
		write_gold(&d, "inline");
		if (th_heapd_start(&d, NULL) == 0)
			inline_steps(&d, "inline map written today");
		else
			th_fail(__FILE__, __LINE__, "reopen of the inline map's heap failed");
	}
	th_heapd_cleanup(&d);
	memset(&d, 0, sizeof(d));
	if (unpack(GOLD_VERSION_NOW, "inline", &d) == 0)
		inline_steps(&d, "golden inline map v10");
	th_heapd_cleanup(&d);
}

/* What a heap file holds before any heapd recovered it, read from its
 * bytes (FORMAT.md 2.1, 7, 8.1, 8.2), so that the pending step cannot pass
 * on a file whose logs were already recovered. The fields read here sit
 * at the same offsets in versions 3 to 10. */
struct file_logs {
	uint32_t version;
	int committed, active, other;	/* logs of active sessions, by state */
	int unapplied;	/* WRITEs of committed logs whose data is not in place */
	int sum_ok;	/* committed logs whose checksum is FORMAT.md 8.3's */
};

/* The log checksum as FORMAT.md 8.3 words it, written from the text and
 * not from libuniheap's code, so that the format's rule and the code that
 * writes logs are checked against each other: the word sum, the lane sum
 * (versions 5 to 10) and FNV-1a (version 3). */
#define SPEC_M 0x9e3779b97f4a7c15ull

static uint64_t spec_word_sum(const unsigned char *p, uint64_t n, uint64_t h)
{
	for (uint64_t at = 0; at < n; at += 8) {	/* bound: n / 8 + 1 */
		uint64_t w = 0;
		for (uint64_t b = 0; b < 8 && at + b < n; b++)
			w |= (uint64_t)p[at + b] << (8 * b);
		h ^= w;
		h *= SPEC_M;
		h ^= h >> 29;
	}
	return h;
}

static uint64_t spec_lane_sum(const unsigned char *p, uint64_t n, uint64_t h)
{
	uint64_t lane[4], blocks = n / 32;

	if (n < 32)
		return spec_word_sum(p, n, h);
	for (uint64_t i = 0; i < 4; i++)
		lane[i] = h ^ (i * SPEC_M);
	for (uint64_t k = 0; k < blocks; k++)	/* bound: n / 32 */
		for (uint64_t i = 0; i < 4; i++)
			lane[i] = spec_word_sum(p + 32 * k + 8 * i, 8, lane[i]);
	h = spec_word_sum(p + 32 * blocks, n - 32 * blocks, lane[0]);
	for (int i = 1; i < 4; i++)
		h = spec_word_sum((const unsigned char *)&lane[i], 8, h);	/* little-endian */
	return h;
}

static uint64_t spec_piece(uint32_t version, const void *p, uint64_t n, uint64_t h)
{
	if (version == 3)
		return uh_fnv1a64(p, n, h);
	return version == 4 ? spec_word_sum(p, n, h) : spec_lane_sum(p, n, h);
}

/* The checksum of a log without extents (those of the pending heaps). */
static int spec_sum_ok(const char *b, size_t n, uint32_t version, const struct uh_log_hdr *log,
		       uint64_t log_size)
{
	const char *ents = (const char *)log + sizeof(*log);
	uint64_t h = spec_piece(version, &log->seq, 8, UH_FNV_INIT);

	if (log->next != 0 || log->nbytes > log_size - sizeof(*log))
		return 0;
	h = spec_piece(version, ents, log->nbytes, h);
	for (uint64_t at = 0; version > 3 && at + sizeof(struct uh_log_ent) <= log->nbytes;) {
		const struct uh_log_ent *e = (const void *)(ents + at);	/* bound: nbytes / 24 */
		at += sizeof(*e) + ((e->len + 7ull) & ~7ull);
		if (e->kind != UH_LE_ALLOC)
			continue;
		if (e->obj > n || e->arg < UH_OBJHDR_SIZE || e->arg > n - e->obj)
			return 0;
		const struct uh_objhdr *o = (const void *)(b + e->obj);
		uint32_t words[2] = { o->class_word, o->size | UH_OBJ_VALID };
		uint64_t payload = o->size & UH_OBJ_SIZE_MASK;
		if (payload > e->arg - UH_OBJHDR_SIZE)
			payload = e->arg - UH_OBJHDR_SIZE;
		h = spec_piece(version, words, 8, h);
		h = spec_piece(version, b + e->obj + UH_OBJHDR_SIZE, payload, h);
	}
	return h == log->checksum;
}

/* WRITE entries of the log area whose data differ from their target:
 * the block was not applied. */
static int count_unapplied(const char *b, size_t n, const struct uh_log_hdr *log,
			   uint64_t log_size)
{
	const char *p = (const char *)log + sizeof(*log);
	const char *end = p + (log->nbytes < log_size - sizeof(*log) ? log->nbytes : 0);
	int k = 0;

	while (end - p >= (long)sizeof(struct uh_log_ent)) {	/* bound: nbytes / 24 */
		const struct uh_log_ent *e = (const void *)p;
		uint64_t step = sizeof(*e) + ((e->len + 7ull) & ~7ull);	/* len is 0 but for WRITE */
		if (step > (uint64_t)(end - p))
			break;
		if (e->kind == UH_LE_WRITE && e->arg < n && e->len <= n - e->arg &&
		    memcmp(b + e->arg, e + 1, e->len) != 0)
			k++;
		p += step;
	}
	return k;
}

static void count_logs(const char *b, size_t n, const struct uh_hdr *h, struct file_logs *fl)
{
	const struct uh_session_ent *tab = (const void *)(b + h->session_tab_off);

	if (h->session_tab_off > n || (n - h->session_tab_off) / sizeof(*tab) < h->session_cap)
		return;
	for (uint32_t i = 1; i < h->session_cap; i++) {	/* bound: session_cap */
		const struct uh_session_ent *e = &tab[i];
		/* The collector's own session (9.3) holds an empty ACTIVE log. */
		if (i == h->gc_session || e->state != UH_SESS_ACTIVE || !e->log_off || e->log_off > n ||
		    e->log_size < sizeof(struct uh_log_hdr) || n - e->log_off < e->log_size)
			continue;
		const struct uh_log_hdr *log = (const void *)(b + e->log_off);
		if (log->magic == UH_LOG_MAGIC && log->state == UH_LOG_COMMITTED) {
			fl->committed++;
			fl->unapplied += count_unapplied(b, n, log, e->log_size);
			fl->sum_ok += spec_sum_ok(b, n, h->format_version, log, e->log_size);
		} else if (log->magic == UH_LOG_MAGIC && log->state == UH_LOG_ACTIVE) {
			fl->active++;
		} else {
			fl->other++;
		}
	}
}

static int read_file_logs(const char *path, struct file_logs *fl)
{
	size_t n;
	char *b = th_read_file(path, &n);
	long off = b ? th_find_uh_header(b, n) : -1;

	memset(fl, 0, sizeof(*fl));
	if (off >= 0) {
		const struct uh_hdr *h = (const void *)(b + off);
		fl->version = h->format_version;
		count_logs(b, n, h, fl);
	}
	free(b);
	return fl->version ? 0 : -1;
}

static int run_pending(struct th_heapd *d, const char *mode, char *pid, const char *what)
{
	char *argv[] = { (char *)th_bin("prog_gold_pending"), "--socket", d->sock, (char *)mode,
			 pid ? "--heapd-pid" : NULL, pid, NULL };

	return run_prog(argv, what);
}

/* d->heap (heapd down) holds a pending heap of `version`: one COMMITTED
 * log whose writes are not in place, one ACTIVE. heapd recovers it
 * (upgrading it), and the checker finds exactly the committed state, twice. */
static void pending_steps(struct th_heapd *d, uint32_t version, const char *what)
{
	struct file_logs fl;
	char w[128];

	TH_CHECK(read_file_logs(d->heap, &fl) == 0);
	printf("%s, before recovery: version %u, logs committed %d active %d other %d, "
	       "writes not in place %d, checksums as FORMAT.md 8.3 says %d\n", what, fl.version,
	       fl.committed, fl.active, fl.other, fl.unapplied, fl.sum_ok);
	TH_CHECK_EQ(fl.version, version);
	TH_CHECK_EQ(fl.committed, 1);
	TH_CHECK_EQ(fl.sum_ok, 1);
	TH_CHECK_EQ(fl.active, 1);
	TH_CHECK_EQ(fl.other, 0);
	TH_CHECK(fl.unapplied > 0);
	if (th_heapd_start(d, NULL) != 0) {
		th_fail(__FILE__, __LINE__, "%s: heapd refused the heap", what);
		return;
	}
	snprintf(w, sizeof(w), "%s, recovered", what);
	if (run_pending(d, "--check", NULL, w) != 0)
		return;
	snprintf(w, sizeof(w), "%s, reopened", what);
	if (th_heapd_restart(d) != 0)
		th_fail(__FILE__, __LINE__, "%s: heapd restart failed", what);
	else
		run_pending(d, "--check", NULL, w);
}

static void pending(void)
{
	struct th_heapd d = { 0 };
	char pid[16];

	/* Today's code leaves the same state: its heapd is SIGSTOPped by the
	 * generator and killed here, so only the next start recovers. */
	if (th_heapd_start(&d, GOLD_ARGS) != 0) {
		th_fail(__FILE__, __LINE__, "heapd --create " GOLD_ARGS " failed");
	} else {
		snprintf(pid, sizeof(pid), "%d", (int)d.pid);
		int rc = run_pending(&d, "--gen", pid, "pending heap written today");
		th_heapd_kill(&d);
		if (rc == 0)
			pending_steps(&d, GOLD_VERSION_NOW, "pending heap written today");
	}
	th_heapd_cleanup(&d);
	for (int v = 3; v <= 4; v++) {	/* the versions that left pending heaps */
		char what[32];
		snprintf(what, sizeof(what), "golden pending v%d", v);
		memset(&d, 0, sizeof(d));
		if (unpack_file(v, "pending", &d) == 0)
			pending_steps(&d, (uint32_t)v, what);
		th_heapd_cleanup(&d);
	}
}

int main(void)
{
	regenerate();
	for (int v = 1; v <= GOLD_VERSION_NOW; v++)
		checked_in(v);
	maps();
	inline_maps();
	pending();
	return th_summary("test_gold");
}
