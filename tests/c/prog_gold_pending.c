/*
 * prog_gold_pending.c -- a heap left with recovery work pending: one
 * block committed but not applied, another still open, both of clients
 * that died while heapd was frozen (tests/gold/v3 and v4/pending.heap.gz, and
 * the same written today by test_gold).
 *
 *   prog_gold_pending --socket S --gen --heapd-pid P [--crash-at K]
 *   prog_gold_pending --socket S --check
 *
 * --gen, on a fresh heap served by heapd P, in three child processes:
 *   base     one block, committed and applied (roots pend.hit, pend.miss,
 *            pend.kept, pend.gone -> GoldAll objects, kept.link -> gone;
 *            pend.smap / pend.hmap -> a sorted / hash map of "k00".."k39"
 *            -> 0..39), then ends its session;
 *   open     begins a block and leaves it open (ACTIVE log, locks held):
 *            miss.big/mid/text changed, miss.link -> a new object, hmap
 *            k05 -> 905, k40 -> 940, k06 removed;
 *   commit   its block: hit.big/mid/real/text changed, a new object under
 *            pend.new (link -> hit), kept.link = null, gone freed and its
 *            root removed, smap k05 -> 500, k40 -> 40. libuniheap's crash
 *            hook (UH_CRASH_AT) SIGKILLs it right before its K-th barrier.
 * Once both are set, heapd is SIGSTOPped, so that it does not reap the
 * sessions; then commit runs into its crash point and open is SIGKILLed.
 * K is the commit's barrier that follows the store of COMMITTED (B1): a
 * process crash keeps every store, so the log reads COMMITTED and nothing
 * is applied. Format 3 issues one barrier before it for a block that
 * allocated (its new objects, B0), format 4 none. The caller SIGKILLs
 * heapd and keeps the file: its logs are one COMMITTED and one ACTIVE.
 * The same source builds against the format 3 code, which wrote
 * tests/gold/v3/pending.heap.gz, and the format 4 code v4/pending.heap.gz
 * (their READMEs say how).
 *
 * --check, after heapd recovered such a file: exactly the base block plus
 * the committed one, the heap and both maps sound, the heap of the
 * library's format version (heapd upgrades an older one).
 *
 * Prints one line per mismatch and "pending <mode>: ok" / "FAILED";
 * exit 0 / 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format.h"
#include "prog_gold_model.h"
#include <stdio.h>

#define GOLD_PROG "prog_gold_pending"
#include "prog_gold_util.h"

#define NKEYS 40	/* "k00".."k39" in both maps */

#if UH_FORMAT_VERSION == 3
#define CRASH_AT_DEFAULT 2	/* B0 (new objects), then B1 (COMMITTED) */
#else
#define CRASH_AT_DEFAULT 1	/* B1: new objects and COMMITTED together */
#endif

static uh_heap *h;
static const char *sock;
static uint32_t all;
static int bad;

static uh_key key(int i)
{
	static char buf[8][8];
	static int slot;
	char *b = buf[slot++ % 8];

	snprintf(b, 8, "k%02d", i);
	return (uh_key){ .kind = UH_KEY_STRING, .data = b, .len = strlen(b) };
}

static uh_value ival(int64_t i)
{
	return (uh_value){ .type = UH_T_I64, .u.i = i };
}

static uh_off str(const char *s)
{
	uh_off o;

	TRY(uh_string_new(h, s, strlen(s), &o));
	return o;
}

static uh_off obj(int64_t big, int64_t mid, const char *text)
{
	uh_off o;

	TRY(uh_alloc(h, all, &o));
	TRY(uh_set_i64(h, o, GA_BIG, big));
	TRY(uh_set_i64(h, o, GA_MID, mid));
	TRY(uh_set_ref(h, o, GA_TEXT, str(text)));
	return o;
}

static uh_off root(const char *name)
{
	uh_off o = 0;

	TRY(uh_root_get(h, name, &o));
	return o;
}

static void connect_heap(void)
{
	TRY(uh_connect(sock, 0, &h));
	TRY(uh_class_register(h, "GoldAll", gold_all_fields, GA_NFIELDS, &all));
}

/* ---- --gen: the three clients ---- */

static void gen_base(void)
{
	uh_off sm, hm, gone;

	connect_heap();
	TRY(uh_begin(h));
	TRY(uh_smap_new(h, UH_KEY_STRING, &sm));
	TRY(uh_map_new(h, UH_KEY_STRING, &hm));
	for (int i = 0; i < NKEYS; i++) {
		uh_key k = key(i);
		uh_value v = ival(i);
		TRY(uh_smap_put(h, sm, &k, &v, 0));
		TRY(uh_map_put(h, hm, &k, &v, 0));
	}
	gone = obj(4, 40, "gone");
	uh_off kept = obj(3, 30, "kept");
	TRY(uh_set_ref(h, kept, GA_LINK, gone));
	TRY(uh_root_set(h, "pend.hit", obj(1, 10, "hit before")));
	TRY(uh_root_set(h, "pend.miss", obj(2, 20, "miss before")));
	TRY(uh_root_set(h, "pend.kept", kept));
	TRY(uh_root_set(h, "pend.gone", gone));
	TRY(uh_root_set(h, "pend.smap", sm));
	TRY(uh_root_set(h, "pend.hmap", hm));
	TRY(uh_commit(h));
	uh_disconnect(h);
}

/* The block that never commits. It touches neither the root map nor
 * anything the committed block touches, so neither waits for the other's
 * locks. */
static void gen_open(void)
{
	uh_off miss, hm;
	uh_key k5 = key(5), k6 = key(6), k40 = key(40);
	uh_value v5 = ival(905), v40 = ival(940);

	connect_heap();
	miss = root("pend.miss");
	hm = root("pend.hmap");
	TRY(uh_begin(h));
	TRY(uh_set_i64(h, miss, GA_BIG, 902));
	TRY(uh_set_i64(h, miss, GA_MID, 920));
	TRY(uh_set_ref(h, miss, GA_TEXT, str("miss never")));
	TRY(uh_set_ref(h, miss, GA_LINK, obj(903, 930, "never")));
	TRY(uh_map_put(h, hm, &k5, &v5, 0));
	TRY(uh_map_put(h, hm, &k40, &v40, 0));
	TRY(uh_map_remove(h, hm, &k6, NULL, 0));
}

static void gen_commit(void)
{
	uh_off hit, kept, gone, sm, n;
	uh_key k5 = key(5), k40 = key(40);
	uh_value v5 = ival(500), v40 = ival(40);

	connect_heap();
	hit = root("pend.hit");
	kept = root("pend.kept");
	gone = root("pend.gone");
	sm = root("pend.smap");
	TRY(uh_begin(h));
	TRY(uh_set_i64(h, hit, GA_BIG, 101));
	TRY(uh_set_i64(h, hit, GA_MID, 110));
	TRY(uh_set_f64(h, hit, GA_REAL, 2.5));
	TRY(uh_set_ref(h, hit, GA_TEXT, str("hit after")));
	n = obj(201, 210, "new");
	TRY(uh_set_ref(h, n, GA_LINK, hit));
	TRY(uh_root_set(h, "pend.new", n));
	TRY(uh_set_ref(h, kept, GA_LINK, 0));
	TRY(uh_root_del(h, "pend.gone"));
	TRY(uh_free(h, gone));
	TRY(uh_smap_put(h, sm, &k5, &v5, 0));
	TRY(uh_smap_put(h, sm, &k40, &v40, 0));
}

/* A client process that runs body. With go NULL it then exits (0);
 * else it says so on a pipe and waits: told to go on, it commits, which
 * its crash hook must cut short (exit 3 if not); or it is killed with its
 * block open. Returns its pid; *go is the pipe to tell it. */
static pid_t client(void (*body)(void), const char *crash_at, int *go)
{
	int ready[2], gop[2];
	char c = 0;
	pid_t pid;

	if (pipe(ready) != 0 || pipe(gop) != 0 || (pid = fork()) < 0) {
		perror("prog_gold_pending: pipe/fork");
		exit(1);
	}
	if (pid == 0) {
		close(ready[0]);
		close(gop[1]);
		if (crash_at)
			setenv("UH_CRASH_AT", crash_at, 1);	/* read at uh_connect */
		body();
		if (!go)
			_exit(0);
		if (write(ready[1], "r", 1) != 1 || read(gop[0], &c, 1) != 1)
			_exit(1);
		if (uh_commit(h) != 0)
			fprintf(stderr, "prog_gold_pending: commit: %s\n", uh_errmsg());
		_exit(3);
	}
	close(ready[1]);
	close(gop[0]);
	if (go && read(ready[0], &c, 1) != 1) {
		fprintf(stderr, "prog_gold_pending: a client failed before its block was set\n");
		exit(1);
	}
	close(ready[0]);
	if (go)
		*go = gop[1];
	else
		close(gop[1]);
	return pid;
}

static int wait_status(pid_t pid)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

/* SIGSTOP takes effect asynchronously: wait until /proc says stopped. */
static int freeze(pid_t heapd)
{
	char path[64], buf[512], *p;

	if (kill(heapd, SIGSTOP) != 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)heapd);
	for (int i = 0; i < 10000; i++) {	/* bound: 10 s */
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		if ((p = strrchr(buf, ')')) != NULL && p[1] == ' ' && p[2] == 'T')
			return 0;
		usleep(1000);
	}
	return -1;
}

static int gen(pid_t heapd, const char *crash_at)
{
	int go_open, go_commit, st;
	pid_t pid = client(gen_base, NULL, NULL);

	st = wait_status(pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "prog_gold_pending: base client status 0x%x\n", st);
		return 1;
	}
	pid_t open = client(gen_open, NULL, &go_open);
	pid_t commit = client(gen_commit, crash_at, &go_commit);
	/* From here heapd must not see the clients die: it would recover
	 * their sessions at once, and the file would hold no pending log. */
	if (freeze(heapd) != 0) {
		fprintf(stderr, "prog_gold_pending: heapd %d did not stop\n", (int)heapd);
		kill(open, SIGKILL);
		kill(commit, SIGKILL);
		return 1;
	}
	CHECK(write(go_commit, "g", 1) == 1, "tell commit to go");
	st = wait_status(commit);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	      "commit client status 0x%x, want SIGKILL before barrier %s", st, crash_at);
	kill(open, SIGKILL);
	st = wait_status(open);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "open client status 0x%x", st);
	printf("pending gen: %s (crash before barrier %s; heapd %d left stopped)\n",
	       bad ? "FAILED" : "ok", crash_at, (int)heapd);
	return bad ? 1 : 0;
}

/* ---- --check ---- */

static uh_off want_root(const char *name)
{
	uh_off o = 0;

	CHECK(uh_root_get(h, name, &o) == 0 && o != 0, "root %s", name);
	return o;
}

static void want_i64(uh_off o, uint32_t f, int64_t want, const char *what)
{
	int64_t v = 0;

	CHECK(uh_get_i64(h, o, f, &v) == 0 && v == want, "%s: %lld, want %lld", what,
	      (long long)v, (long long)want);
}

static void want_text(uh_off o, const char *want, const char *what)
{
	uh_off s = 0;
	const char *d = "";
	size_t n = 0;

	CHECK(uh_get_ref(h, o, GA_TEXT, &s) == 0 && uh_string_get(h, s, &d, &n) == 0 &&
	      n == strlen(want) && !memcmp(d, want, n), "%s: \"%.*s\", want \"%s\"", what,
	      (int)n, d, want);
}

static void want_ref(uh_off o, uint32_t f, uh_off want, const char *what)
{
	uh_off r = 1;

	CHECK(uh_get_ref(h, o, f, &r) == 0 && r == want, "%s: 0x%llx, want 0x%llx", what,
	      (unsigned long long)r, (unsigned long long)want);
}

/* The committed block is there, whole. */
static void check_committed(void)
{
	uh_off hit = want_root("pend.hit"), kept = want_root("pend.kept");
	uh_off n = want_root("pend.new"), o = 0;
	double f = 0;

	if (hit) {
		want_i64(hit, GA_BIG, 101, "hit.big");
		want_i64(hit, GA_MID, 110, "hit.mid");
		CHECK(uh_get_f64(h, hit, GA_REAL, &f) == 0 && f == 2.5, "hit.real %g", f);
		want_text(hit, "hit after", "hit.text");
	}
	if (n) {
		want_i64(n, GA_BIG, 201, "new.big");
		want_i64(n, GA_MID, 210, "new.mid");
		want_text(n, "new", "new.text");
		want_ref(n, GA_LINK, hit, "new.link");
	}
	if (kept) {
		want_i64(kept, GA_BIG, 3, "kept.big");
		want_ref(kept, GA_LINK, 0, "kept.link");
	}
	CHECK(uh_root_get(h, "pend.gone", &o) == UH_ENOTFOUND, "root pend.gone still there");
}

/* Nothing of the open block is. */
static void check_rolled_back(void)
{
	uh_off miss = want_root("pend.miss");

	if (miss) {
		want_i64(miss, GA_BIG, 2, "miss.big");
		want_i64(miss, GA_MID, 20, "miss.mid");
		want_text(miss, "miss before", "miss.text");
		want_ref(miss, GA_LINK, 0, "miss.link");
	}
}

/* smap: the base keys, k05 and k40 of the committed block; hmap: the base
 * keys only. */
static void check_maps(void)
{
	uh_off sm = want_root("pend.smap"), hm = want_root("pend.hmap");
	uint64_t n = 0;

	for (int i = 0; i <= NKEYS && sm && hm; i++) {
		uh_key k = key(i);
		uh_value v = { 0 };
		int64_t ws = i == 5 ? 500 : i;
		int rs = uh_smap_get(h, sm, &k, &v);
		CHECK(rs == 0 && v.u.i == ws, "smap k%02d: rc %d, %lld, want %lld", i, rs,
		      (long long)v.u.i, (long long)ws);
		int rh = uh_map_get(h, hm, &k, &v);
		if (i == NKEYS)
			CHECK(rh == UH_ENOTFOUND, "hmap k%02d: rc %d, want absent", i, rh);
		else
			CHECK(rh == 0 && v.u.i == i, "hmap k%02d: rc %d, %lld", i, rh,
			      (long long)v.u.i);
	}
	if (sm) {
		CHECK(uh_smap_len(h, sm, &n) == 0 && n == NKEYS + 1, "smap len %llu",
		      (unsigned long long)n);
		CHECK(uh_smap_check(h, sm) == 0, "smap check");
	}
	if (hm) {
		CHECK(uh_map_len(h, hm, &n) == 0 && n == NKEYS, "hmap len %llu",
		      (unsigned long long)n);
		CHECK(uh_map_check(h, hm) == 0, "hmap check");
	}
}

static int check(void)
{
	uh_info info;
	uint64_t nroots = 0, objects = 0;

	TRY(uh_connect(sock, UH_READONLY, &h));
	CHECK(uh_heap_info(h, &info) == 0 && info.format_version == UH_FORMAT_VERSION,
	      "format version %u, want %u", info.format_version, UH_FORMAT_VERSION);
	CHECK(uh_class_find(h, "GoldAll", &all) == 0, "class GoldAll");
	/* hit miss kept new smap hmap */
	CHECK(uh_root_count(h, &nroots) == 0 && nroots == 6, "%llu roots, want 6",
	      (unsigned long long)nroots);
	check_committed();
	check_rolled_back();
	check_maps();
	CHECK(uh_heap_check(h, &objects) == 0, "heap check");
	uh_disconnect(h);
	printf("pending check: %s (%d mismatches, %llu objects)\n", bad ? "FAILED" : "ok", bad,
	       (unsigned long long)objects);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = NULL, *crash_at = NULL;
	char dflt[16];
	pid_t heapd = 0;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--gen") || !strcmp(argv[i], "--check"))
			mode = argv[i];
		else if (!strcmp(argv[i], "--socket") && v)
			sock = argv[++i];
		else if (!strcmp(argv[i], "--heapd-pid") && v)
			heapd = (pid_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--crash-at") && v)
			crash_at = argv[++i];
		else
			mode = NULL, i = argc;
	}
	if (!sock || !mode || (!strcmp(mode, "--gen") && heapd <= 0)) {
		fprintf(stderr, "usage: prog_gold_pending --socket S --gen --heapd-pid P "
				"[--crash-at K]\n       prog_gold_pending --socket S --check\n");
		return 1;
	}
	snprintf(dflt, sizeof(dflt), "%d", CRASH_AT_DEFAULT);
	return !strcmp(mode, "--gen") ? gen(heapd, crash_at ? crash_at : dflt) : check();
}
