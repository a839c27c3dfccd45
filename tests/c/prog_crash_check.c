/*
 * prog_crash_check.c -- the crash tests' checker. Attaches to a recovered,
 * quiet heap and compares it with the oracle: the ack files of the
 * workload writers (prog_crash_work.c) and the model (prog_crash_model.h).
 *
 *   prog_crash_check --socket S --ack-dir D [--writers N] [--probe]
 *
 * For each writer w (ack file D/ack.<w>): with A the highest acknowledged
 * block and S the writer's seq in the heap, S must be A (everything acked
 * is there, nothing more) or A + 1 (the block in flight at the crash
 * committed without its ack). Then every object and root the model
 * derives from all writers' S must be in the heap exactly (which shows
 * that the in-flight block is all-or-nothing), and nothing else: balances,
 * move counts, txcount, records, notes, tag and h roots, root count, bank
 * total.
 * --probe: finally write every account, the counter and every writer in
 * one block: it must commit at the first try (recovery left no lock).
 *
 * Prints one line per finding; "check: ok" at the end when all is well, and
 * "expect_live=<n>" (objects the model says are reachable).
 * Exit: 0 ok, 1 mismatch, 2 could not attach.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "prog_crash_model.h"

static int g_bad;

#define BAD(...)					\
	do {						\
		printf("MISMATCH: " __VA_ARGS__);	\
		putchar('\n');				\
		g_bad++;				\
	} while (0)

struct ck {
	uh_heap *h;
	struct cm_classes c;
	int nw;
	int64_t acked[CM_MAX_WRITERS], seq[CM_MAX_WRITERS];
	uh_off writer[CM_MAX_WRITERS];
	uh_off bank, acct[CM_NACCT], counter;
	uint32_t note_off;
	uint64_t roots, live;
};

/* Highest block number in the ack file, -1 if none. A malformed line is
 * an ack its writer did not finish (the writer never tears one, see
 * cm_ack_format, but a number glued from two would look plausible):
 * it acknowledges nothing, and is reported. */
static int64_t read_acks(const char *dir, int w)
{
	char path[1024], line[64];
	int64_t max = -1, n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ack.%d", dir, w);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int64_t b = cm_ack_parse(line);
		n++;
		if (b < 0)
			printf("note: writer %d: ack line %lld is not a %d-byte record: "
			       "\"%.*s\" (ignored)\n", w, (long long)n, CM_ACK_LEN,
			       (int)strcspn(line, "\n"), line);
		if (b > max)
			max = b;
	}
	fclose(f);
	return max;
}

/* The string object s must hold exactly want. */
static void expect_string(struct ck *k, uh_off s, const char *want, const char *what)
{
	const char *data;
	size_t len;
	int rc = uh_string_get(k->h, s, &data, &len);

	if (rc != 0) {
		BAD("%s: string at %llu unreadable: %s: %s", what, (unsigned long long)s,
		    uh_strerror(rc), uh_errmsg());
		return;
	}
	if (len != strlen(want) || memcmp(data, want, len) != 0)
		BAD("%s: string is \"%.*s\", want \"%s\"", what, (int)len, data, want);
}

static int64_t get_i64(struct ck *k, uh_off o, uint32_t f, const char *what)
{
	int64_t v = 0;
	int rc = uh_get_i64(k->h, o, f, &v);

	if (rc != 0)
		BAD("%s: uh_get_i64: %s: %s", what, uh_strerror(rc), uh_errmsg());
	return v;
}

static void expect_class(struct ck *k, uh_off o, uint32_t cls, const char *what)
{
	uint32_t got = 0;
	int rc = uh_obj_class(k->h, o, &got);

	if (rc != 0)
		BAD("%s: object %llu invalid: %s: %s", what, (unsigned long long)o,
		    uh_strerror(rc), uh_errmsg());
	else if (got != cls)
		BAD("%s: object %llu has class %u, want %u", what, (unsigned long long)o,
		    got, cls);
}

/* Bank, accounts, counter. Returns 0 if the bank exists. */
static int load_bank(struct ck *k)
{
	int rc = uh_root_get(k->h, "bank", &k->bank);

	if (rc == UH_ENOTFOUND)
		return -1;
	expect_class(k, k->bank, k->c.bank, "root bank");
	for (int i = 0; i < CM_NACCT; i++) {
		rc = uh_get_ref(k->h, k->bank, (uint32_t)i, &k->acct[i]);
		if (rc != 0 || !k->acct[i])
			BAD("bank.a%d: %s", i, rc ? uh_errmsg() : "null");
		else
			expect_class(k, k->acct[i], k->c.account, "account");
	}
	if (uh_root_get(k->h, "txcount", &k->counter) != 0)
		BAD("root txcount missing while bank exists");
	else
		expect_class(k, k->counter, k->c.counter, "root txcount");
	k->roots += 2;
	k->live += 2 + CM_NACCT;
	return 0;
}

/* The oracle proper: acked vs committed block numbers. */
static void check_seq(struct ck *k, int w)
{
	char name[32];
	int rc;

	cm_root_w(name, sizeof(name), w);
	rc = uh_root_get(k->h, name, &k->writer[w]);
	if (rc == UH_ENOTFOUND) {
		k->seq[w] = -1;
		k->writer[w] = 0;
	} else {
		expect_class(k, k->writer[w], k->c.writer, name);
		k->seq[w] = get_i64(k, k->writer[w], CM_WR_SEQ, name);
	}
	printf("writer %d: acknowledged %lld, heap has %lld\n", w, (long long)k->acked[w],
	       (long long)k->seq[w]);
	if (k->seq[w] < k->acked[w])
		BAD("writer %d: acknowledged block %lld lost (heap has %lld)", w,
		    (long long)k->acked[w], (long long)k->seq[w]);
	else if (k->seq[w] > k->acked[w] + 1)
		BAD("writer %d: heap has block %lld, only %lld acknowledged", w,
		    (long long)k->seq[w], (long long)k->acked[w]);
}

/* Balances, move counts and txcount from every writer's seq. */
static void check_bank(struct ck *k)
{
	int64_t bal[CM_NACCT], moves[CM_NACCT] = { 0 }, blocks = 0, total = 0;

	for (int i = 0; i < CM_NACCT; i++)
		bal[i] = CM_INIT_BALANCE;
	for (int w = 0; w < k->nw; w++)
		for (int64_t b = 1; b <= k->seq[w]; b++) {
			int from, to;
			int64_t amount;
			cm_move(w, b, &from, &to, &amount);
			bal[from] -= amount;
			bal[to] += amount;
			moves[from]++;
			moves[to]++;
			blocks++;
		}
	for (int i = 0; i < CM_NACCT; i++) {
		if (!k->acct[i])
			continue;
		int64_t v = get_i64(k, k->acct[i], CM_ACC_BALANCE, "balance");
		int64_t m = get_i64(k, k->acct[i], CM_ACC_MOVES, "moves");
		total += v;
		if (v != bal[i])
			BAD("account %d: balance %lld, want %lld", i, (long long)v,
			    (long long)bal[i]);
		if (m != moves[i])
			BAD("account %d: moves %lld, want %lld", i, (long long)m,
			    (long long)moves[i]);
	}
	if (total != (int64_t)CM_NACCT * CM_INIT_BALANCE)
		BAD("bank total %lld, want %lld", (long long)total,
		    (long long)CM_NACCT * CM_INIT_BALANCE);
	if (k->counter) {
		int64_t c = get_i64(k, k->counter, CM_CNT_COUNT, "txcount");
		if (c != blocks)
			BAD("txcount %lld, want %lld", (long long)c, (long long)blocks);
	}
}

/* Writer w's last record and its note. */
static void check_record(struct ck *k, int w, int64_t s, uh_off *rec)
{
	char text[64];
	uh_off note = 0;
	int from, to;
	int64_t amount;

	*rec = 0;
	if (uh_get_ref(k->h, k->writer[w], CM_WR_LAST, rec) != 0) {
		BAD("writer %d: last unreadable: %s", w, uh_errmsg());
		return;
	}
	if (s == 0) {
		if (*rec)
			BAD("writer %d: seq 0 but last record set", w);
		return;
	}
	if (!*rec) {
		BAD("writer %d: seq %lld but no last record", w, (long long)s);
		return;
	}
	expect_class(k, *rec, k->c.record, "last record");
	cm_move(w, s, &from, &to, &amount);
	if (get_i64(k, *rec, CM_REC_BLOCK, "record.block") != s)
		BAD("writer %d: last record is not of block %lld", w, (long long)s);
	if (get_i64(k, *rec, CM_REC_WRITER, "record.writer") != w)
		BAD("writer %d: last record names another writer", w);
	if (get_i64(k, *rec, CM_REC_AMOUNT, "record.amount") != amount)
		BAD("writer %d: last record amount wrong", w);
	if (uh_read(k->h, *rec, k->note_off, &note, sizeof(note)) != 0 || !note) {
		BAD("writer %d: record note missing", w);
		return;
	}
	cm_note(text, sizeof(text), w, s);
	expect_string(k, note, text, "record note");
	k->live += 2;
}

/* Tag and h roots of writer w after its block s. */
static void check_roots_of(struct ck *k, int w, int64_t s, uh_off rec)
{
	char name[32], text[64];
	uh_off v;
	int rc;

	cm_root_tag(name, sizeof(name), w);
	rc = uh_root_get(k->h, name, &v);
	if (cm_tag_present(s)) {
		k->roots++;
		if (rc != 0)
			BAD("root %s missing after block %lld", name, (long long)s);
		else if (v != rec)
			BAD("root %s does not name the last record", name);
	} else if (rc == 0) {
		BAD("root %s present after block %lld", name, (long long)s);
	}
	for (int j = 0; j < CM_NH; j++) {
		int64_t setter = cm_h_setter(s, j);
		cm_root_h(name, sizeof(name), w, j);
		rc = uh_root_get(k->h, name, &v);
		if (!setter) {
			if (rc == 0)
				BAD("root %s present after block %lld", name, (long long)s);
			continue;
		}
		k->roots++;
		k->live++;
		if (rc != 0) {
			BAD("root %s missing after block %lld", name, (long long)s);
			continue;
		}
		cm_hval(text, sizeof(text), w, setter);
		expect_string(k, v, text, name);
	}
}

static void check_writers(struct ck *k)
{
	for (int w = 0; w < k->nw; w++) {
		uh_off rec = 0;
		int64_t s = k->seq[w];
		if (s < 0)
			continue;
		k->roots++;
		k->live++;
		check_record(k, w, s, &rec);
		check_roots_of(k, w, s, rec);
	}
}

static void check_root_count(struct ck *k)
{
	uint64_t n = 0;
	int rc = uh_root_count(k->h, &n);

	if (rc != 0)
		BAD("uh_root_count: %s", uh_errmsg());
	else if (n != k->roots)
		BAD("%llu roots, want %llu", (unsigned long long)n,
		    (unsigned long long)k->roots);
	/* the root map, its table (allocated by the first root set; the
	 * workload never deletes its last root) and one name per root */
	k->live += (k->roots ? 2 : 1) + k->roots;
}

/* One block writing everything back unchanged: no lock may be left. */
static void probe(struct ck *k)
{
	int rc = uh_begin(k->h);

	for (int i = 0; rc == 0 && i < CM_NACCT; i++) {
		int64_t v;
		if (!k->acct[i])
			continue;
		rc = uh_get_i64(k->h, k->acct[i], CM_ACC_MOVES, &v);
		if (rc == 0)
			rc = uh_set_i64(k->h, k->acct[i], CM_ACC_MOVES, v);
	}
	for (int w = 0; rc == 0 && w < k->nw; w++) {
		int64_t v;
		if (!k->writer[w])
			continue;
		rc = uh_get_i64(k->h, k->writer[w], CM_WR_PID, &v);
		if (rc == 0)
			rc = uh_set_i64(k->h, k->writer[w], CM_WR_PID, v);
	}
	if (rc == 0 && k->counter) {
		int64_t v;
		rc = uh_get_i64(k->h, k->counter, CM_CNT_COUNT, &v);
		if (rc == 0)
			rc = uh_set_i64(k->h, k->counter, CM_CNT_COUNT, v);
	}
	if (rc == 0)
		rc = uh_commit(k->h);
	else if (uh_in_block(k->h))
		uh_abort(k->h);
	if (rc != 0)
		BAD("probe write after recovery failed (lock left held?): %s: %s",
		    uh_strerror(rc), uh_errmsg());
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *dir = ".";
	int do_probe = 0, rc;
	struct ck k = { .nw = 1 };
	uh_field_info fi;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--probe")) { do_probe = 1; continue; }
		if (!v) { fprintf(stderr, "prog_crash_check: %s needs a value\n", a); return 2; }
		if (!strcmp(a, "--socket")) sock = v;
		else if (!strcmp(a, "--ack-dir")) dir = v;
		else if (!strcmp(a, "--writers")) k.nw = atoi(v);
		else { fprintf(stderr, "prog_crash_check: unknown option %s\n", a); return 2; }
		i++;
	}
	if (k.nw < 1 || k.nw > CM_MAX_WRITERS) {
		fprintf(stderr, "prog_crash_check: --writers must be 1..%d\n", CM_MAX_WRITERS);
		return 2;
	}
	if ((rc = uh_connect(sock, 0, &k.h)) != 0) {
		fprintf(stderr, "prog_crash_check: uh_connect: %s: %s\n", uh_strerror(rc),
			uh_errmsg());
		return 2;
	}
	if ((rc = cm_register(k.h, &k.c)) != 0 ||
	    (rc = uh_field_info_get(k.h, k.c.record, CM_REC_NOTE, &fi)) != 0) {
		fprintf(stderr, "prog_crash_check: classes: %s: %s\n", uh_strerror(rc),
			uh_errmsg());
		return 2;
	}
	k.note_off = fi.offset;
	for (int w = 0; w < k.nw; w++)
		k.acked[w] = read_acks(dir, w);

	if (load_bank(&k) != 0) {
		/* Only the very first setup block can be missing entirely. */
		for (int w = 0; w < k.nw; w++) {
			k.seq[w] = -1;
			if (k.acked[w] >= 0)
				BAD("writer %d: acknowledged %lld but the bank is missing", w,
				    (long long)k.acked[w]);
		}
	} else {
		for (int w = 0; w < k.nw; w++)
			check_seq(&k, w);
		check_bank(&k);
		check_writers(&k);
	}
	check_root_count(&k);
	if (do_probe && !g_bad)
		probe(&k);
	printf("expect_live=%llu\n", (unsigned long long)k.live);
	printf("check: %s (%d mismatches)\n", g_bad ? "FAILED" : "ok", g_bad);
	uh_disconnect(k.h);
	return g_bad ? 1 : 0;
}
