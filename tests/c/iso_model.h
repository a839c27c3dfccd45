/*
 * iso_model.h -- the isolation tests' bank, shared by the tests
 * (test_iso_*.c) and their child programs (prog_iso_*.c) so that every
 * process derives the same objects and the same expected balances.
 *
 * The heap holds:
 *   root "iso.bank"       -> IsoBank {a0..a15: ref IsoAccount}
 *   root "iso.ledger.<w>" -> IsoLedger {count}: transfers writer w committed
 * IsoAccount {balance}. A transfer block of writer w reads its ledger count
 * c, moves money between two accounts and sets the count to c + 1, all in
 * one block: the ledger is the heap's own record of the writer's committed
 * transfers.
 *
 * In model mode (the kill test) transfer number s of writer w is a fixed
 * function of (w, s) (iso_move) and always moves the full amount, so the
 * expected balances are a function of the ledger counts alone
 * (iso_model_add): a checker needs nothing else.
 */
#ifndef ISO_MODEL_H
#define ISO_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "uniheap.h"

#define ISO_NACCT 16
#define ISO_MAX_WRITERS 8
#define ISO_INIT_BALANCE 1000

/* Exit codes of the child programs (0 is success, 1 a failure). */
#define ISO_EXIT_LOST_HEAPD 3	/* a control call found heapd gone */
#define ISO_EXIT_GAVE_UP 4	/* conflicts for too long */

struct iso_classes {
	uint32_t account, bank, ledger;
};

/* What a process finds through the roots. */
struct iso_bank {
	int nw;				/* writers (ledgers) */
	uh_off acct[ISO_NACCT];
	uh_off ledger[ISO_MAX_WRITERS];
};

/* Register the classes (idempotent: an RPC each time, which also makes
 * it a cheap "is heapd there" probe). Returns 0 or the UH_E* code. */
static inline int iso_register(uh_heap *h, struct iso_classes *c)
{
	static const uh_field_spec acc[] = { { "balance", UH_T_I64, 0 } };
	static const uh_field_spec led[] = { { "count", UH_T_I64, 0 } };
	static const char *names[ISO_NACCT] = {
		"a0", "a1", "a2",  "a3",  "a4",  "a5",  "a6",  "a7",
		"a8", "a9", "a10", "a11", "a12", "a13", "a14", "a15",
	};
	uh_field_spec bank[ISO_NACCT];
	int rc;

	if ((rc = uh_class_register(h, "IsoAccount", acc, 1, &c->account)) != 0)
		return rc;
	if ((rc = uh_class_register(h, "IsoLedger", led, 1, &c->ledger)) != 0)
		return rc;
	for (int i = 0; i < ISO_NACCT; i++) {
		bank[i].name = names[i];
		bank[i].type = UH_T_REF;
		bank[i].ref_class = c->account;
	}
	return uh_class_register(h, "IsoBank", bank, ISO_NACCT, &c->bank);
}

static inline void iso_ledger_root(char *buf, size_t n, int w)
{
	snprintf(buf, n, "iso.ledger.%d", w);
}

#define ISO_TRY(call)				\
	do {					\
		int iso_rc_ = (call);		\
		if (iso_rc_ != 0)		\
			return iso_rc_;		\
	} while (0)

/* Body of the setup block: the bank, its accounts at init, nw ledgers. */
static inline int iso_create_body(uh_heap *h, const struct iso_classes *c, int nw,
				  int64_t init, struct iso_bank *b)
{
	uh_off bank;
	char name[32];

	ISO_TRY(uh_alloc(h, c->bank, &bank));
	for (int i = 0; i < ISO_NACCT; i++) {
		ISO_TRY(uh_alloc(h, c->account, &b->acct[i]));
		ISO_TRY(uh_set_i64(h, b->acct[i], 0, init));
		ISO_TRY(uh_set_ref(h, bank, (uint32_t)i, b->acct[i]));
	}
	for (int w = 0; w < nw; w++) {
		ISO_TRY(uh_alloc(h, c->ledger, &b->ledger[w]));
		iso_ledger_root(name, sizeof(name), w);
		ISO_TRY(uh_root_set(h, name, b->ledger[w]));
	}
	b->nw = nw;
	return uh_root_set(h, "iso.bank", bank);
}

/* Create the bank in one block (before any writer starts).
 * Returns 0 or the UH_E* code; on failure nothing was created. */
static inline int iso_create(uh_heap *h, int nw, int64_t init, struct iso_bank *b)
{
	struct iso_classes c;
	int rc;

	if (nw < 1 || nw > ISO_MAX_WRITERS)
		return UH_EINVAL;
	if ((rc = iso_register(h, &c)) != 0 || (rc = uh_begin(h)) != 0)
		return rc;
	rc = iso_create_body(h, &c, nw, init, b);
	if (rc == 0)
		return uh_commit(h);
	uh_abort(h);
	return rc;
}

/* Find the bank's accounts and nw ledgers through the roots (the
 * references never change after creation). Returns 0 or the UH_E* code. */
static inline int iso_open(uh_heap *h, int nw, struct iso_bank *b)
{
	uh_off bank;
	char name[32];

	if (nw < 1 || nw > ISO_MAX_WRITERS)
		return UH_EINVAL;
	ISO_TRY(uh_root_get(h, "iso.bank", &bank));
	for (int i = 0; i < ISO_NACCT; i++)
		ISO_TRY(uh_get_ref(h, bank, (uint32_t)i, &b->acct[i]));
	for (int w = 0; w < nw; w++) {
		iso_ledger_root(name, sizeof(name), w);
		ISO_TRY(uh_root_get(h, name, &b->ledger[w]));
	}
	b->nw = nw;
	return 0;
}

/* Microseconds of CLOCK_MONOTONIC. */
static inline uint64_t iso_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* One increment of the counter object (an IsoLedger's first field) as a
 * read-modify-write block body for uh_run, with dwell_us on the CPU
 * between the read and the write (busy, not sleeping: a slow block keeps
 * its read value on the CPU), so that blocks overlap. */
struct iso_inc {
	uh_off counter;
	unsigned dwell_us;
};

static inline int iso_inc_body(uh_heap *h, void *arg)
{
	struct iso_inc *x = arg;
	int64_t v;

	ISO_TRY(uh_get_i64(h, x->counter, 0, &v));
	for (uint64_t end = iso_now_us() + x->dwell_us; x->dwell_us && iso_now_us() < end;)
		;
	return uh_set_i64(h, x->counter, 0, v + 1);
}

/* xorshift64*: reproducible from a printed seed. *s must not be 0. */
static inline uint64_t iso_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* Model mode: transfer s (>= 1) of writer w moves *amount from account
 * *from to account *to (never the same one). Can't fail. */
static inline void iso_move(int w, int64_t s, int *from, int *to, int64_t *amount)
{
	uint64_t x = th_mix64((uint64_t)w * 2654435761u + (uint64_t)s * 40503u + 7u);
	int i = (int)(x % ISO_NACCT);
	int j = (int)((x >> 8) % (ISO_NACCT - 1));

	*from = i;
	*to = j >= i ? j + 1 : j;
	*amount = 1 + (int64_t)((x >> 20) % 100u);
}

/* Model mode: add the effect of writer w's transfers (from+1 .. to) to
 * bal[]. Can't fail. */
static inline void iso_model_add(int w, int64_t from, int64_t to, int64_t bal[ISO_NACCT])
{
	for (int64_t s = from + 1; s <= to; s++) {
		int a, b;
		int64_t amt;
		iso_move(w, s, &a, &b, &amt);
		bal[a] -= amt;
		bal[b] += amt;
	}
}

#endif /* ISO_MODEL_H */
