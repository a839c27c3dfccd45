/*
 * prog_crash_work.c -- the crash tests' workload: one writer of the bank
 * model (prog_crash_model.h) running failure-atomic blocks, acknowledging
 * each committed block by appending its number to an ack file.
 *
 *   prog_crash_work --socket S --ack FILE [--writer W] [--blocks N]
 *                   [--prelease] [--ready-fd R --go-fd G] [--read-first]
 *
 * --blocks N: stop after block N (0 = run until killed). --prelease:
 * lease an arena of every small size class up to 2048 up front (allocate and abort),
 * so that later blocks need no RPC. --ready-fd/--go-fd: after setup write
 * one byte to R and wait for one byte on G (lets the test freeze heapd).
 *
 * By default a block locks every shared object before it reads it (it
 * writes the object's touch field, or re-sets its own root, first), so
 * its reads can't be made stale by another writer's commit whatever the
 * library's read validation does: the crash tests then test crash
 * consistency alone. --read-first reads shared objects before writing
 * them, as ordinary code does: that relies on blocks being serializable.
 *
 * The ack is written with one write(2) on an O_APPEND descriptor right
 * after uh_commit() returns: it survives the process's SIGKILL, so the ack
 * file is exactly the set of blocks this writer reported done. Records
 * have a fixed size that divides the page size (cm_ack_format), so a
 * SIGKILL during the write cannot cut one in two.
 *
 * Exit codes: 0 done, 1 unexpected error (printed), 3 heapd unreachable
 * (control call failed: restart me when heapd is back), 4 a lock stayed
 * held by another session for 10 s.
 * On success it prints "barriers=<n> commits=<n> blocks=<n>".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "powerloss.h"
#include "prog_crash_model.h"

#define EXIT_LOST_HEAPD 3
#define EXIT_STUCK 4
#define STUCK_MS 10000

struct wk {
	uh_heap *h;
	struct cm_classes c;
	int w;
	int ack_fd;
	uh_off bank, acct[CM_NACCT], counter, writer;
	uint32_t note_off;	/* CrashRecord.note field offset */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Leave for good: the exit code tells the test what happened. */
static void die(int rc, const char *what)
{
	if (rc == UH_EDISCONNECTED) {
		fprintf(stderr, "prog_crash_work: %s: heapd unreachable: %s\n", what, uh_errmsg());
		exit(EXIT_LOST_HEAPD);
	}
	fprintf(stderr, "prog_crash_work: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	exit(1);
}

#define TRY(call)				\
	do {					\
		int rc_ = (call);		\
		if (rc_ != 0)			\
			return rc_;		\
	} while (0)

static void ack(struct wk *k, int64_t b)
{
	char line[CM_ACK_LEN + 1];

	/* One write(2) on O_APPEND of a record that never crosses a page of
	 * the file: a SIGKILL cannot tear it (see cm_ack_format). */
	cm_ack_format(line, b);
	if (write(k->ack_fd, line, CM_ACK_LEN) != CM_ACK_LEN) {
		fprintf(stderr, "prog_crash_work: ack write: %s\n", strerror(errno));
		exit(1);
	}
	pl_mark(line, CM_ACK_LEN);	/* the power-loss test's copy */
}

/* Run body(k, b) as a block, re-running it after a conflict. */
static void run_block(struct wk *k, int64_t b, int (*body)(struct wk *, int64_t),
		      const char *what)
{
	uint64_t start = now_ms();

	for (;;) {
		int rc = uh_begin(k->h);
		if (rc == 0)
			rc = body(k, b);
		if (rc == 0)
			rc = uh_commit(k->h);
		if (rc == 0)
			return;
		if (uh_in_block(k->h) > 0)
			uh_abort(k->h);
		if (rc != UH_ECONFLICT)
			die(rc, what);
		if (now_ms() - start > STUCK_MS) {
			fprintf(stderr, "prog_crash_work: %s: lock held for %d ms: %s\n",
				what, STUCK_MS, uh_errmsg());
			exit(EXIT_STUCK);
		}
		usleep(100 + (unsigned)(rand() % 900));
	}
}

static int new_string(struct wk *k, const char *s, uh_off *out)
{
	return uh_string_new(k->h, s, strlen(s), out);
}

/* Create the bank, its accounts and the counter (inside the setup block). */
static int create_bank(struct wk *k)
{
	TRY(uh_alloc(k->h, k->c.bank, &k->bank));
	for (int i = 0; i < CM_NACCT; i++) {
		TRY(uh_alloc(k->h, k->c.account, &k->acct[i]));
		TRY(uh_set_i64(k->h, k->acct[i], CM_ACC_BALANCE, CM_INIT_BALANCE));
		TRY(uh_set_ref(k->h, k->bank, (uint32_t)i, k->acct[i]));
	}
	TRY(uh_alloc(k->h, k->c.counter, &k->counter));
	TRY(uh_root_set(k->h, "bank", k->bank));
	TRY(uh_root_set(k->h, "txcount", k->counter));
	return 0;
}

static int64_t g_start_seq;
static int g_read_first;

/* Block 0: make sure bank and writer exist; lock the writer (by writing
 * its pid) before reading its seq, so a dead predecessor's commit that
 * heapd has not applied yet can't be read half-done. */
static int setup_body(struct wk *k, int64_t unused)
{
	char name[32];
	int rc;

	(void)unused;
	rc = uh_root_get(k->h, "bank", &k->bank);
	if (rc == UH_ENOTFOUND)
		TRY(create_bank(k));
	else if (rc != 0)
		return rc;
	else {
		for (int i = 0; i < CM_NACCT; i++)
			TRY(uh_get_ref(k->h, k->bank, (uint32_t)i, &k->acct[i]));
		TRY(uh_root_get(k->h, "txcount", &k->counter));
	}
	cm_root_w(name, sizeof(name), k->w);
	rc = uh_root_get(k->h, name, &k->writer);
	if (rc == UH_ENOTFOUND) {
		TRY(uh_alloc(k->h, k->c.writer, &k->writer));
		TRY(uh_set_i64(k->h, k->writer, CM_WR_PID, getpid()));
		TRY(uh_root_set(k->h, name, k->writer));
		g_start_seq = 0;
		return 0;
	}
	if (rc != 0)
		return rc;
	TRY(uh_set_i64(k->h, k->writer, CM_WR_PID, getpid()));
	int64_t s;
	TRY(uh_get_i64(k->h, k->writer, CM_WR_SEQ, &s));
	g_start_seq = s;
	return 0;
}

static int free_record(struct wk *k, uh_off rec)
{
	uh_off note = 0;

	TRY(uh_read(k->h, rec, k->note_off, &note, sizeof(note)));
	if (note)
		TRY(uh_free(k->h, note));
	return uh_free(k->h, rec);
}

static int move_money(struct wk *k, int64_t b)
{
	int from, to;
	int64_t amount, v;

	cm_move(k->w, b, &from, &to, &amount);
	if (!g_read_first) {
		TRY(uh_set_i64(k->h, k->acct[from], CM_ACC_TOUCH, b));
		TRY(uh_set_i64(k->h, k->acct[to], CM_ACC_TOUCH, b));
		TRY(uh_set_i64(k->h, k->counter, CM_CNT_TOUCH, b));
	}
	TRY(uh_get_i64(k->h, k->acct[from], CM_ACC_BALANCE, &v));
	TRY(uh_set_i64(k->h, k->acct[from], CM_ACC_BALANCE, v - amount));
	TRY(uh_get_i64(k->h, k->acct[from], CM_ACC_MOVES, &v));
	TRY(uh_set_i64(k->h, k->acct[from], CM_ACC_MOVES, v + 1));
	TRY(uh_get_i64(k->h, k->acct[to], CM_ACC_BALANCE, &v));
	TRY(uh_set_i64(k->h, k->acct[to], CM_ACC_BALANCE, v + amount));
	TRY(uh_get_i64(k->h, k->acct[to], CM_ACC_MOVES, &v));
	TRY(uh_set_i64(k->h, k->acct[to], CM_ACC_MOVES, v + 1));
	TRY(uh_get_i64(k->h, k->counter, CM_CNT_COUNT, &v));
	return uh_set_i64(k->h, k->counter, CM_CNT_COUNT, v + 1);
}

/* New record for block b replaces the writer's last one (freed). */
static int replace_record(struct wk *k, int64_t b, uh_off *rec)
{
	int from, to;
	int64_t amount;
	uh_off old, note;
	char text[64];

	cm_move(k->w, b, &from, &to, &amount);
	TRY(uh_get_ref(k->h, k->writer, CM_WR_LAST, &old));
	TRY(uh_alloc(k->h, k->c.record, rec));
	TRY(uh_set_i64(k->h, *rec, CM_REC_BLOCK, b));
	TRY(uh_set_i64(k->h, *rec, CM_REC_WRITER, k->w));
	TRY(uh_set_i64(k->h, *rec, CM_REC_AMOUNT, amount));
	cm_note(text, sizeof(text), k->w, b);
	TRY(new_string(k, text, &note));
	TRY(uh_write(k->h, *rec, k->note_off, &note, sizeof(note)));
	TRY(uh_set_ref(k->h, k->writer, CM_WR_LAST, *rec));
	if (old)
		TRY(free_record(k, old));
	return 0;
}

/* Root churn: tag on every third block, h<b%16> set, h<(b+8)%16> deleted. */
static int churn_roots(struct wk *k, int64_t b, uh_off rec)
{
	char name[32], text[64];
	uh_off v;
	int rc;

	cm_root_tag(name, sizeof(name), k->w);
	if (b % 3 == 0)
		TRY(uh_root_set(k->h, name, rec));
	else if (b % 3 == 1 && b > 1)
		TRY(uh_root_del(k->h, name));

	cm_root_h(name, sizeof(name), k->w, (int)(b % CM_NH));
	rc = uh_root_get(k->h, name, &v);
	if (rc == 0)
		TRY(uh_free(k->h, v));
	else if (rc != UH_ENOTFOUND)
		return rc;
	cm_hval(text, sizeof(text), k->w, b);
	TRY(new_string(k, text, &v));
	TRY(uh_root_set(k->h, name, v));

	cm_root_h(name, sizeof(name), k->w, (int)((b + CM_NH / 2) % CM_NH));
	rc = uh_root_get(k->h, name, &v);
	if (rc == UH_ENOTFOUND)
		return 0;
	if (rc != 0)
		return rc;
	TRY(uh_free(k->h, v));
	return uh_root_del(k->h, name);
}

static int block_body(struct wk *k, int64_t b)
{
	uh_off rec;

	/* Lock the writer first: a conflict with a stale session shows here. */
	TRY(uh_set_i64(k->h, k->writer, CM_WR_SEQ, b));
	if (!g_read_first) {
		/* Re-setting our root locks the root map before we read it. */
		char name[32];
		cm_root_w(name, sizeof(name), k->w);
		TRY(uh_root_set(k->h, name, k->writer));
	}
	TRY(move_money(k, b));
	TRY(replace_record(k, b, &rec));
	return churn_roots(k, b, rec);
}

/* Lease one arena of every small size class, so later blocks never need
 * heapd (the test may freeze it). Allocations are rolled back. */
static void prelease(struct wk *k)
{
	static const uint32_t slots[] = { 32, 48, 64, 80, 96, 112, 128, 160, 192, 224,
					  256, 320, 384, 448, 512, 640, 768, 896, 1024,
					  1280, 1536, 1792, 2048 };
	static char zeros[2048];
	int rc = uh_begin(k->h);

	for (size_t i = 0; rc == 0 && i < sizeof(slots) / sizeof(slots[0]); i++) {
		uh_off o;
		rc = uh_bytes_new(k->h, zeros, slots[i] - 16, &o);
	}
	if (rc != 0)
		die(rc, "prelease");
	uh_abort(k->h);
}

static void handshake(int ready_fd, int go_fd)
{
	char c = 'r';

	if (ready_fd < 0)
		return;
	if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1) {
		fprintf(stderr, "prog_crash_work: handshake with the test failed\n");
		exit(1);
	}
	close(ready_fd);
	close(go_fd);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *ackpath = NULL;
	int64_t blocks = 0;
	int pre = 0, ready_fd = -1, go_fd = -1;
	struct wk k = { 0 };
	uh_field_info fi;
	uh_stats st;
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--prelease")) { pre = 1; continue; }
		if (!strcmp(a, "--read-first")) { g_read_first = 1; continue; }
		if (!v) { fprintf(stderr, "prog_crash_work: %s needs a value\n", a); return 1; }
		if (!strcmp(a, "--socket")) sock = v;
		else if (!strcmp(a, "--ack")) ackpath = v;
		else if (!strcmp(a, "--writer")) k.w = atoi(v);
		else if (!strcmp(a, "--blocks")) blocks = atoll(v);
		else if (!strcmp(a, "--ready-fd")) ready_fd = atoi(v);
		else if (!strcmp(a, "--go-fd")) go_fd = atoi(v);
		else { fprintf(stderr, "prog_crash_work: unknown option %s\n", a); return 1; }
		i++;
	}
	if (!ackpath) {
		fprintf(stderr, "prog_crash_work: --ack FILE is required\n");
		return 1;
	}
	srand((unsigned)getpid());
	k.ack_fd = open(ackpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (k.ack_fd < 0) {
		fprintf(stderr, "prog_crash_work: %s: %s\n", ackpath, strerror(errno));
		return 1;
	}
	if ((rc = uh_connect(sock, 0, &k.h)) != 0)
		die(rc, "uh_connect");
	if ((rc = cm_register(k.h, &k.c)) != 0)
		die(rc, "register classes");
	if ((rc = uh_field_info_get(k.h, k.c.record, CM_REC_NOTE, &fi)) != 0)
		die(rc, "field info");
	k.note_off = fi.offset;
	if (pre)
		prelease(&k);
	run_block(&k, 0, setup_body, "setup block");
	ack(&k, g_start_seq);
	handshake(ready_fd, go_fd);
	for (int64_t b = g_start_seq + 1; blocks == 0 || b <= blocks; b++) {
		run_block(&k, b, block_body, "block");
		ack(&k, b);
	}
	uh_stats_get(k.h, &st);
	printf("barriers=%llu commits=%llu blocks=%lld\n", (unsigned long long)st.barriers,
	       (unsigned long long)st.commits, (long long)blocks);
	uh_disconnect(k.h);
	return 0;
}
