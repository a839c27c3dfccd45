/*
 * prog_mp_b.c -- process B (and C) of test_multiprocess.
 * Usage: prog_mp_b <socket> update|check
 *
 * update: finds the roots "mp.alice" and "mp.bob" made by process A, checks
 *   A's values (1000, 2000, owners, peers), then moves 500 from bob to
 *   alice in one block. It never declares the class: it reads the layout
 *   from the heap's class table.
 * check: checks the values after the transfer (1500, 1500), e.g. from a
 *   third process after a heapd restart.
 * Exits 0 when every check passed.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

/* Field indexes, found by name at run time. */
static uint32_t f_balance, f_owner, f_peer;

static void check_owner(uh_heap *h, uint32_t cls, uh_off acct, const char *want)
{
	uh_field_info fi;
	uh_off s = 0;
	const char *data = NULL;
	size_t len = 0;

	TH_CHECK_RC(uh_field_info_get(h, cls, f_owner, &fi));
	TH_CHECK_RC(uh_read(h, acct, fi.offset, &s, 8));
	TH_CHECK_RC(uh_string_get(h, s, &data, &len));
	TH_CHECK(data && len == strlen(want) && memcmp(data, want, len) == 0);
}

static int transfer(uh_heap *h, uh_off from, uh_off to, int64_t amount)
{
	int64_t a = 0, b = 0;
	int rc = uh_begin(h);

	if (rc == 0) rc = uh_get_i64(h, from, f_balance, &a);
	if (rc == 0) rc = uh_get_i64(h, to, f_balance, &b);
	if (rc == 0) rc = uh_set_i64(h, from, f_balance, a - amount);
	if (rc == 0) rc = uh_set_i64(h, to, f_balance, b + amount);
	if (rc == 0)
		return uh_commit(h);
	if (uh_in_block(h))
		uh_abort(h);
	return rc;
}

int main(int argc, char **argv)
{
	uh_heap *h = NULL;
	uh_off alice = 0, bob = 0, peer = 0;
	uint32_t cls = 0, acls = 0;
	int64_t a = 0, b = 0;
	int update, rc;

	if (argc != 3 || (strcmp(argv[2], "update") && strcmp(argv[2], "check"))) {
		fprintf(stderr, "usage: prog_mp_b <socket> update|check\n");
		return 2;
	}
	update = strcmp(argv[2], "update") == 0;
	rc = uh_connect(argv[1], 0, &h);
	if (rc != 0) {
		fprintf(stderr, "connect %s: %s\n", argv[1], uh_errmsg());
		return 2;
	}
	/* The layout comes from the heap: no declaration in this process. */
	TH_CHECK_RC(uh_class_find(h, "Account", &cls));
	TH_CHECK_RC(uh_field_find(h, cls, "balance", &f_balance));
	TH_CHECK_RC(uh_field_find(h, cls, "owner", &f_owner));
	TH_CHECK_RC(uh_field_find(h, cls, "peer", &f_peer));
	TH_CHECK_RC(uh_root_get(h, "mp.alice", &alice));
	TH_CHECK_RC(uh_root_get(h, "mp.bob", &bob));
	TH_CHECK_RC(uh_obj_class(h, alice, &acls));
	TH_CHECK_EQ(acls, cls);
	TH_CHECK_RC(uh_get_ref(h, alice, f_peer, &peer));
	TH_CHECK_EQ(peer, bob);
	TH_CHECK_RC(uh_get_ref(h, bob, f_peer, &peer));
	TH_CHECK_EQ(peer, alice);
	check_owner(h, cls, alice, "alice");
	check_owner(h, cls, bob, "bob");
	TH_CHECK_RC(uh_get_i64(h, alice, f_balance, &a));
	TH_CHECK_RC(uh_get_i64(h, bob, f_balance, &b));
	if (update) {
		TH_CHECK_EQ(a, 1000);
		TH_CHECK_EQ(b, 2000);
		TH_CHECK_RC(transfer(h, bob, alice, 500));
		printf("B: read alice=%lld bob=%lld, moved 500 from bob to alice\n",
		       (long long)a, (long long)b);
	} else {
		TH_CHECK_EQ(a, 1500);
		TH_CHECK_EQ(b, 1500);
		printf("C: found alice=%lld bob=%lld\n", (long long)a, (long long)b);
	}
	fflush(stdout);
	uh_disconnect(h);
	return th_summary(update ? "prog_mp_b update" : "prog_mp_b check");
}
