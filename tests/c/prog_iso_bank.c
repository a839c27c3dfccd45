/*
 * prog_iso_bank.c -- one writer of the isolation tests' bank
 * (iso_model.h): transfer blocks run with uh_run().
 *
 *   prog_iso_bank --socket S --writer W [--transfers N] [--seed X]
 *                 [--hot PCT] [--dwell-us U] [--model] [--ack FILE]
 *                 [--result FILE] [--go FILE] [--ping N] [--pause-us P]
 *                 [--hold-us H]
 *
 * A transfer block reads the writer's ledger count c and the balances of
 * two accounts, writes both balances and sets the ledger to c + 1.
 * Random mode (default): the accounts and amount come from an RNG seeded
 * with X; the block moves min(amount, balance of the source), so balances
 * never go negative if blocks are serializable. --hot PCT: PCT% of the
 * transfers are between accounts 0 and 1 (a hot set that forces
 * conflicts). --dwell-us U: busy-wait U us between the reads and the
 * writes of a block, which widens the window for conflicts.
 * --model: transfer number c + 1 is iso_move(W, c + 1), full amount, so a
 * checker can recompute balances from the ledgers; run until killed unless
 * --transfers is given.
 *
 * --ack FILE: after each commit append "W seq from to amount", padded with
 * spaces to a 64-byte record ending in '\n', with one write(2) on an
 * O_APPEND descriptor (survives SIGKILL; fixed-size records are never torn).
 * --result FILE: at the end write "writer=W acks=N seq=S <stats>" and
 * "net=<16 per-account effects of this writer's committed transfers>".
 * --go FILE: wait for FILE to exist before the first transfer.
 * --ping N: every N transfers make a control call (class registration),
 * so a lost heapd is noticed.
 * --pause-us P: sleep P us after each transfer (outside the block), which
 * keeps the ack files of long runs small.
 * --hold-us H: sleep H us inside the block after its writes, locks held,
 * so that a SIGKILL is likely to land in the middle of a block.
 *
 * Exit: 0 done, 1 error (printed), 3 heapd unreachable, 4 conflicts did
 * not let a transfer commit for 30 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iso_model.h"

#define GIVE_UP_MS 30000

struct opts {
	const char *sock, *ack, *result, *go;
	int w, model, hot;
	int64_t transfers;
	uint64_t seed;
	unsigned dwell_us, ping, pause_us, hold_us;
};

struct xfer {
	uh_off ledger, acct[ISO_NACCT];
	int w, model;
	unsigned dwell_us, hold_us;
	int from, to;		/* chosen before the block (random mode) */
	int64_t amount;
	int64_t seq, moved;	/* results of the try that committed */
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void die(int rc, const char *what)
{
	if (rc == UH_EDISCONNECTED) {
		fprintf(stderr, "prog_iso_bank: %s: heapd unreachable: %s\n", what, uh_errmsg());
		exit(ISO_EXIT_LOST_HEAPD);
	}
	fprintf(stderr, "prog_iso_bank: %s: %s: %s\n", what, uh_strerror(rc), uh_errmsg());
	exit(1);
}

/* Busy, not sleeping: the block stays on the CPU with its reads done. */
static void dwell(unsigned us)
{
	uint64_t end = now_us() + us;

	while (us && now_us() < end)
		;
}

/* The block: ledger c -> c + 1 and one transfer, all or nothing. */
static int transfer_body(uh_heap *h, void *arg)
{
	struct xfer *x = arg;
	int64_t c, fb, tb;

	ISO_TRY(uh_get_i64(h, x->ledger, 0, &c));
	x->seq = c + 1;
	if (x->model)
		iso_move(x->w, x->seq, &x->from, &x->to, &x->amount);
	ISO_TRY(uh_get_i64(h, x->acct[x->from], 0, &fb));
	ISO_TRY(uh_get_i64(h, x->acct[x->to], 0, &tb));
	x->moved = x->model ? x->amount : (fb < x->amount ? (fb > 0 ? fb : 0) : x->amount);
	dwell(x->dwell_us);
	ISO_TRY(uh_set_i64(h, x->acct[x->from], 0, fb - x->moved));
	ISO_TRY(uh_set_i64(h, x->acct[x->to], 0, tb + x->moved));
	ISO_TRY(uh_set_i64(h, x->ledger, 0, c + 1));
	if (x->hold_us)
		usleep(x->hold_us);
	return 0;
}

/* Random mode: pick the accounts and amount of the next transfer. */
static void pick(struct xfer *x, uint64_t *rng, int hot)
{
	uint64_t r = iso_rand(rng);

	if ((int)(r % 100u) < hot) {
		x->from = (int)((r >> 8) & 1u);
		x->to = 1 - x->from;
	} else {
		x->from = (int)((r >> 8) % ISO_NACCT);
		x->to = (int)((r >> 16) % (ISO_NACCT - 1));
		if (x->to >= x->from)
			x->to++;
	}
	x->amount = 1 + (int64_t)((r >> 32) % 100u);
}

/* Run one transfer until it commits (bounded by GIVE_UP_MS). */
static void run_transfer(uh_heap *h, struct xfer *x)
{
	uint64_t start = now_us();
	int rc;

	while ((rc = uh_run(h, transfer_body, x, 0)) == UH_ECONFLICT) {
		if (now_us() - start > GIVE_UP_MS * 1000ull) {
			fprintf(stderr, "prog_iso_bank: writer %d: no commit for %d ms: %s\n",
				x->w, GIVE_UP_MS, uh_errmsg());
			exit(ISO_EXIT_GAVE_UP);
		}
	}
	if (rc != 0)
		die(rc, "transfer");
}

/* Ack records have a fixed length that divides the page size: the file
 * stays a multiple of it, no record crosses a page, and a SIGKILL (which
 * can stop a write between two pages) never tears one. */
#define ACK_LEN 64

static void ack(int fd, const struct xfer *x)
{
	char line[ACK_LEN + 1];
	int n = snprintf(line, sizeof(line), "%d %lld %d %d %lld", x->w, (long long)x->seq,
			 x->from, x->to, (long long)x->moved);

	if (n < 0 || n >= ACK_LEN) {
		fprintf(stderr, "prog_iso_bank: ack record too long\n");
		exit(1);
	}
	memset(line + n, ' ', ACK_LEN - 1 - (size_t)n);	/* pad, then '\n' */
	line[ACK_LEN - 1] = '\n';
	if (write(fd, line, ACK_LEN) != ACK_LEN) {
		fprintf(stderr, "prog_iso_bank: ack write: %s\n", strerror(errno));
		exit(1);
	}
}

static void write_result(const struct opts *o, uh_heap *h, int64_t acks, int64_t seq,
			 const int64_t net[ISO_NACCT])
{
	FILE *f = fopen(o->result, "w");
	uh_stats st;

	uh_stats_get(h, &st);
	if (!f) {
		fprintf(stderr, "prog_iso_bank: %s: %s\n", o->result, strerror(errno));
		exit(1);
	}
	fprintf(f, "writer=%d acks=%lld seq=%lld commits=%llu conflicts=%llu aborts_locked=%llu "
		"aborts_stale=%llu retries=%llu lock_waits=%llu read_waits=%llu\nnet=", o->w,
		(long long)acks, (long long)seq, (unsigned long long)st.commits,
		(unsigned long long)st.conflicts, (unsigned long long)st.aborts_locked,
		(unsigned long long)st.aborts_stale, (unsigned long long)st.retries,
		(unsigned long long)st.lock_waits, (unsigned long long)st.read_waits);
	for (int i = 0; i < ISO_NACCT; i++)
		fprintf(f, "%lld%c", (long long)net[i], i + 1 < ISO_NACCT ? ' ' : '\n');
	if (fclose(f) != 0) {
		fprintf(stderr, "prog_iso_bank: %s: %s\n", o->result, strerror(errno));
		exit(1);
	}
}

static void wait_go(const char *path)
{
	while (path && access(path, F_OK) != 0)
		usleep(1000);
}

static void parse(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--model")) { o->model = 1; continue; }
		if (!v) { fprintf(stderr, "prog_iso_bank: %s needs a value\n", a); exit(1); }
		if (!strcmp(a, "--socket")) o->sock = v;
		else if (!strcmp(a, "--writer")) o->w = atoi(v);
		else if (!strcmp(a, "--transfers")) o->transfers = atoll(v);
		else if (!strcmp(a, "--seed")) o->seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--hot")) o->hot = atoi(v);
		else if (!strcmp(a, "--dwell-us")) o->dwell_us = (unsigned)atoi(v);
		else if (!strcmp(a, "--ack")) o->ack = v;
		else if (!strcmp(a, "--result")) o->result = v;
		else if (!strcmp(a, "--go")) o->go = v;
		else if (!strcmp(a, "--ping")) o->ping = (unsigned)atoi(v);
		else if (!strcmp(a, "--pause-us")) o->pause_us = (unsigned)atoi(v);
		else if (!strcmp(a, "--hold-us")) o->hold_us = (unsigned)atoi(v);
		else { fprintf(stderr, "prog_iso_bank: unknown option %s\n", a); exit(1); }
		i++;
	}
	if (o->w < 0 || o->w >= ISO_MAX_WRITERS) {
		fprintf(stderr, "prog_iso_bank: --writer must be 0..%d\n", ISO_MAX_WRITERS - 1);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .seed = 1 };
	struct iso_classes c;
	struct iso_bank b;
	struct xfer x = { 0 };
	int64_t net[ISO_NACCT] = { 0 }, acks = 0;
	uint64_t rng;
	uh_heap *h;
	int ack_fd = -1, rc;

	parse(argc, argv, &o);
	rng = th_mix64(o.seed + (uint64_t)o.w) | 1u;
	if (o.ack && (ack_fd = open(o.ack, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "prog_iso_bank: %s: %s\n", o.ack, strerror(errno));
		return 1;
	}
	if ((rc = uh_connect(o.sock, 0, &h)) != 0)
		die(rc, "uh_connect");
	if ((rc = iso_register(h, &c)) != 0)
		die(rc, "register classes");
	if ((rc = iso_open(h, o.w + 1, &b)) != 0)
		die(rc, "find the bank");
	x.ledger = b.ledger[o.w];
	memcpy(x.acct, b.acct, sizeof(x.acct));
	x.w = o.w;
	x.model = o.model;
	x.dwell_us = o.dwell_us;
	x.hold_us = o.hold_us;
	wait_go(o.go);
	for (int64_t i = 0; o.transfers == 0 || i < o.transfers; i++) {
		if (o.ping && i % o.ping == o.ping - 1 && (rc = iso_register(h, &c)) != 0)
			die(rc, "ping heapd");
		if (!o.model)
			pick(&x, &rng, o.hot);
		run_transfer(h, &x);
		acks++;
		net[x.from] -= x.moved;
		net[x.to] += x.moved;
		if (ack_fd >= 0)
			ack(ack_fd, &x);
		if (o.pause_us)
			usleep(o.pause_us);
	}
	if (o.result)
		write_result(&o, h, acks, x.seq, net);
	uh_disconnect(h);
	return 0;
}
