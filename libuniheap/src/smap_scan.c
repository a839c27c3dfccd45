/*
 * smap_scan.c -- scans of the sorted map: uh_smap_scan places an iterator
 * on the first entry at or after (descending: at or before) a key,
 * uh_smap_next and uh_smap_next_n take entries from it in key order. An
 * iterator keeps no pointer into the heap, only the leaf, index and clock
 * of its position and the last key it returned (the layout below), so it
 * stays valid across blocks and changes: a position the map has not
 * changed under is reused as it is, else the next call finds its place
 * again from the root by the anchor key. Outside a block a run of steps
 * within a leaf or into the next (sm_next_lean) reads the leaves in place
 * without the optimistic try's bookkeeping.
 */
#include <string.h>

#include "smap_int.h"

/* ---- scans ----
 *
 * uh_iter layout (opaque to users):
 *   s[0] magic 0x534d << 48 | flags (low 8 bits) << 40 | flags (high 8
 *        bits) << 32 | idx << 16 | anchor key length
 *   s[1] the sorted map
 *   s[2] leaf of the position; idx: the next entry is idx (descending:
 *        idx - 1) in that leaf
 *   s[3] the clock (snapshot rv) at which leaf and anchor were read
 *   s[4..7] anchor: the last key returned (or, before the first next, the
 *        first key found, inclusive): an i64 key in s[4]; a string or
 *        bytes key of at most 32 bytes in s[4..7] (IT_KINL); a longer
 *        one's key object in s[4] (IT_KOBJ), and then in s[5..7] the
 *        entry that followed it in its leaf (or the next): its key object
 *        in s[5] (IT_SOBJ) or its packed leaf cell (IT_SINL)
 * An object whose version is still <= s[3] has not changed since (every
 * commit and every reuse of a freed slot carries a later clock), so the
 * position is reused as it is; otherwise the next call descends from the
 * root to the first key after the anchor. If the anchor's key object was
 * freed (its entry removed, e.g. by a caller deleting what it scans), the
 * scan goes on at the entry that followed it if that one's key object is
 * still there or its key was kept inline (keys put in between since are
 * concurrent); else it cannot know where it was (UH_ESTATE). Inside the block that
 * returned it the anchor's key object stays (the block's own removes free
 * it at commit; one the block made is checked by its generation), so a
 * scan in a block never loses its place to the block's own changes.
 * uh_smap_next_n returns up to a leaf's run of entries per call, in a
 * block as outside (sm_next_lean, or sm_next_body's loop). */

#define IT_MAGIC 0x534dull
#define IT_REV 0x01u
#define IT_DONE 0x02u
#define IT_INCL 0x04u	/* the anchor itself is still to be returned */
#define IT_ANCHOR 0x08u
#define IT_POS 0x10u
#define IT_KOBJ 0x20u	/* a[0] is the anchor's key object, to be re-validated */
#define IT_SOBJ 0x40u	/* a[1] is the key object of the anchor's successor */
#define IT_LAST 0x80u	/* no entry followed the anchor */
#define IT_KINL 0x100u	/* the anchor's bytes are those of a[] */
#define IT_SINL 0x200u	/* the successor's packed cell is a[1..4) */
#define IT_INLINE 32u	/* anchors up to this long are kept whole */
#define IT_KINDS (IT_KOBJ | IT_SOBJ | IT_LAST | IT_KINL | IT_SINL)

struct sm_it {
	uint32_t flags, idx, alen;
	uh_off map, leaf;
	uint64_t rv;
	uint64_t a[4];	/* s[4..7]: the anchor and its successor */
};
_Static_assert(PL_CELL <= 3 * sizeof(uint64_t), "a successor's cell fits a[1..4)");

static int it_unpack(const uint64_t s[8], struct sm_it *x)
{
	if (s[0] >> 48 != IT_MAGIC)
		return 0;
	x->flags = ((uint32_t)(s[0] >> 40) & 0xff) | ((uint32_t)(s[0] >> 32) & 0xff) << 8;
	x->idx = (uint32_t)(s[0] >> 16) & 0xffff;
	x->alen = (uint32_t)s[0] & 0xffff;
	x->map = s[1];
	x->leaf = s[2];
	x->rv = s[3];
	memcpy(x->a, &s[4], sizeof(x->a));
	return x->idx <= SM_F && x->alen <= UH_KEY_MAX_LEN &&
	       (!(x->flags & IT_KINL) || x->alen <= IT_INLINE) &&
	       (!(x->flags & IT_SINL) || ((const unsigned char *)&x->a[1])[0] <= PL_INLINE_MAX);
}

static void it_pack(const struct sm_it *x, uint64_t s[8])
{
	s[0] = IT_MAGIC << 48 | (uint64_t)(x->flags & 0xff) << 40 |
	       (uint64_t)((x->flags >> 8) & 0xff) << 32 | (uint64_t)(x->idx & 0xffff) << 16 |
	       (x->alen & 0xffff);
	s[1] = x->map;
	s[2] = x->leaf;
	s[3] = x->rv;
	memcpy(&s[4], x->a, sizeof(x->a));
}

/* Make key k, held by a leaf as kr, the anchor: an i64 key or a short one
 * kept whole, a longer one by its key object (IT_KOBJ: the caller then
 * names its successor, it_succ). */
static void it_anchor(struct sm_it *x, uint32_t kind, const struct sm_kref *kr, const uh_key *k)
{
	x->flags &= ~IT_KINDS;
	x->alen = 0;
	memset(x->a, 0, sizeof(x->a));
	if (kind == UH_KEY_I64) {
		x->a[0] = (uint64_t)k->i64;
	} else if (k->len <= IT_INLINE) {
		x->alen = (uint32_t)k->len;
		memcpy(x->a, k->data, k->len);
		x->flags |= IT_KINL;
	} else {
		x->alen = (uint32_t)k->len;
		x->a[0] = kr->s.value;
		x->flags |= IT_KOBJ;
	}
}

/* Name ss, the entry after a long anchor, as where to go on if the
 * anchor's key object is freed: its cell if inline, else its key object
 * (unless the block made it: sm_unchanged would not vouch for it later). */
static void it_succ(uh_heap *h, struct sm_it *x, const struct sm_kref *ss)
{
	if (ss->inl) {
		memcpy(&x->a[1], ss->cell, PL_CELL);
		x->flags |= IT_SINL;
	} else if (ss->s.value && !u64map_get(&h->tx.news, UH_REF_OFFSET(ss->s.value))) {
		x->a[1] = ss->s.value;
		x->flags |= IT_SOBJ;
	}
}

/* Where a scan stands: forward the next entry is leaf[i], descending
 * leaf[i - 1]; found = 0 past the end. */
struct sm_pos {
	struct sm_node leaf;
	uint32_t i;
	int found;
};

static int sm_fwd_norm(uh_heap *h, const struct sm_map *mp, struct sm_pos *pos)
{
	/* pos->leaf's when it moves on, until the next call. */
	static __thread struct sm_nodebuf copy;
	int rc;

	pos->found = 0;
	for (uint64_t hops = 0; pos->i >= pos->leaf.n; hops++) {	/* bound: leaves */
		if (!pos->leaf.next)
			return 0;
		if (hops > mp->count + 1)
			return sm_bad(h, "leaf chain does not end");
		if ((rc = sm_node_load(h, pos->leaf.next, 1, &pos->leaf, &copy)) != 0)
			return rc;
		pos->i = 0;
	}
	pos->found = 1;
	return 0;
}

/* Position at the first key >= k (> k without incl), descending at the
 * last key <= k (< k); k NULL: at the smallest (largest) key. */
static int sm_seek(uh_heap *h, const struct sm_map *mp, const uh_key *k, int rev, int incl,
		   struct sm_pos *pos, struct sm_kbuf *kb)
{
	struct sm_path path;
	struct sm_node pred;
	int eq, found, rc;

	pos->found = 0;
	if ((rc = sm_descend(h, mp, k, rev && !k, &path, &pos->leaf, kb)) != 0)
		return rc;
	pos->i = rev && !k ? pos->leaf.n : 0;
	if (k && (rc = sm_bound(h, mp->kind, &pos->leaf, k, rev ? incl : !incl, kb, &pos->i,
				&eq, NULL)) != 0)
		return rc;
	if (!rev)
		return sm_fwd_norm(h, mp, pos);
	if (pos->i > 0) {
		pos->found = 1;
		return 0;
	}
	if ((rc = sm_pred_leaf(h, mp, &path, &pred, &found)) != 0 || !found)
		return rc;
	if (pred.n == 0)
		return sm_bad(h, "leaf %llu is empty", (unsigned long long)pred.off);
	pos->leaf = pred;
	pos->i = pred.n;
	pos->found = 1;
	return 0;
}

static int sm_own(uh_heap *h, uh_off off)
{
	return uh_tx_holds(h, off) != 0;
}

/* Class c is cls, or a packed leaf where cls asks for a node. */
static int sm_class_is(uint32_t c, uint32_t cls)
{
	return c == cls || (cls == UH_CLASS_SMAP_NODE && c == UH_CLASS_SMAP_LEAF);
}

/* 1 if the object at off is of class cls (a node: or a packed leaf) and unchanged since clock rv
 * (as this block sees it), 0 if not, < 0 on error. own_ok: an object this
 * block locked counts by the version it had, and one it made counts if
 * it is still there (for immutable key objects: a scan in a block that
 * put the key it returned last goes on after it). */
static int sm_unchanged(uh_heap *h, uh_off ref, uint32_t cls, uint64_t rv, int own_ok)
{
	uint64_t off = UH_REF_OFFSET(ref), seen;
	uint32_t c, payload, slot;
	int valid, rc, made;

	if (!off || !uh_arena_slot_of(&h->ix, off, &slot))
		return 0;
	made = u64map_get(&h->tx.news, off) != NULL;
	if (made && !own_ok)
		return 0;
	if ((rc = sm_obj_hdr(h, ref, &c, &payload, &valid, NULL)) != 0)
		return rc;
	if (made)
		return valid && sm_class_is(c, cls);
	if (!uh_tx_seen(h, off, own_ok, &seen))
		return 0;
	return seen <= rv && valid && sm_class_is(c, cls);
}

/* A key object of the iterator, if unchanged since its snapshot, into kb:
 * 1 done, 0 gone, < 0 error. */
static int sm_it_key(uh_heap *h, const struct sm_map *mp, const struct sm_it *x, uh_off kobj,
		     struct sm_kbuf *kb)
{
	int rc = sm_unchanged(h, kobj, sm_key_class(mp->kind), x->rv, 1);

	if (rc <= 0)
		return rc;
	struct uh_slot s = { sm_key_type(mp->kind), kobj };
	rc = sm_key_read(h, mp->kind, &s, kb);
	return rc ? rc : 1;
}

/* Where to go on from: the anchor key into kb, *incl whether that key
 * itself is still to be returned. 1: the scan is over. */
static int sm_anchor_key(uh_heap *h, const struct sm_map *mp, const struct sm_it *x,
			 struct sm_kbuf *kb, int *incl)
{
	int rc;

	memset(&kb->k, 0, sizeof(kb->k));
	kb->k.kind = mp->kind;
	*incl = (x->flags & IT_INCL) != 0;
	if (mp->kind == UH_KEY_I64) {
		kb->k.i64 = (int64_t)x->a[0];
		return 0;
	}
	if (x->flags & IT_KINL) {
		sm_kbuf_set(kb, mp->kind, x->a, x->alen);
		return 0;
	}
	if ((x->flags & IT_KOBJ) && (rc = sm_it_key(h, mp, x, x->a[0], kb)) != 0)
		return rc < 0 ? rc : 0;
	/* The anchor is gone: the entry after it, if still there, is where
	 * the scan goes on (keys put in between since are concurrent). A
	 * cell kept whole is where to go on even if its entry went too. */
	if ((x->flags & IT_SOBJ) && (rc = sm_it_key(h, mp, x, x->a[1], kb)) != 0) {
		*incl = 1;
		return rc < 0 ? rc : 0;
	}
	if (x->flags & IT_SINL) {
		const unsigned char *cell = (const unsigned char *)&x->a[1];
		sm_kbuf_set(kb, mp->kind, cell + 1, cell[0]);
		*incl = 1;
		return 0;
	}
	/* Nothing followed it: whatever follows now came since. */
	if (x->flags & IT_LAST)
		return 1;
	return uh_err_set(UH_ESTATE, "sorted map scan lost its place: the %u-byte key it "
			  "returned last and the one after it were removed since; start a "
			  "new scan after a copy of that key", x->alen);
}

/* Name in x the entry after entry e of pos (before it when descending),
 * or IT_LAST at the end (it_succ). In another leaf going forward it is the next
 * leaf's first; going backward the leaf before is found from the root,
 * and the position moves there (*pos updated). */
static int sm_succ(uh_heap *h, const struct sm_map *mp, int rev, struct sm_pos *pos,
		   uint32_t e, const struct sm_kbuf *kb, struct sm_kbuf *kw, struct sm_it *x)
{
	static __thread struct sm_nodebuf copy;	/* the next leaf */
	struct sm_kref ss;
	struct sm_pos p2;
	int rc;

	if (rev ? e > 0 : e + 1 < pos->leaf.n) {
		if ((rc = sm_leaf_kref(h, &pos->leaf, rev ? e - 1 : e + 1, &ss)) != 0)
			return rc;
	} else if (!rev) {
		if (!pos->leaf.next) {
			x->flags |= IT_LAST;
			return 0;
		}
		if ((rc = sm_node_load(h, pos->leaf.next, 1, &p2.leaf, &copy)) != 0)
			return rc;
		if (p2.leaf.n == 0)
			return sm_bad(h, "leaf %llu is empty", (unsigned long long)p2.leaf.off);
		if ((rc = sm_leaf_kref(h, &p2.leaf, 0, &ss)) != 0)
			return rc;
	} else {
		if ((rc = sm_seek(h, mp, &kb->k, 1, 0, &p2, kw)) != 0)
			return rc;
		if (!p2.found) {
			x->flags |= IT_LAST;
			return 0;
		}
		if ((rc = sm_leaf_kref(h, &p2.leaf, p2.i - 1, &ss)) != 0)
			return rc;
		pos->leaf = p2.leaf;
		pos->i = p2.i;
	}
	it_succ(h, x, &ss);
	return 0;
}

/* Remember entry e of pos as the anchor (incl: e itself is next, else the
 * one after it) and the position in its leaf. */
static int sm_it_set(uh_heap *h, const struct sm_map *mp, struct sm_it *x, struct sm_pos *pos,
		     uint32_t e, const struct sm_kref *kr, const struct sm_kbuf *kb,
		     struct sm_kbuf *kw, int incl)
{
	int rev = (x->flags & IT_REV) != 0, rc;
	uint32_t idx = incl ? (rev ? e + 1 : e) : (rev ? e : e + 1);

	x->flags &= IT_REV;
	x->flags |= IT_ANCHOR | (incl ? IT_INCL : 0);
	/* A key object anchor may be one this block made: see sm_unchanged. */
	it_anchor(x, mp->kind, kr, &kb->k);
	if (x->flags & IT_KOBJ) {
		uh_off before = pos->leaf.off;
		struct sm_pos keep = *pos;
		/* With incl, e itself is next: the position stays at it. */
		if ((rc = sm_succ(h, mp, rev, incl ? &keep : pos, e, kb, kw, x)) != 0)
			return rc;
		if (pos->leaf.off != before)
			idx = pos->i;	/* moved to the leaf before */
	}
	x->leaf = pos->leaf.off;
	x->idx = idx;
	/* A leaf this block changed is not a position to trust later: the
	 * block may still roll back. */
	if (!sm_own(h, pos->leaf.off) && !(rev && idx == 0))
		x->flags |= IT_POS;
	x->rv = h->tx.rv;
	return 0;
}

#define SM_NEXT_MAX SM_F	/* entries a step gives at most: one leaf's */
struct sm_scan_op {
	uh_off m;
	const uh_key *from;
	uint32_t rev;
	uint64_t in[8], out[8];
	int have_out;
	uint32_t max, n;		/* next: entries asked for, given */
	uh_key keys[SM_NEXT_MAX];
	uh_value vals[SM_NEXT_MAX];
	unsigned char cells[SM_NEXT_MAX][PL_INLINE_MAX];	/* inline keys given (either path) */
	struct sm_kbuf kb, kw;
};

/* Entry e at pos: its key as the leaf holds it into *kr, its bytes into
 * kb, its value into *vs. */
static int sm_entry(uh_heap *h, const struct sm_map *mp, const struct sm_pos *pos, uint32_t e,
		    struct sm_kref *kr, struct uh_slot *vs, struct sm_kbuf *kb)
{
	int rc;

	if ((rc = sm_leaf_kref(h, &pos->leaf, e, kr)) != 0 ||
	    (rc = sm_leaf_val(h, &pos->leaf, e, vs)) != 0)
		return rc;
	return sm_kref_key(h, mp->kind, kr, kb);
}

static int sm_scan_body(uh_heap *h, void *arg)
{
	struct sm_scan_op *op = arg;
	struct sm_it x = { .flags = op->rev ? IT_REV : 0, .map = op->m };
	struct sm_map mp;
	struct sm_pos pos;
	struct sm_kref ks;
	struct uh_slot vs;
	int rc;

	op->have_out = 0;
	if ((rc = sm_hdr_load(h, op->m, &mp)) != 0 ||
	    (rc = sm_seek(h, &mp, op->from, (int)op->rev, 1, &pos, &op->kw)) != 0)
		return rc;
	if (!pos.found) {
		x.flags |= IT_DONE;
	} else {
		uint32_t e = op->rev ? pos.i - 1 : pos.i;
		if ((rc = sm_entry(h, &mp, &pos, e, &ks, &vs, &op->kb)) != 0)
			return rc;
		if ((rc = sm_it_set(h, &mp, &x, &pos, e, &ks, &op->kb, &op->kw, 1)) != 0)
			return rc;
	}
	it_pack(&x, op->out);
	op->have_out = 1;
	return 0;
}

int uh_smap_scan(uh_heap *h, uh_off m, const uh_key *from, uint32_t flags, uh_iter *it)
{
	static __thread struct sm_scan_op op;
	int rc = sm_args_k(h, m, from, 0, 1);

	if (rc)
		return rc;
	if (!it)
		return uh_err_set(UH_EINVAL, "uh_smap_scan: it is NULL");
	if (flags & ~UH_SCAN_REVERSE)
		return uh_err_set(UH_EINVAL, "uh_smap_scan: unknown flags 0x%x", flags);
	op.m = m;
	op.from = from;
	op.rev = flags & UH_SCAN_REVERSE;
	if ((rc = uh_opt_run(h, sm_scan_body, &op)) == 0)
		memcpy(it->s, op.out, sizeof(it->s));
	return rc;
}

/* The position the iterator holds, if its leaf is unchanged. In a block
 * the leaf is read at once (sm_node_load into copy): pos is the step's
 * only. */
static int sm_pos_reuse(uh_heap *h, const struct sm_map *mp, const struct sm_it *x,
			struct sm_pos *pos, int *have)
{
	static __thread struct sm_nodebuf copy;
	int rc = sm_unchanged(h, x->leaf, UH_CLASS_SMAP_NODE, x->rv, 0);

	*have = 0;
	if (rc <= 0)
		return rc;
	if ((rc = sm_node_load(h, x->leaf, -1, &pos->leaf, &copy)) != 0)
		return rc;
	if (!pos->leaf.leaf || x->idx > pos->leaf.n)
		return 0;
	pos->i = x->idx;
	*have = 1;
	if (!(x->flags & IT_REV))
		return sm_fwd_norm(h, mp, pos);
	pos->found = pos->i > 0;
	*have = pos->found;
	return 0;
}

/* Start loading the key and value objects of the entries [from, to) of
 * a leaf read in place, so that the steps that return them find them in
 * cache (the scan's cache misses overlap instead of adding up). A packed
 * leaf's keys are in it, but for long ones. */
UH_PREFETCH_FN void sm_prefetch_entries(uh_heap *h, const struct sm_node *nd, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {	/* bound: F */
		uint64_t ko, vo;
		if (nd->pk) {
			memcpy(&ko, nd->pk + PL_VALS_AT + 8 * PL_KOBJ(i), 8);
			memcpy(&vo, nd->pk + PL_VALS_AT + 8 * i, 8);
		} else {
			ko = nd->mem[SM_KEY(i)].value;
			vo = nd->mem[SM_VAL(i)].value;
		}
		ko = UH_REF_OFFSET(ko);
		vo = UH_REF_OFFSET(vo);
		if (ko && ko < h->size)
			__builtin_prefetch(h->base + ko);
		if (vo < h->size)
			__builtin_prefetch(h->base + vo);
	}
}

static int sm_next_body(uh_heap *h, void *arg)
{
	struct sm_scan_op *op = arg;
	struct sm_it x;
	struct sm_map mp;
	struct sm_pos pos;
	struct sm_kref ks;
	struct uh_slot vs;
	int have = 0, rc;

	op->have_out = 0;
	it_unpack(op->in, &x);
	int rev = (x.flags & IT_REV) != 0;
	if ((rc = sm_hdr_load(h, op->m, &mp)) != 0)
		return rc;
	if ((x.flags & IT_POS) && (rc = sm_pos_reuse(h, &mp, &x, &pos, &have)) != 0)
		return rc;
	if (!have) {
		if (!(x.flags & IT_ANCHOR))
			return uh_err_set(UH_EINVAL, "sorted map iterator holds no position");
		int incl;
		pos.found = 0;
		if ((rc = sm_anchor_key(h, &mp, &x, &op->kb, &incl)) < 0 ||
		    (rc == 0 && (rc = sm_seek(h, &mp, &op->kb.k, rev, incl, &pos, &op->kw)) != 0))
			return rc;
	}
	if (!pos.found) {
		x.flags |= IT_DONE;
		it_pack(&x, op->out);
		op->have_out = 1;
		return uh_err_set(UH_ENOTFOUND, "no more entries in the sorted map scan");
	}
	/* Up to max entries of this leaf (uh_smap_next_n), each read as a
	 * single step would read it; the iterator then stands at the last. */
	uint32_t e = rev ? pos.i - 1 : pos.i;
	if ((pos.leaf.mem || pos.leaf.pk) && op->max > 1)
		sm_prefetch_entries(h, &pos.leaf, rev ? (e + 1 > op->max ? e + 1 - op->max : 0) : e,
				    rev ? e + 1 : (e + op->max < pos.leaf.n ? e + op->max : pos.leaf.n));
	for (op->n = 0;; e = rev ? e - 1 : e + 1) {	/* bound: F */
		if ((rc = sm_entry(h, &mp, &pos, e, &ks, &vs, &op->kb)) != 0)
			return rc;
		uh_key *key = &op->keys[op->n];
		memset(key, 0, sizeof(*key));
		key->kind = mp.kind;
		if (mp.kind == UH_KEY_I64) {
			key->i64 = (int64_t)ks.s.value;
		} else if (ks.inl) {
			memcpy(op->cells[op->n], op->kb.k.data, op->kb.k.len);
			key->data = op->cells[op->n];
			key->len = op->kb.k.len;
		} else {
			/* Key objects never change: the bytes in place are
			 * the ones just validated. */
			key->data = h->base + UH_REF_OFFSET(ks.s.value) + UH_OBJHDR_SIZE;
			key->len = op->kb.k.len;
		}
		uh_slot_to_value(&vs, &op->vals[op->n++]);
		if (op->n == op->max || (rev ? e == 0 : e + 1 >= pos.leaf.n))
			break;
	}
	if ((rc = sm_it_set(h, &mp, &x, &pos, e, &ks, &op->kb, &op->kw, 0)) != 0)
		return rc;
	it_pack(&x, op->out);
	op->have_out = 1;
	return 0;
}

/* Leaf ref in place (sm_lean_node): 0, else 1. */
static int sm_lean_leaf(uh_heap *h, uh_off ref, struct sm_lean_node *l)
{
	return sm_lean_node(h, ref, l) || !l->nd.leaf;
}

/* The sorted map m for sm_next_lean, read in place: its key kind, if m
 * names a live sorted map header; else 1. Found live before and after
 * the leaves' check (a freed header is never valid again with the same
 * generation), it was live at that check, where the step is linearized. */
static int sm_lean_map(uh_heap *h, uh_off m, uint32_t *kind)
{
	const struct uh_objhdr *o = uh_obj_in_map(h, m, SH_NSLOTS * sizeof(struct uh_slot));
	uint32_t payload;

	if (h->tx.depth || !o)
		return 1;
	/* After the leaves' check when it runs again: read after it. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!uh_obj_live_in_place(h, o, m, UH_CLASS_SMAP, &payload))
		return 1;
	*kind = (uint32_t)((const struct uh_slot *)(o + 1))[SH_KIND].value;
	return *kind < UH_KEY_STRING || *kind > UH_KEY_I64;
}

/* Where a lean batch of a scan lies: leaf l[at] holds its entries from
 * index first on (forward) or down from it (descending), cnt of them;
 * ss is the key slot after the last one (the new anchor's successor). */
struct sm_lean_run {
	struct sm_lean_node l[2];
	uint32_t nl, at, first, cnt;
	struct sm_kref ss;
};

/* The entries a lean batch can return from position i of leaf x->leaf
 * (loaded into r->l[0]), at most max: 0, or 1 when the general path must
 * answer (the leaf before is needed, or the last entry of the map, whose
 * step marks IT_LAST). */
static int sm_lean_plan(uh_heap *h, const struct sm_it *x, uint32_t max, struct sm_lean_run *r)
{
	struct sm_lean_node *l = r->l;
	uint32_t i = x->idx, last;

	r->nl = 1;
	r->at = 0;
	if (x->flags & IT_REV) {
		if (i < 2 || i > l[0].nd.n)
			return 1;	/* the leaf before is found from the root */
		r->first = i - 1;
		r->cnt = max < i - 1 ? max : i - 1;
		sm_leaf_kref(h, &l[0].nd, i - 1 - r->cnt, &r->ss);
		return 0;
	}
	if (i >= l[0].nd.n) {	/* L is done: on to the next leaf */
		if (!l[0].nd.next || sm_lean_leaf(h, l[0].nd.next, &l[1]) || l[1].nd.n < 2)
			return 1;
		r->nl = 2;
		r->at = 1;
		i = 0;
	}
	const struct sm_node *nd = &l[r->at].nd;
	r->first = i;
	r->cnt = max < nd->n - i ? max : nd->n - i;
	last = i + r->cnt - 1;
	if (last + 1 < nd->n) {
		sm_leaf_kref(h, nd, last + 1, &r->ss);
		return 0;
	}
	if (r->at == 0 && nd->next) {
		if (sm_lean_leaf(h, nd->next, &l[1]) || l[1].nd.n == 0)
			return 1;
		r->nl = 2;
		sm_leaf_kref(h, &l[1].nd, 0, &r->ss);
		return 0;
	}
	if (r->cnt < 2)
		return 1;	/* its successor is not loaded: the next call's */
	r->cnt--;
	sm_leaf_kref(h, nd, last, &r->ss);
	return 0;
}

/* Start loading the key and value objects of the batch's entries and of
 * the next few, and the next leaf near a leaf's end: the batch's cache
 * misses overlap instead of adding up, and so do the next call's. */
UH_PREFETCH_FN void sm_lean_prefetch(uh_heap *h, const struct sm_lean_run *r, int rev)
{
	const struct sm_node *nd = &r->l[r->at].nd;

	if (rev) {
		uint32_t end = r->first + 1 - r->cnt;
		sm_prefetch_entries(h, nd, end > 4 ? end - 4 : 0, r->first + 1);
		return;
	}
	uint32_t end = r->first + r->cnt + 4;
	sm_prefetch_entries(h, nd, r->first, end < nd->n ? end : nd->n);
	if (r->at == 0 && end >= nd->n && nd->next)
		sm_prefetch_node(h, nd->next);
}

/* uh_smap_next_n outside blocks in the common case, without an optimistic
 * try's bookkeeping: the iterator holds a position (IT_POS) in a leaf L
 * that has not changed since its snapshot (a version <= x->rv, as
 * sm_pos_reuse asks); the entries to return and the one after the last
 * of them (the new anchor's successor) are in L or, going forward, in the
 * leaf after it. Each leaf's lock word is loaded before its bytes and must
 * be the same after them (an acquire fence between): then each leaf's
 * entries were its committed state all along, and so were its key
 * objects (immutable, freed only by a commit that changes their leaf).
 * L's entries, then the next leaf's, are the map's next keys in order (a
 * key between two keys of a leaf, or between a leaf's last and its
 * successor's first, would be in one of them), so the batch is what as
 * many steps at that instant would return. 0 with keys[0..*n), vals[0..*n)
 * and x advanced (inline keys copied into cells: the leaf may change after
 * its check); 1: the general path must answer. */
static int sm_next_lean(uh_heap *h, uh_off m, struct sm_it *x, uh_key *keys, uh_value *vals,
			uint32_t max, uint32_t *n, unsigned char (*cells)[PL_INLINE_MAX])
{
	const int rev = (x->flags & IT_REV) != 0;
	struct sm_lean_run r;
	struct sm_kref ks = { 0 };
	uh_key key = { 0 };
	uint64_t rv = x->rv;
	uint32_t kind;

	if (sm_lean_map(h, m, &kind) || !(x->flags & IT_POS) ||
	    sm_lean_leaf(h, x->leaf, &r.l[0]) || r.l[0].ver > x->rv || sm_lean_plan(h, x, max, &r))
		return 1;
	/* The snapshot clock of the new position: every version read (key
	 * objects are older than the leaf that holds them). */
	if (r.nl == 2 && r.l[1].ver > rv)
		rv = r.l[1].ver;
	const struct sm_node *nd = &r.l[r.at].nd;
	if (nd->pk && kind == UH_KEY_I64)
		return 1;
	sm_lean_prefetch(h, &r, rev);
	for (uint32_t j = 0; j < r.cnt; j++) {	/* bound: F */
		uint32_t e = rev ? r.first - j : r.first + j;
		/* An inline key straight from its cell, its length read once;
		 * a long one by its key object (ks: it_anchor needs only those). */
		unsigned char len = PL_LONG;
		if (nd->pk)
			uh_load(&len, (const char *)pl_cell(nd->pk, e), 1);
		if (len <= PL_INLINE_MAX) {
			memcpy(cells[j], pl_cell(nd->pk, e) + 1, PL_INLINE_MAX);
			key = (uh_key){ .kind = kind, .data = cells[j], .len = len };
		} else if (sm_leaf_kref(h, nd, e, &ks), ks.inl || sm_lean_key(h, kind, &ks.s, &key)) {
			return 1;
		}
		if (keys)
			keys[j] = key;
		if (vals) {
			struct uh_slot vs;
			sm_leaf_val(h, nd, e, &vs);
			uh_slot_to_value(&vs, &vals[j]);
		}
	}
	struct sm_it y = *x;
	y.flags = (x->flags & IT_REV) | IT_ANCHOR | IT_POS;
	y.leaf = r.at ? r.l[0].nd.next : x->leaf;
	y.idx = rev ? r.first + 1 - r.cnt : r.first + r.cnt;
	y.rv = rv;
	it_anchor(&y, kind, &ks, &key);
	if (y.flags & IT_KOBJ)
		it_succ(h, &y, &r.ss);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (uint32_t j = 0; j < r.nl; j++)	/* bound: 2 */
		if (!uh_lock_still(h, UH_REF_OFFSET(r.l[j].nd.off), r.l[j].w))
			return 1;
	if (sm_lean_map(h, m, &kind))
		return 1;
	*x = y;
	*n = r.cnt;
	h->st.opt_reads++;
	return 0;
}

int uh_smap_next_n(uh_heap *h, uh_off m, uh_iter *it, uh_key *keys, uh_value *vals,
		   uint32_t max, uint32_t *n)
{
	static __thread struct sm_scan_op op;
	static const uint64_t zero[8];
	struct sm_it x;
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (n)
		*n = 0;
	if (it && n && max && it_unpack(it->s, &x) && x.map == m && !(x.flags & IT_DONE) &&
	    sm_next_lean(h, m, &x, keys, vals, max, n, op.cells) == 0) {
		it_pack(&x, it->s);
		return 0;
	}
	if ((rc = sm_args_k(h, m, NULL, 0, 1)) != 0)
		return rc;
	if (!it)
		return uh_err_set(UH_EINVAL, "uh_smap_next: it is NULL");
	if (!n || !max)
		return uh_err_set(UH_EINVAL, "uh_smap_next_n: n is NULL or max is 0");
	/* A zeroed iterator scans the whole map in ascending order. */
	if (memcmp(it->s, zero, sizeof(zero)) == 0 &&
	    (rc = uh_smap_scan(h, m, NULL, 0, it)) != 0)
		return rc;
	if (!it_unpack(it->s, &x) || x.map != m)
		return uh_err_set(UH_EINVAL, "iterator was not started by uh_smap_scan on "
				  "sorted map %llu", (unsigned long long)m);
	if (x.flags & IT_DONE)
		return uh_err_set(UH_ENOTFOUND, "no more entries in the sorted map scan");
	op.m = m;
	op.max = max < SM_NEXT_MAX ? max : SM_NEXT_MAX;
	memcpy(op.in, it->s, sizeof(op.in));
	rc = uh_opt_run(h, sm_next_body, &op);
	if ((rc == 0 || rc == UH_ENOTFOUND) && op.have_out)
		memcpy(it->s, op.out, sizeof(it->s));
	if (rc == 0) {
		if (keys)
			memcpy(keys, op.keys, op.n * sizeof(*keys));
		if (vals)
			memcpy(vals, op.vals, op.n * sizeof(*vals));
		*n = op.n;
	}
	return rc;
}

int uh_smap_next(uh_heap *h, uh_off m, uh_iter *it, uh_key *k, uh_value *v)
{
	uint32_t n;

	return uh_smap_next_n(h, m, it, k, v, 1, &n);
}

/* ---- a scan up to a bound ---- */

/* Key k lies past the bound to: ascending, after it (or at it, unless
 * incl); descending, before it (or at it). */
static int sm_past(const uh_key *k, const uh_key *to, int rev, int incl)
{
	int c = uh_key_cmp(k, to);

	if (rev)
		c = -c;
	return incl ? c > 0 : c >= 0;
}

/* The scan it is over: later calls return UH_ENOTFOUND, as at the end. */
static void sm_it_done(uh_iter *it)
{
	struct sm_it x;

	if (it_unpack(it->s, &x)) {
		x.flags |= IT_DONE;
		it_pack(&x, it->s);
	}
}

/* A batch of uh_smap_next_n, cut at the first key past to. The keys of a
 * batch are in scan order, so one comparison (the last key) settles a
 * batch wholly inside the bound, and a binary search finds the cut of
 * the one that crosses it; the scan is then over. */
int uh_smap_next_until(uh_heap *h, uh_off m, uh_iter *it, const uh_key *to, uint32_t flags,
		       uh_key *keys, uh_value *vals, uint32_t max, uint32_t *n)
{
	uh_key own[SM_NEXT_MAX];
	struct sm_it x;
	uint32_t lo = 0, hi;
	int rev, incl = (flags & UH_SCAN_INCLUSIVE) != 0, rc;

	if (!to)
		return uh_smap_next_n(h, m, it, keys, vals, max, n);
	if (!keys) {	/* the bound needs the keys: at most a leaf's run */
		keys = own;
		max = max < SM_NEXT_MAX ? max : SM_NEXT_MAX;
	}
	if ((rc = uh_smap_next_n(h, m, it, keys, vals, max, n)) != 0)
		return rc;
	if (keys[0].kind != to->kind) {
		sm_it_done(it);
		*n = 0;
		return uh_err_set(UH_ETYPE, "uh_smap_next_until: the bound is a key of "
				  "another kind than the sorted map's");
	}
	rev = it_unpack(it->s, &x) && (x.flags & IT_REV);
	hi = *n;
	if (!sm_past(&keys[hi - 1], to, rev, incl))
		return 0;
	while (lo < hi) {	/* bound: log2(SM_NEXT_MAX) steps */
		uint32_t mid = lo + (hi - lo) / 2;
		if (sm_past(&keys[mid], to, rev, incl))
			hi = mid;
		else
			lo = mid + 1;
	}
	sm_it_done(it);
	*n = lo;
	return lo ? 0 : uh_err_set(UH_ENOTFOUND, "no more entries in the sorted map scan");
}
