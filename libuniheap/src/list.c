/*
 * list.c -- persistent growable lists of values of any type.
 *
 * FORMAT (two objects, both kind UH_K_VALUES: arrays of 16-byte typed
 * slots {u64 tag (UH_T_* in the low 32 bits), u64 value}):
 *
 *   header, class UH_CLASS_LIST, 2 slots (payload 32 bytes):
 *     slot 0 (offset 16): tag UH_T_I64, value = length n (>= 0)
 *     slot 1 (offset 32): tag UH_T_REF, value = storage object, or 0 while
 *                         the list has never held an element
 *   storage, class UH_CLASS_VALUES, cap slots (cap = payload / 16):
 *     slot i < n:  element i, tagged with its own type (any UH_T_*; a
 *                  ref/string/bytes element is a REF/STRING/BYTES slot)
 *     slot i >= n: empty (tag 0, value 0)
 *
 * Invariants: n <= cap (cap = 0 without storage); slots past n are empty,
 * so recovery GC (which follows every REF/STRING/BYTES slot of a VALUES
 * object) keeps exactly the objects the elements reference; one storage
 * object belongs to exactly one list.
 *
 * Growth: append/insert into a full storage allocate a new storage of
 * twice the capacity (at least LIST_MIN_CAP), copy the elements (written
 * in place: nobody can reach the new object before commit), switch slot 1
 * to it and free the old storage, all in the operation's block. An insert
 * or pop that would shift more than SHIFT_MAX elements builds a new
 * storage the same way instead of shifting in place: then the redo log
 * holds an ALLOC, a FREE and a few writes, not two entries per shifted
 * element, whatever the list's length (a 1M-element list included). The
 * capacity never shrinks.
 *
 * Crash safety: every change (length, slot writes, storage switch, free
 * of the old storage, UH_FREE_OLD frees) is part of one block, applied
 * from the redo log all or nothing; a new storage is durable (B0) before
 * the block can commit, and a crash before commit leaves it unreachable,
 * so recovery reclaims it.
 *
 * Concurrency: every change writes slot 0 of the header first, so changes
 * to one list serialize on the header's lock. Lock order: header, then
 * storage, then the objects freed (old storage, UH_FREE_OLD targets), so
 * two operations on one list never wait for each other in a cycle. Reads
 * are validated, so a reader never mixes two versions (a storage freed by
 * a concurrent growth makes the reader's block stale: UH_ECONFLICT, which
 * uh_run retries).
 *
 * Errors: arguments and the value are checked before anything is
 * written; after the first write only errors that doom the whole block
 * (conflict, log full, out of memory) can happen, so a failed operation
 * never leaves a half-changed list behind, even inside a user's block.
 */
#include <stdio.h>
#include <string.h>

#include "value.h"

#define LIST_LEN 0u		/* header slot: length */
#define LIST_STORE 1u		/* header slot: storage ref */
#define LIST_HDR_SLOTS 2u
#define LIST_MIN_CAP 8u
#define SHIFT_MAX 32u		/* above: rebuild a small storage instead of shifting */

/* What a list operation reads first. */
struct lst {
	uh_off l;
	uint64_t len;
	uh_off store;		/* 0 if none */
	uint64_t cap;
};

/* The storage named by the header is not a storage: another session's
 * growth may have freed it after we read the header. Reading the header
 * again (validated) dooms our block in that case; else it is damage. */
static int store_gone(uh_heap *h, struct lst *s)
{
	struct uh_slot again;
	char why[512];

	snprintf(why, sizeof(why), "%s", uh_errmsg());
	int rc = uh_slot_read(h, s->l, LIST_STORE, &again);
	if (rc)
		return rc;
	if (h->tx.doomed)
		return uh_err_set(h->tx.doomed, "block was rolled back: %s",
				  uh_strerror(h->tx.doomed));
	return uh_err_set(UH_EINTERNAL, "list %llu is damaged: its storage %llu: %s",
			  (unsigned long long)s->l, (unsigned long long)s->store, why);
}

/* Read the header of list l (validated, through the block). */
static int lst_load(uh_heap *h, uh_off l, struct lst *s)
{
	struct uh_slot n, st;
	int rc;

	memset(s, 0, sizeof(*s));
	s->l = l;
	if (!uh_obj_get(h, l, UH_CLASS_LIST, &rc))
		return rc;
	if (uh_values_nslots(h, l) < LIST_HDR_SLOTS)
		return uh_err_set(UH_EINTERNAL, "list %llu is damaged: header too small",
				  (unsigned long long)l);
	if ((rc = uh_slot_read(h, l, LIST_LEN, &n)) != 0 ||
	    (rc = uh_slot_read(h, l, LIST_STORE, &st)) != 0)
		return rc;
	if (uh_slot_type(n.tag) != UH_T_I64 || (st.value && uh_slot_type(st.tag) != UH_T_REF))
		return uh_err_set(UH_EINTERNAL, "list %llu is damaged: header slots tagged "
				  "%u and %u", (unsigned long long)l, uh_slot_type(n.tag),
				  uh_slot_type(st.tag));
	s->len = n.value;
	s->store = st.value;
	if (s->store) {
		if (!uh_obj_get(h, s->store, UH_CLASS_VALUES, &rc))
			return store_gone(h, s);
		s->cap = uh_values_nslots(h, s->store);
	}
	if (s->len > s->cap)
		return uh_err_set(UH_EINTERNAL, "list %llu is damaged: length %llu > capacity "
				  "%llu", (unsigned long long)l, (unsigned long long)s->len,
				  (unsigned long long)s->cap);
	return 0;
}

static int range_err(const struct lst *s, uint64_t index)
{
	return uh_err_set(UH_ERANGE, "index %llu out of range: list %llu has %llu elements",
			  (unsigned long long)index, (unsigned long long)s->l,
			  (unsigned long long)s->len);
}

static int set_len(uh_heap *h, struct lst *s, uint64_t len)
{
	struct uh_slot n = { UH_T_I64, len };
	int rc = uh_slot_write(h, s->l, LIST_LEN, &n);
	if (rc == 0)
		s->len = len;
	/* Every change writes the length: it is where waiters hear of it. */
	return rc ? rc : uh_tx_changed(h, s->l);
}

/* Copy the elements into ns (see relocate) slot by slot through the
 * block: for a storage this block wrote to, whose writes are in the log. */
static int copy_logged(uh_heap *h, struct lst *s, uh_off ns, uint64_t at, int delta)
{
	struct uh_slot e;
	int rc;

	for (uint64_t i = 0; i < s->len; i++) {	/* bound: length */
		if (delta < 0 && i == at)
			continue;
		uint64_t j = i >= at ? i + (uint64_t)(int64_t)delta : i;
		if ((rc = uh_slot_read(h, s->store, i, &e)) != 0 ||
		    (rc = uh_slot_write(h, ns, j, &e)) != 0)
			return rc;
	}
	return 0;
}

/* Copy the elements into ns with two memcpy: the old storage's bytes in
 * place are its current content once this block holds its lock (it is
 * freed by this step anyway) and has no write to it in its log, or when
 * the block allocated it. ns is new: written in place, unlogged. */
static int copy_slots(uh_heap *h, struct lst *s, uh_off ns, uint64_t at, int delta)
{
	int held = uh_tx_holds(h, s->store), rc;

	if (held == UH_TX_LOCKED)
		return copy_logged(h, s, ns, at, delta);
	if (!held && (rc = uh_tx_lock(h, s->store)) != 0)
		return rc;
	const struct uh_slot *src = (const void *)(h->base + UH_REF_OFFSET(s->store) +
						   UH_OBJHDR_SIZE);
	struct uh_slot *dst = (void *)(h->base + UH_REF_OFFSET(ns) + UH_OBJHDR_SIZE);
	uint64_t head = at < s->len ? at : s->len;

	memcpy(dst, src, head * sizeof(*src));
	if (delta > 0)
		memcpy(dst + head + 1, src + head, (s->len - head) * sizeof(*src));
	else if (delta < 0 && head < s->len)
		memcpy(dst + head, src + head + 1, (s->len - head - 1) * sizeof(*src));
	else if (delta == 0)
		memcpy(dst + head, src + head, (s->len - head) * sizeof(*src));
	return 0;
}

/*
 * Move the elements into a new storage of newcap slots and free the old
 * one. delta 0: plain copy; +1: leave slot `at` empty (elements at >= at
 * move up one); -1: drop element `at` (elements after it move down one).
 * The length slot is the caller's.
 */
static int relocate(uh_heap *h, struct lst *s, uint64_t newcap, uint64_t at, int delta)
{
	uh_off ns;
	int rc;

	if ((rc = uh_values_new(h, UH_CLASS_VALUES, newcap, &ns)) != 0)
		return rc;
	if (s->store && (rc = copy_slots(h, s, ns, at, delta)) != 0)
		return rc;
	struct uh_slot ref = { UH_T_REF, ns };
	if ((rc = uh_slot_write(h, s->l, LIST_STORE, &ref)) != 0)
		return rc;
	if (s->store && (rc = uh_tx_log_free(h, s->store)) != 0)
		return rc;
	s->store = ns;
	s->cap = newcap;
	return 0;
}

/* Moving `shift` elements: in place (two log entries per element) or by
 * building a new storage (an ALLOC and a FREE entry, an allocation and a
 * copy). A large storage (above UH_SMALL_MAX) is a region of its own:
 * the freed one goes back to heapd when the step commits, whichever
 * session leased it, so rebuilding per operation does not use up the
 * arena directory. */
static int should_rebuild(uint64_t shift)
{
	return shift > SHIFT_MAX;
}

static uint64_t grown_cap(uint64_t cap)
{
	return cap < LIST_MIN_CAP ? LIST_MIN_CAP : 2 * cap;
}

/* ---- new ---- */

static int new_body(uh_heap *h, void *p)
{
	uh_off *out = p, l;
	struct uh_slot n = { UH_T_I64, 0 }, st = { UH_T_REF, 0 };
	int rc;

	if ((rc = uh_values_new(h, UH_CLASS_LIST, LIST_HDR_SLOTS, &l)) != 0 ||
	    (rc = uh_slot_write(h, l, LIST_LEN, &n)) != 0 ||
	    (rc = uh_slot_write(h, l, LIST_STORE, &st)) != 0)
		return rc;
	*out = l;
	return 0;
}

int uh_list_new(uh_heap *h, uh_off *out)
{
	int rc = uh_check_writable(h, "uh_list_new");

	if (rc)
		return rc;
	if (!out)
		return uh_err_set(UH_EINVAL, "uh_list_new: out is NULL");
	return uh_in_implicit_block(h, new_body, out);
}

/* ---- len, get ---- */

struct op {
	uh_off l;
	uint64_t index;
	uh_value *out;		/* len: unused; get/pop: element (may be NULL) */
	const uh_value *in;	/* set/append/insert */
	uint32_t flags;
	uint64_t len;		/* len: result */
};

static int len_body(uh_heap *h, void *p)
{
	struct op *x = p;
	struct lst s;
	int rc = lst_load(h, x->l, &s);

	x->len = s.len;
	return rc;
}

int uh_list_len(uh_heap *h, uh_off l, uint64_t *len)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!len)
		return uh_err_set(UH_EINVAL, "uh_list_len: len is NULL");
	struct op x = { .l = l };
	if ((rc = uh_in_implicit_block(h, len_body, &x)) == 0)
		*len = x.len;
	return rc;
}

/* Load list x->l into *s and read its element x->index into *e. */
static int load_elem(uh_heap *h, const struct op *x, struct lst *s, struct uh_slot *e)
{
	int rc = lst_load(h, x->l, s);

	if (rc)
		return rc;
	if (x->index >= s->len)
		return range_err(s, x->index);
	return uh_slot_read(h, s->store, x->index, e);
}

static int get_body(uh_heap *h, void *p)
{
	struct op *x = p;
	struct lst s;
	struct uh_slot e;
	int rc;

	if ((rc = load_elem(h, x, &s, &e)) != 0)
		return rc;
	uh_slot_to_value(&e, x->out);
	return 0;
}

int uh_list_get(uh_heap *h, uh_off l, uint64_t index, uh_value *v)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_list_get: v is NULL");
	struct op x = { .l = l, .index = index, .out = v };
	return uh_in_implicit_block(h, get_body, &x);
}

/* ---- set ---- */

static int set_body(uh_heap *h, void *p)
{
	struct op *x = p;
	struct lst s;
	struct uh_slot e, old;
	int rc;

	if ((rc = load_elem(h, x, &s, &old)) != 0 ||
	    (rc = uh_value_to_slot(h, x->in, 0, &e)) != 0)
		return rc;
	/* Lock the header too: every change to a list serializes on it. */
	if ((rc = set_len(h, &s, s.len)) != 0 ||
	    (rc = uh_slot_write(h, s.store, x->index, &e)) != 0)
		return rc;
	return uh_slot_free_old(h, &old, &e, x->flags);
}

int uh_list_set(uh_heap *h, uh_off l, uint64_t index, const uh_value *v, uint32_t flags)
{
	int rc = uh_check_writable(h, "uh_list_set");

	if (rc || (rc = uh_free_flags_check(flags, "uh_list_set")) != 0)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_list_set: v is NULL");
	struct op x = { .l = l, .index = index, .in = v, .flags = flags };
	return uh_in_implicit_block(h, set_body, &x);
}

/* ---- insert, append ---- */

/* Open a hole at index: by growing/rebuilding or by shifting in place. */
static int open_hole(uh_heap *h, struct lst *s, uint64_t index)
{
	struct uh_slot e;
	int rc;

	if (s->len == s->cap)
		return relocate(h, s, grown_cap(s->cap), index, +1);
	if (should_rebuild(s->len - index))
		return relocate(h, s, s->cap, index, +1);
	for (uint64_t i = s->len; i > index; i--) {	/* bound: SHIFT_MAX */
		if ((rc = uh_slot_read(h, s->store, i - 1, &e)) != 0 ||
		    (rc = uh_slot_write(h, s->store, i, &e)) != 0)
			return rc;
	}
	return 0;
}

static int insert_body(uh_heap *h, void *p)
{
	struct op *x = p;
	struct lst s;
	struct uh_slot e;
	int rc;

	if ((rc = lst_load(h, x->l, &s)) != 0)
		return rc;
	if (x->index == UINT64_MAX)	/* append */
		x->index = s.len;
	if (x->index > s.len)
		return uh_err_set(UH_ERANGE, "insert index %llu out of range: list %llu has "
				  "%llu elements", (unsigned long long)x->index,
				  (unsigned long long)s.l, (unsigned long long)s.len);
	if ((rc = uh_value_to_slot(h, x->in, 0, &e)) != 0)
		return rc;
	if (s.len == UINT64_MAX / 2)
		return uh_err_set(UH_ENOSPC, "list %llu is as long as a list can be",
				  (unsigned long long)s.l);
	/* Header first: every change to a list serializes on its lock. */
	if ((rc = set_len(h, &s, s.len)) != 0 || (rc = open_hole(h, &s, x->index)) != 0 ||
	    (rc = uh_slot_write(h, s.store, x->index, &e)) != 0)
		return rc;
	return set_len(h, &s, s.len + 1);
}

int uh_list_insert(uh_heap *h, uh_off l, uint64_t index, const uh_value *v)
{
	int rc = uh_check_writable(h, "uh_list_insert");

	if (rc)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_list_insert: v is NULL");
	if (index == UINT64_MAX)
		return uh_err_set(UH_ERANGE, "uh_list_insert: index %llu out of range",
				  (unsigned long long)index);
	struct op x = { .l = l, .index = index, .in = v };
	return uh_in_implicit_block(h, insert_body, &x);
}

int uh_list_append(uh_heap *h, uh_off l, const uh_value *v)
{
	int rc = uh_check_writable(h, "uh_list_append");

	if (rc)
		return rc;
	if (!v)
		return uh_err_set(UH_EINVAL, "uh_list_append: v is NULL");
	struct op x = { .l = l, .index = UINT64_MAX, .in = v };
	return uh_in_implicit_block(h, insert_body, &x);
}

/* ---- pop ---- */

/* Close the gap at index (its element already read): rebuild or shift,
 * then empty the last slot so no stale reference stays reachable. */
static int close_gap(uh_heap *h, struct lst *s, uint64_t index)
{
	static const struct uh_slot empty = { 0, 0 };
	struct uh_slot e;
	int rc;

	if (should_rebuild(s->len - 1 - index))
		return relocate(h, s, s->cap, index, -1);
	for (uint64_t i = index; i + 1 < s->len; i++) {	/* bound: SHIFT_MAX */
		if ((rc = uh_slot_read(h, s->store, i + 1, &e)) != 0 ||
		    (rc = uh_slot_write(h, s->store, i, &e)) != 0)
			return rc;
	}
	return uh_slot_write(h, s->store, s->len - 1, &empty);
}

static int pop_body(uh_heap *h, void *p)
{
	struct op *x = p;
	struct lst s;
	struct uh_slot old;
	int rc;

	if ((rc = load_elem(h, x, &s, &old)) != 0)
		return rc;
	if ((rc = set_len(h, &s, s.len)) != 0 || (rc = close_gap(h, &s, x->index)) != 0 ||
	    (rc = set_len(h, &s, s.len - 1)) != 0 ||
	    (rc = uh_slot_free_old(h, &old, NULL, x->flags)) != 0)
		return rc;
	if (x->out)
		uh_slot_to_value(&old, x->out);
	return 0;
}

int uh_list_pop(uh_heap *h, uh_off l, uint64_t index, uh_value *v, uint32_t flags)
{
	int rc = uh_check_writable(h, "uh_list_pop");

	if (rc || (rc = uh_free_flags_check(flags, "uh_list_pop")) != 0)
		return rc;
	struct op x = { .l = l, .index = index, .out = v, .flags = flags };
	return uh_in_implicit_block(h, pop_body, &x);
}
