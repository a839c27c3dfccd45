/*
 * test_client_death.c -- a client SIGKILLed in the middle of a block:
 * heapd reaps its session, releases its locks and rolls its block back,
 * while the other clients keep going. A second client then updates the
 * same objects (retrying on conflict for at most 5 s) and never sees the
 * dead block's writes; heapctl stats counts the reaped session.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

static const char *SUITE = "test_client_death";

static int64_t get(uh_heap *h, uh_off o)
{
	int64_t v = -1;

	TH_CHECK_RC(uh_get_i64(h, o, 0, &v));
	return v;
}

/* Write both objects in one block; retry on conflict for up to 5 s.
 * Every attempt checks that the dead client's writes never show. */
static int update_after_death(uh_heap *h, uh_off a, uh_off b, int *tries, int *saw_dead)
{
	uint64_t end = th_now_ms() + 5000;
	int rc;

	do {
		int64_t va = 0, vb = 0;
		(*tries)++;
		uh_get_i64(h, a, 0, &va);
		uh_get_i64(h, b, 0, &vb);
		if (va == 666 || vb == 667)
			(*saw_dead)++;
		rc = uh_begin(h);
		if (rc == 0) rc = uh_set_i64(h, a, 0, 10);
		if (rc == 0) rc = uh_set_i64(h, b, 0, 20);
		if (rc == 0) rc = uh_commit(h);
		if (rc != 0 && uh_in_block(h))
			uh_abort(h);	/* a failed block stays open until ended */
		if (rc == UH_ECONFLICT)
			th_sleep_ms(20);
	} while (rc == UH_ECONFLICT && th_now_ms() < end);
	return rc;
}

/* heapctl stats (human and JSON) until sessions_reaped >= 1, <= 5 s. */
static void check_reaped(const struct th_heapd *d)
{
	static char out[16384];
	uint64_t reaped = 0, end = th_now_ms() + 5000;
	int rc;

	do {
		rc = th_heapctl(d, "stats", out, sizeof(out));
		if (rc == 0 && th_find_u64(out, "sessions_reaped", &reaped) != 0)
			th_find_u64(out, "sessions reaped", &reaped);
		if (reaped >= 1)
			break;
		th_sleep_ms(50);
	} while (th_now_ms() < end);
	TH_CHECK_EQ(rc, 0);
	TH_CHECK(reaped >= 1);
	if (reaped < 1)
		fprintf(stderr, "heapctl stats said:\n%s\n", out);

	reaped = 0;
	rc = th_heapctl(d, "--json stats", out, sizeof(out));
	TH_CHECK_EQ(rc, 0);
	if (th_find_u64(out, "sessions_reaped", &reaped) != 0)
		th_find_u64(out, "sessionsReaped", &reaped);
	TH_CHECK(reaped >= 1);
	if (reaped < 1)
		fprintf(stderr, "heapctl --json stats said:\n%s\n", out);
}

int main(void)
{
	static const uh_field_spec f[] = { { "v", UH_T_I64, 0 } };
	static struct th_heapd d;
	uh_heap *h;
	uh_off a = 0, b = 0;
	uint32_t cls;
	pid_t holder;
	int tries = 0, saw_dead = 0, rc;

	if (th_heapd_start(&d, NULL) != 0 || th_connect(&d, 0, &h) != 0) {
		TH_CHECK(!"heapd start + connect");
		return th_summary(SUITE);
	}
	TH_CHECK_RC(uh_class_register(h, "Cell", f, 1, &cls));
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_RC(uh_alloc(h, cls, &a));
	TH_CHECK_RC(uh_alloc(h, cls, &b));
	TH_CHECK_RC(uh_set_i64(h, a, 0, 1));
	TH_CHECK_RC(uh_set_i64(h, b, 0, 2));
	TH_CHECK_RC(uh_root_set(h, "death.a", a));
	TH_CHECK_RC(uh_root_set(h, "death.b", b));
	TH_CHECK_RC(uh_commit(h));

	char *argv[] = { (char *)th_bin("prog_mp_holder"), d.sock, d.dir, NULL };
	holder = th_spawn(argv, NULL);
	TH_CHECK(holder > 0);
	TH_CHECK(th_wait_file(d.dir, "holder.ready", 10000) == 0);

	/* While the holder lives, its locks stop us and its writes are unseen. */
	TH_CHECK_RC(uh_begin(h));
	TH_CHECK_ERR(uh_set_i64(h, a, 0, 5), UH_ECONFLICT);
	TH_CHECK_RC(uh_abort(h));
	TH_CHECK_EQ(get(h, a), 1);
	TH_CHECK_EQ(get(h, b), 2);

	TH_CHECK_EQ(th_kill(holder), 128 + 9);
	rc = update_after_death(h, a, b, &tries, &saw_dead);
	TH_CHECK_RC(rc);
	TH_CHECK_EQ(saw_dead, 0);
	printf("update after the holder's death committed after %d tries\n", tries);
	TH_CHECK_EQ(get(h, a), 10);
	TH_CHECK_EQ(get(h, b), 20);
	check_reaped(&d);
	uh_disconnect(h);

	/* heapd itself kept running, and the values are durable */
	TH_CHECK(th_heapd_restart(&d) == 0);
	if (th_connect(&d, 0, &h) == 0) {
		TH_CHECK_RC(uh_root_get(h, "death.a", &a));
		TH_CHECK_EQ(get(h, a), 10);
		uh_disconnect(h);
	}
	th_heapd_cleanup(&d);
	return th_summary(SUITE);
}
