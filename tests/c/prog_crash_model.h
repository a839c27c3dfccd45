/*
 * prog_crash_model.h -- the crash tests' workload model, shared by the
 * workload (prog_crash_work.c) and the checker (prog_crash_check.c) so that
 * both derive the same expected heap from the same numbers.
 *
 * The heap holds a bank and per-writer state:
 *   root "bank"    -> CrashBank {a0..a7: ref CrashAccount}
 *   root "txcount" -> CrashCounter {count}: blocks committed, all writers
 *   root "w<w>"    -> CrashWriter {seq, last: ref CrashRecord, pid}
 *   root "w<w>.tag"-> the writer's last record, when seq % 3 == 0
 *   roots "w<w>.h<j>" (j 0..15) -> string "w<w>-h<b>" set by block b
 * Block b (>= 1) of writer w moves delta(w, b) between two accounts, bumps
 * both accounts' move counts and txcount, allocates a new record (with a
 * note string) and frees the previous one, sets root h<b%16> to a new
 * string, deletes root h<(b+8)%16> (freeing its string), sets/deletes the
 * tag root. Block 0 creates the writer (and the bank if it is missing).
 * Every effect of a block is a function of (w, b), and account updates
 * commute, so the whole expected heap is a function of each writer's
 * committed block count: the checker needs nothing but seq per writer.
 */
#ifndef PROG_CRASH_MODEL_H
#define PROG_CRASH_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "harness.h"
#include "uniheap.h"

#define CM_NACCT 8
#define CM_INIT_BALANCE 1000000
#define CM_NH 16			/* h roots per writer */
#define CM_MAX_WRITERS 8

/* Field indexes (declaration order). */
enum { CM_ACC_BALANCE, CM_ACC_MOVES, CM_ACC_TOUCH };
enum { CM_CNT_COUNT, CM_CNT_TOUCH };
enum { CM_WR_SEQ, CM_WR_LAST, CM_WR_PID };
enum { CM_REC_BLOCK, CM_REC_WRITER, CM_REC_AMOUNT, CM_REC_NOTE };

struct cm_classes {
	uint32_t account, bank, counter, writer, record;
};

/* Register the model's classes (idempotent). Returns 0 or the UH_E* code. */
static inline int cm_register(uh_heap *h, struct cm_classes *c)
{
	/* touch: written first to take the object's lock before reading it
	 * (prog_crash_work's lock-first mode). */
	static const uh_field_spec acc[] = {
		{ "balance", UH_T_I64, 0 }, { "moves", UH_T_I64, 0 }, { "touch", UH_T_I64, 0 },
	};
	static const uh_field_spec cnt[] = { { "count", UH_T_I64, 0 }, { "touch", UH_T_I64, 0 } };
	uh_field_spec bank[CM_NACCT];
	static const char *bank_names[CM_NACCT] = {
		"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
	};
	int rc;

	if ((rc = uh_class_register(h, "CrashAccount", acc, 3, &c->account)) != 0)
		return rc;
	for (int i = 0; i < CM_NACCT; i++) {
		bank[i].name = bank_names[i];
		bank[i].type = UH_T_REF;
		bank[i].ref_class = c->account;
	}
	if ((rc = uh_class_register(h, "CrashBank", bank, CM_NACCT, &c->bank)) != 0)
		return rc;
	if ((rc = uh_class_register(h, "CrashCounter", cnt, 2, &c->counter)) != 0)
		return rc;
	{
		const uh_field_spec rec[] = {
			{ "block", UH_T_I64, 0 }, { "writer", UH_T_I64, 0 },
			{ "amount", UH_T_I64, 0 }, { "note", UH_T_STRING, 0 },
		};
		if ((rc = uh_class_register(h, "CrashRecord", rec, 4, &c->record)) != 0)
			return rc;
		const uh_field_spec wr[] = {
			{ "seq", UH_T_I64, 0 }, { "last", UH_T_REF, c->record },
			{ "pid", UH_T_I64, 0 },
		};
		if ((rc = uh_class_register(h, "CrashWriter", wr, 3, &c->writer)) != 0)
			return rc;
	}
	return 0;
}

/* Block b of writer w moves amount from account *from to account *to. */
static inline void cm_move(int w, int64_t b, int *from, int *to, int64_t *amount)
{
	uint64_t x = th_mix64((uint64_t)w * 1000003u + (uint64_t)b + 17u);
	int i = (int)(x % CM_NACCT);
	int j = (int)((x >> 8) % (CM_NACCT - 1));

	if (j >= i)
		j++;
	*from = i;
	*to = j;
	*amount = 1 + (int64_t)((x >> 16) % 100u);
}

static inline void cm_root_w(char *buf, size_t n, int w)
{
	snprintf(buf, n, "w%d", w);
}

static inline void cm_root_tag(char *buf, size_t n, int w)
{
	snprintf(buf, n, "w%d.tag", w);
}

static inline void cm_root_h(char *buf, size_t n, int w, int j)
{
	snprintf(buf, n, "w%d.h%d", w, j);
}

static inline void cm_note(char *buf, size_t n, int w, int64_t b)
{
	snprintf(buf, n, "w%d-b%lld", w, (long long)b);
}

static inline void cm_hval(char *buf, size_t n, int w, int64_t b)
{
	snprintf(buf, n, "w%d-h%lld", w, (long long)b);
}

/* Root h<j> of a writer after its block s: the block that set it, or 0 if
 * absent. Block b sets h<b%16> and deletes h<(b+8)%16>. */
static inline int64_t cm_h_setter(int64_t s, int j)
{
	for (int64_t b = s; b >= 1 && b > s - CM_NH; b--) {
		if (b % CM_NH == j)
			return b;
		if ((b + CM_NH / 2) % CM_NH == j)
			return 0;
	}
	return 0;
}

/* The tag root is present after block s iff s >= 1 and s % 3 == 0. */
static inline int cm_tag_present(int64_t s)
{
	return s >= 1 && s % 3 == 0;
}

/*
 * Ack records. A writer appends one per committed block; the checker reads
 * them back. write(2) on O_APPEND is NOT atomic against SIGKILL: the
 * kernel copies a write page by page and stops between two pages when a
 * fatal signal is pending, so a line that crosses a page boundary of the
 * file can be cut there ("63" of "635489\n"), and the next process's
 * record then completes it into a bogus number ("63635489\n"). So every
 * record is CM_ACK_LEN bytes, a divisor of any page size: with the file
 * a multiple of CM_ACK_LEN long, no record crosses a page, and each is
 * copied in one step. The checker takes only well-formed records.
 */
#define CM_ACK_LEN 16		/* 15 digits and '\n' */

/* The record for block b (0 <= b < 10^15) into buf (at least
 * CM_ACK_LEN + 1 bytes): zero-padded decimal, then '\n'. */
static inline void cm_ack_format(char *buf, int64_t b)
{
	uint64_t v = (uint64_t)b;

	for (int i = CM_ACK_LEN - 2; i >= 0; i--, v /= 10)
		buf[i] = (char)('0' + v % 10);
	buf[CM_ACK_LEN - 1] = '\n';
	buf[CM_ACK_LEN] = '\0';
}

/* Block number of a record line (as fgets returns it), or -1 if the line
 * is not exactly one well-formed record. */
static inline int64_t cm_ack_parse(const char *line)
{
	int64_t b = 0;

	for (int i = 0; i < CM_ACK_LEN - 1; i++) {
		if (line[i] < '0' || line[i] > '9')
			return -1;
		b = b * 10 + (line[i] - '0');
	}
	return line[CM_ACK_LEN - 1] == '\n' && line[CM_ACK_LEN] == '\0' ? b : -1;
}

#endif /* PROG_CRASH_MODEL_H */
