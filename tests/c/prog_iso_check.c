/*
 * prog_iso_check.c -- the kill test's checker: compares the bank
 * (iso_model.h, model mode) with the writers' ack files.
 *
 *   prog_iso_check --socket S --ack-dir D --writers K [--quiet] [--probe]
 *                  [--all-acks]
 *
 * Ack file D/ack.<w> holds one line "w seq from to amount" per transfer
 * writer w reported committed; A[w] is the last seq (0 if none). One
 * read-only block reads every ledger L[w] and every balance, and then:
 *   - L[w] >= A[w] (every acknowledged transfer is in the heap);
 *   - --quiet (no writer running): L[w] <= A[w] + 1 (at most the transfer
 *     in flight at the kill committed without its ack);
 *   - every balance is the initial one plus the effect of transfers
 *     1..L[w] of every writer, and the total is constant;
 *   - --all-acks: every ack line is well formed, names its writer, has the
 *     model's accounts and amount, and seqs only go up (else only the
 *     last line is read);
 *   - --probe: one more block writes every account and every ledger back
 *     unchanged; it must commit at once without waiting for any lock (no
 *     lock is left held).
 * Prints one line per writer, "MISMATCH: ..." per finding, "check: ok".
 * Exit: 0 ok, 1 mismatch, 2 could not attach.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "iso_model.h"

static int g_bad;

#define BAD(...)					\
	do {						\
		printf("MISMATCH: " __VA_ARGS__);	\
		putchar('\n');				\
		g_bad++;				\
	} while (0)

struct snap {
	struct iso_bank b;
	int64_t led[ISO_MAX_WRITERS], bal[ISO_NACCT];
};

/* One ack line against the model; *prev is the previous seq. */
static void check_line(int w, const char *line, int64_t *prev, long lineno)
{
	long long lw, seq, amt;
	int from, to, mf, mt;
	int64_t mamt;

	if (strlen(line) != 64 || line[63] != '\n' ||
	    sscanf(line, "%lld %lld %d %d %lld", &lw, &seq, &from, &to, &amt) != 5) {
		BAD("ack.%d line %ld malformed: %s", w, lineno, line);
		return;
	}
	iso_move(w, seq, &mf, &mt, &mamt);
	if (lw != w || from != mf || to != mt || amt != mamt)
		BAD("ack.%d line %ld: %s is not transfer %lld of writer %d", w, lineno, line, seq,
		    w);
	if (seq <= *prev)
		BAD("ack.%d line %ld: seq %lld after %lld", w, lineno, seq, (long long)*prev);
	*prev = seq;
}

/* Last acknowledged seq of writer w (0 if none). */
static int64_t read_acks(const char *dir, int w, int all)
{
	char path[1024], line[256];
	int64_t last = 0;
	long n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ack.%d", dir, w);
	if (!(f = fopen(path, "r")))
		return 0;
	/* Lines are short: the last 200 bytes hold the last one whole; the
	 * first (partial) line from there is skipped. */
	if (!all && fseek(f, -200, SEEK_END) == 0) {
		if (!fgets(line, sizeof(line), f))
			line[0] = '\0';
	} else {
		rewind(f);	/* all lines, or a file shorter than 200 bytes */
	}
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (all)
			check_line(w, line, &last, n);
		else
			last = atoll(line + strcspn(line, " "));
	}
	fclose(f);
	return last;
}

static int snap_body(uh_heap *h, void *arg)
{
	struct snap *s = arg;

	for (int w = 0; w < s->b.nw; w++)
		ISO_TRY(uh_get_i64(h, s->b.ledger[w], 0, &s->led[w]));
	for (int i = 0; i < ISO_NACCT; i++)
		ISO_TRY(uh_get_i64(h, s->b.acct[i], 0, &s->bal[i]));
	return 0;
}

static void check_balances(const struct snap *s)
{
	int64_t want[ISO_NACCT], total = 0;

	for (int i = 0; i < ISO_NACCT; i++)
		want[i] = ISO_INIT_BALANCE;
	for (int w = 0; w < s->b.nw; w++)
		iso_model_add(w, 0, s->led[w], want);
	for (int i = 0; i < ISO_NACCT; i++) {
		total += s->bal[i];
		if (s->bal[i] != want[i])
			BAD("account %d: balance %lld, ledgers imply %lld", i,
			    (long long)s->bal[i], (long long)want[i]);
	}
	if (total != (int64_t)ISO_NACCT * ISO_INIT_BALANCE)
		BAD("total %lld, want %lld", (long long)total,
		    (long long)ISO_NACCT * ISO_INIT_BALANCE);
}

static int probe_body(uh_heap *h, void *arg)
{
	struct snap *s = arg;
	int64_t v;

	for (int i = 0; i < ISO_NACCT; i++) {
		ISO_TRY(uh_get_i64(h, s->b.acct[i], 0, &v));
		ISO_TRY(uh_set_i64(h, s->b.acct[i], 0, v));
	}
	for (int w = 0; w < s->b.nw; w++) {
		ISO_TRY(uh_get_i64(h, s->b.ledger[w], 0, &v));
		ISO_TRY(uh_set_i64(h, s->b.ledger[w], 0, v));
	}
	return 0;
}

static void probe(uh_heap *h, struct snap *s)
{
	int rc = uh_run(h, probe_body, s, 1);
	uh_stats st;

	uh_stats_get(h, &st);
	if (rc != 0)
		BAD("probe block (every account and ledger) failed: %s: %s", uh_strerror(rc),
		    uh_errmsg());
	else if (st.lock_waits)
		BAD("probe block waited %llu times for a lock: one was left held",
		    (unsigned long long)st.lock_waits);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *dir = ".";
	int nw = 1, quiet = 0, do_probe = 0, all = 0, rc;
	int64_t acked[ISO_MAX_WRITERS];
	static struct snap s;
	uh_heap *h;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quiet")) { quiet = 1; continue; }
		if (!strcmp(a, "--probe")) { do_probe = 1; continue; }
		if (!strcmp(a, "--all-acks")) { all = 1; continue; }
		if (!v) { fprintf(stderr, "prog_iso_check: %s needs a value\n", a); return 2; }
		if (!strcmp(a, "--socket")) sock = v;
		else if (!strcmp(a, "--ack-dir")) dir = v;
		else if (!strcmp(a, "--writers")) nw = atoi(v);
		else { fprintf(stderr, "prog_iso_check: unknown option %s\n", a); return 2; }
		i++;
	}
	/* Acks first: everything acknowledged before the snapshot must be in it. */
	for (int w = 0; w < nw && w < ISO_MAX_WRITERS; w++)
		acked[w] = read_acks(dir, w, all);
	if ((rc = uh_connect(sock, 0, &h)) != 0 || (rc = iso_open(h, nw, &s.b)) != 0) {
		fprintf(stderr, "prog_iso_check: attach: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 2;
	}
	if ((rc = uh_run(h, snap_body, &s, 1000)) != 0) {
		fprintf(stderr, "prog_iso_check: snapshot: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 2;
	}
	for (int w = 0; w < nw; w++) {
		printf("writer %d: acknowledged %lld, ledger %lld\n", w, (long long)acked[w],
		       (long long)s.led[w]);
		if (s.led[w] < acked[w])
			BAD("writer %d: acknowledged transfer %lld lost (ledger %lld)", w,
			    (long long)acked[w], (long long)s.led[w]);
		else if (quiet && s.led[w] > acked[w] + 1)
			BAD("writer %d: ledger %lld, only %lld acknowledged", w,
			    (long long)s.led[w], (long long)acked[w]);
	}
	check_balances(&s);
	if (do_probe && !g_bad)
		probe(h, &s);
	printf("check: %s (%d mismatches)\n", g_bad ? "FAILED" : "ok", g_bad);
	uh_disconnect(h);
	return g_bad ? 1 : 0;
}
