/*
 * prog_iso_skew.c -- worker and auditor of the write-skew test. Two
 * objects x and y (roots "skew.x", "skew.y", class IsoSkew {bal, oncall})
 * carry two invariants that span both objects:
 *   I1  x.bal + y.bal >= 0          (start 50 + 50)
 *   I2  x.oncall + y.oncall >= 1    (start 1 + 1: "one doctor on call")
 * Each is kept by blocks that read BOTH objects and write ONE of them:
 *   withdraw: if x.bal + y.bal >= 60, take 60 from x or y;
 *   go off call: if both are on call, take x or y off call;
 * and restored by blocks that touch one object: deposit 30 into x or y,
 * put x or y on call. Under snapshot isolation two concurrent withdrawals
 * (or two doctors going off call) each see the invariant hold and write
 * different objects: write skew breaks it. Serializable blocks never do.
 *
 *   prog_iso_skew --socket S --ops N [--seed X] [--dwell-us U] [--go FILE]
 *                 [--result FILE]
 *   prog_iso_skew --socket S --audit --stop FILE [--ready FILE]
 *                 [--result FILE] [--pause-us P]
 *
 * Workers check both invariants inside every block on the values read
 * (one snapshot); --dwell-us busy-waits between the check and the write.
 * The auditor runs read-only blocks of all four fields until FILE exists,
 * sleeping P us between them (so that it is scheduled between the
 * workers' blocks, not in long slices of its own).
 * --result FILE gets one line of counts and uh_stats.
 * Exit: 0 no violation, 1 violation or error (printed), 4 conflicts for
 * 30 s on one block.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "iso_model.h"

#define GIVE_UP_MS 30000
enum { F_BAL, F_ONCALL };
enum { OP_WITHDRAW, OP_DEPOSIT, OP_OFFCALL, OP_ONCALL };

struct sk {
	uh_off obj[2];		/* x, y */
	unsigned dwell_us;
	int op, which;		/* this block's kind and target (0 = x, 1 = y) */
	int did;		/* the committed try changed something */
	uint64_t violations;
	int64_t last[4];	/* the auditor's previous snapshot */
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void dwell(unsigned us)
{
	for (uint64_t end = now_us() + us; us && now_us() < end;)
		;
}

static void check(struct sk *k, const char *who, int64_t xb, int64_t yb, int64_t xo, int64_t yo)
{
	if (xb + yb >= 0 && xo + yo >= 1)
		return;
	if (k->violations++ < 5)
		fprintf(stderr, "prog_iso_skew: VIOLATION seen by %s: x.bal %lld + y.bal %lld, "
			"x.oncall %lld + y.oncall %lld\n", who, (long long)xb, (long long)yb,
			(long long)xo, (long long)yo);
}

/* Read field f of both objects and check the invariant it belongs to. */
static int read_pair(uh_heap *h, struct sk *k, uint32_t f, int64_t v[2])
{
	ISO_TRY(uh_get_i64(h, k->obj[0], f, &v[0]));
	ISO_TRY(uh_get_i64(h, k->obj[1], f, &v[1]));
	if (f == F_BAL)
		check(k, "worker", v[0], v[1], 1, 0);
	else
		check(k, "worker", 0, 0, v[0], v[1]);
	return 0;
}

static int worker_body(uh_heap *h, void *arg)
{
	struct sk *k = arg;
	uh_off o = k->obj[k->which];
	int64_t v[2], cur;

	k->did = 0;
	switch (k->op) {
	case OP_WITHDRAW:
		ISO_TRY(read_pair(h, k, F_BAL, v));
		if (v[0] + v[1] < 60)
			return 0;
		dwell(k->dwell_us);
		k->did = 1;
		return uh_set_i64(h, o, F_BAL, v[k->which] - 60);
	case OP_OFFCALL:
		ISO_TRY(read_pair(h, k, F_ONCALL, v));
		if (!v[0] || !v[1])
			return 0;
		dwell(k->dwell_us);
		k->did = 1;
		return uh_set_i64(h, o, F_ONCALL, 0);
	case OP_DEPOSIT:
		ISO_TRY(uh_get_i64(h, o, F_BAL, &cur));
		k->did = 1;
		return uh_set_i64(h, o, F_BAL, cur + 30);
	default:
		ISO_TRY(uh_get_i64(h, o, F_ONCALL, &cur));
		k->did = !cur;
		return cur ? 0 : uh_set_i64(h, o, F_ONCALL, 1);
	}
}

static int audit_body(uh_heap *h, void *arg)
{
	struct sk *k = arg;
	int64_t v[4];

	for (int i = 0; i < 4; i++)
		ISO_TRY(uh_get_i64(h, k->obj[i / 2], (uint32_t)(i % 2), &v[i]));
	check(k, "auditor", v[0], v[2], v[1], v[3]);
	k->did = memcmp(v, k->last, sizeof(v)) != 0;
	memcpy(k->last, v, sizeof(v));
	return 0;
}

static void run(uh_heap *h, uh_block_fn fn, struct sk *k)
{
	uint64_t start = now_us();
	int rc;

	while ((rc = uh_run(h, fn, k, 0)) == UH_ECONFLICT)
		if (now_us() - start > GIVE_UP_MS * 1000ull) {
			fprintf(stderr, "prog_iso_skew: no commit for %d ms: %s\n", GIVE_UP_MS,
				uh_errmsg());
			exit(ISO_EXIT_GAVE_UP);
		}
	if (rc != 0) {
		fprintf(stderr, "prog_iso_skew: block: %s: %s\n", uh_strerror(rc), uh_errmsg());
		exit(1);
	}
}

static void put_result(const char *path, uh_heap *h, const char *counts)
{
	uh_stats st;
	FILE *f;

	if (!path)
		return;
	uh_stats_get(h, &st);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%s conflicts=%llu retries=%llu lock_waits=%llu\n", counts,
			  (unsigned long long)st.conflicts, (unsigned long long)st.retries,
			  (unsigned long long)st.lock_waits) < 0 || fclose(f) != 0) {
		fprintf(stderr, "prog_iso_skew: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void worker(uh_heap *h, struct sk *k, long ops, uint64_t seed, const char *result)
{
	uint64_t rng = th_mix64(seed) | 1u, done[4] = { 0 };
	char counts[256];

	for (long i = 0; i < ops; i++) {
		uint64_t r = iso_rand(&rng);
		unsigned p = (unsigned)(r % 100u);
		k->op = p < 35 ? OP_WITHDRAW : p < 50 ? OP_DEPOSIT : p < 85 ? OP_OFFCALL : OP_ONCALL;
		k->which = (int)((r >> 8) & 1u);
		run(h, worker_body, k);
		done[k->op] += (uint64_t)k->did;
	}
	snprintf(counts, sizeof(counts), "ops=%ld withdrawals=%llu deposits=%llu offcalls=%llu "
		 "oncalls=%llu violations=%llu", ops, (unsigned long long)done[OP_WITHDRAW],
		 (unsigned long long)done[OP_DEPOSIT], (unsigned long long)done[OP_OFFCALL],
		 (unsigned long long)done[OP_ONCALL], (unsigned long long)k->violations);
	put_result(result, h, counts);
}

static void auditor(uh_heap *h, struct sk *k, const char *stop, const char *ready,
		    const char *result, unsigned pause_us)
{
	uint64_t audits = 0, changes = 0;
	char counts[128];

	while (!stop || access(stop, F_OK) != 0) {
		run(h, audit_body, k);
		changes += audits > 0 && k->did;
		if (audits++ == 0 && ready)
			close(open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		if (pause_us)
			usleep(pause_us);
	}
	snprintf(counts, sizeof(counts), "audits=%llu changes=%llu violations=%llu",
		 (unsigned long long)audits, (unsigned long long)changes,
		 (unsigned long long)k->violations);
	put_result(result, h, counts);
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *go = NULL, *stop = NULL, *ready = NULL, *result = NULL;
	struct sk k = { 0 };
	uint64_t seed = 1;
	long ops = 0;
	unsigned pause_us = 0;
	int audit = 0, rc;
	uh_heap *h;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--audit")) { audit = 1; continue; }
		if (!v) { fprintf(stderr, "prog_iso_skew: %s needs a value\n", a); return 1; }
		if (!strcmp(a, "--socket")) sock = v;
		else if (!strcmp(a, "--ops")) ops = atol(v);
		else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--dwell-us")) k.dwell_us = (unsigned)atoi(v);
		else if (!strcmp(a, "--go")) go = v;
		else if (!strcmp(a, "--stop")) stop = v;
		else if (!strcmp(a, "--ready")) ready = v;
		else if (!strcmp(a, "--result")) result = v;
		else if (!strcmp(a, "--pause-us")) pause_us = (unsigned)atoi(v);
		else { fprintf(stderr, "prog_iso_skew: unknown option %s\n", a); return 1; }
		i++;
	}
	if ((rc = uh_connect(sock, 0, &h)) != 0 || (rc = uh_root_get(h, "skew.x", &k.obj[0])) != 0 ||
	    (rc = uh_root_get(h, "skew.y", &k.obj[1])) != 0) {
		fprintf(stderr, "prog_iso_skew: attach: %s: %s\n", uh_strerror(rc), uh_errmsg());
		return 1;
	}
	while (go && access(go, F_OK) != 0)
		usleep(1000);
	if (audit)
		auditor(h, &k, stop, ready, result, pause_us);
	else
		worker(h, &k, ops, seed, result);
	uh_disconnect(h);
	return k.violations ? 1 : 0;
}
