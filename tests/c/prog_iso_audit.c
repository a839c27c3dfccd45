/*
 * prog_iso_audit.c -- the isolation tests' auditor: read-only blocks over
 * the whole bank (iso_model.h) while writers run, each of which must see
 * one consistent state.
 *
 *   prog_iso_audit --socket S --writers K [--total T] [--nonneg] [--model]
 *                  [--stop FILE] [--ready FILE] [--result FILE] [--ping N]
 *                  [--pause-us P]
 *
 * Every audit is one block (uh_run) reading the K ledgers and the 16
 * balances. Inside the block, after the reads (a block's reads are one
 * snapshot, even in a try that later loses a conflict), it checks:
 *   - the balances sum to T (default 16 * ISO_INIT_BALANCE);
 *   - --nonneg: no balance is negative;
 *   - --model: every balance is what the ledger counts imply
 *     (iso_model_add), and no ledger count is lower than in an earlier
 *     audit.
 * It counts audits, and "changes": audits whose ledger total differs from
 * the previous audit's (proof that audits ran between writers' commits).
 * --ready FILE: created after the first audit. Stops when --stop FILE
 * exists; then appends "audits=.. changes=.. violations=.. <stats>" to
 * --result FILE (also on exit 3).
 * --ping N: a control call every N audits, to notice a lost heapd.
 * --pause-us P: sleep P us between audits: a sleeper that wakes often is
 * scheduled between the writers' blocks, rather than in long slices of
 * its own (which may not overlap the writers at all on 2 cores).
 *
 * Exit: 0 no violation, 1 a violation or error (printed), 3 heapd
 * unreachable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iso_model.h"

#define MAX_PRINTED 5

struct audit {
	struct iso_bank b;
	int64_t total;
	int nonneg, model;
	/* model cache: per writer, the effect of its transfers 1..seen[w] */
	int64_t seen[ISO_MAX_WRITERS];
	int64_t delta[ISO_MAX_WRITERS][ISO_NACCT];
	int64_t ledger_sum;
	uint64_t violations;
};

static void violation(struct audit *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Count a violation; print the first few. */
static void violation(struct audit *a, const char *fmt, ...)
{
	va_list ap;

	if (a->violations++ >= MAX_PRINTED)
		return;
	fprintf(stderr, "prog_iso_audit: VIOLATION: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Bring writer w's cached effect up to count n. */
static void model_to(struct audit *a, int w, int64_t n)
{
	if (n < a->seen[w]) {
		violation(a, "writer %d: ledger %lld after %lld was seen", w, (long long)n,
			  (long long)a->seen[w]);
		memset(a->delta[w], 0, sizeof(a->delta[w]));
		a->seen[w] = 0;
	}
	iso_model_add(w, a->seen[w], n, a->delta[w]);
	a->seen[w] = n;
}

static void check(struct audit *a, const int64_t led[], const int64_t bal[])
{
	int64_t sum = 0;

	a->ledger_sum = 0;
	for (int w = 0; w < a->b.nw; w++)
		a->ledger_sum += led[w];
	for (int i = 0; i < ISO_NACCT; i++) {
		sum += bal[i];
		if (a->nonneg && bal[i] < 0)
			violation(a, "account %d has balance %lld", i, (long long)bal[i]);
	}
	if (sum != a->total)
		violation(a, "balances sum to %lld, want %lld", (long long)sum,
			  (long long)a->total);
	if (!a->model)
		return;
	for (int w = 0; w < a->b.nw; w++)
		model_to(a, w, led[w]);
	for (int i = 0; i < ISO_NACCT; i++) {
		int64_t want = ISO_INIT_BALANCE;
		for (int w = 0; w < a->b.nw; w++)
			want += a->delta[w][i];
		if (bal[i] != want)
			violation(a, "account %d: balance %lld, ledgers imply %lld", i,
				  (long long)bal[i], (long long)want);
	}
}

static int audit_body(uh_heap *h, void *arg)
{
	struct audit *a = arg;
	int64_t led[ISO_MAX_WRITERS], bal[ISO_NACCT];

	for (int w = 0; w < a->b.nw; w++)
		ISO_TRY(uh_get_i64(h, a->b.ledger[w], 0, &led[w]));
	for (int i = 0; i < ISO_NACCT; i++)
		ISO_TRY(uh_get_i64(h, a->b.acct[i], 0, &bal[i]));
	check(a, led, bal);
	return 0;
}

static void append_result(const char *path, uh_heap *h, uint64_t audits, uint64_t changes,
			  uint64_t viol, uint64_t gave_up)
{
	uh_stats st;
	FILE *f;

	if (!path)
		return;
	uh_stats_get(h, &st);
	f = fopen(path, "a");
	if (!f) {
		fprintf(stderr, "prog_iso_audit: %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(f, "audits=%llu changes=%llu violations=%llu gave_up=%llu conflicts=%llu "
		"retries=%llu read_waits=%llu lock_waits=%llu\n", (unsigned long long)audits,
		(unsigned long long)changes, (unsigned long long)viol,
		(unsigned long long)gave_up, (unsigned long long)st.conflicts,
		(unsigned long long)st.retries, (unsigned long long)st.read_waits,
		(unsigned long long)st.lock_waits);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *stop = NULL, *ready = NULL, *result = NULL;
	static struct audit a;
	struct iso_classes c;
	uint64_t audits = 0, changes = 0, gave_up = 0;
	int64_t last_sum = -1;
	unsigned ping = 0, pause_us = 0;
	int nw = 1, exit_rc = 0, rc;
	uh_heap *h;

	a.total = (int64_t)ISO_NACCT * ISO_INIT_BALANCE;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--nonneg")) { a.nonneg = 1; continue; }
		if (!strcmp(o, "--model")) { a.model = 1; continue; }
		if (!v) { fprintf(stderr, "prog_iso_audit: %s needs a value\n", o); return 1; }
		if (!strcmp(o, "--socket")) sock = v;
		else if (!strcmp(o, "--writers")) nw = atoi(v);
		else if (!strcmp(o, "--total")) a.total = atoll(v);
		else if (!strcmp(o, "--stop")) stop = v;
		else if (!strcmp(o, "--ready")) ready = v;
		else if (!strcmp(o, "--result")) result = v;
		else if (!strcmp(o, "--ping")) ping = (unsigned)atoi(v);
		else if (!strcmp(o, "--pause-us")) pause_us = (unsigned)atoi(v);
		else { fprintf(stderr, "prog_iso_audit: unknown option %s\n", o); return 1; }
		i++;
	}
	if ((rc = uh_connect(sock, 0, &h)) != 0 || (rc = iso_open(h, nw, &a.b)) != 0) {
		fprintf(stderr, "prog_iso_audit: attach: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return rc == UH_EDISCONNECTED ? ISO_EXIT_LOST_HEAPD : 1;
	}
	while (!stop || access(stop, F_OK) != 0) {
		if (ping && audits % ping == ping - 1 && (rc = iso_register(h, &c)) != 0) {
			fprintf(stderr, "prog_iso_audit: ping: %s\n", uh_errmsg());
			exit_rc = rc == UH_EDISCONNECTED ? ISO_EXIT_LOST_HEAPD : 1;
			break;
		}
		rc = uh_run(h, audit_body, &a, 1000);
		if (rc == UH_ECONFLICT) {
			gave_up++;
			continue;
		}
		if (rc != 0) {
			fprintf(stderr, "prog_iso_audit: audit: %s: %s\n", uh_strerror(rc),
				uh_errmsg());
			exit_rc = 1;
			break;
		}
		if (audits++ == 0 && ready)
			close(open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		changes += last_sum >= 0 && a.ledger_sum != last_sum;
		last_sum = a.ledger_sum;
		if (a.violations)
			break;	/* the heap is now suspect: report at once */
		if (pause_us)
			usleep(pause_us);
	}
	append_result(result, h, audits, changes, a.violations, gave_up);
	printf("prog_iso_audit: %llu audits, %llu changes, %llu violations\n",
	       (unsigned long long)audits, (unsigned long long)changes,
	       (unsigned long long)a.violations);
	uh_disconnect(h);
	return a.violations ? 1 : exit_rc;
}
