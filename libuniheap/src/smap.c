/*
 * smap.c -- the sorted map: a B+-tree of VALUES objects (and, since
 * format 6, packed leaves), changed only inside blocks, so every
 * operation is failure-atomic and serializable with other sessions'
 * blocks.
 *
 * Why a B+-tree: few, wide nodes. One insert touches (locks and logs) one
 * leaf in the common case and a handful of nodes when it splits, and a scan
 * reads 23 to 30 entries per node it validates, walking the leaf chain. A
 * skip list would lock and log several tower objects per insert and
 * validate one object per entry scanned.
 *
 * FORMAT (the header and nodes are of kind VALUES: arrays of 16-byte
 * typed slots, so recovery GC follows every slot tagged REF/STRING/BYTES;
 * packed leaves are below):
 *
 * Header, class UH_CLASS_SMAP, 5 slots:
 *   [0] I64  key kind (UH_KEY_STRING/BYTES/I64), fixed at creation
 *   [1] I64  number of entries
 *   [2] REF  root node (never 0)
 *   [3] I64  height: levels of nodes, 1 = the root is a leaf
 *   [4] REF  first leaf (head of the leaf chain)
 *
 * Node, class UH_CLASS_SMAP_NODE, 63 slots (1008 bytes + 16 of object
 * header = one 1024-byte slot), F = 30 keys at most:
 *   [0]          I64  meta: bit 32 = leaf, bits 0..31 = n keys (0..F);
 *                     the tag's high half: the node's key hints (below)
 *   [1]          REF  leaves: next leaf in key order (0 = last);
 *                     inner nodes: empty (tag 0), or (format 6) I64,
 *                     the last min(skip, 8) bytes of the node's key
 *                     prefix, their number in the tag's high half: a
 *                     search confirms it shares the prefix without
 *                     reading a key (sm_pre_match)
 *   [2 + i]      key i, i < n: I64 inline, or STRING/BYTES: a key object
 *                the node owns (leaf keys and inner separators are
 *                separate objects; a separator is a copy)
 *   [2 + F + i]  leaves: value of key i (any type), i < n
 *                inner nodes: child i (REF to a node), i <= n
 *   Every slot past the used ones is empty (tag 0, value 0), so no stale
 *   reference ever keeps an object alive or points at a freed one.
 *
 * Packed leaves (format 6; class UH_CLASS_SMAP_LEAF, smap_leaf.h): the
 * leaves of a string or bytes map created since hold up to 23 entries,
 * keys inline (a key longer than 23 bytes: its first 23, and its key
 * object), so that a get compares keys without leaving the leaf and a
 * scan reads no key object. Inner nodes stay nodes of slots; i64 maps and
 * maps made before keep leaves of slots (struct sm_node says which:
 * pk). Every write to a packed leaf goes to its image in the block's log.
 *
 * Key hints (format 4; string and bytes keys) let a search of a node
 * skip most key reads: smap_node.c describes them and keeps them.
 *
 * Invariants (uh_smap_check verifies them): keys strictly increasing in
 * every node and along the leaf chain; in an inner node the keys of child
 * i are >= key i-1 and < key i; every leaf is at depth height-1; the leaf
 * chain from [4] visits exactly the leaves in key order; the entries of
 * all leaves number [1]. Removal does not rebalance: nodes may be
 * underfull, an inner node may keep 0 keys and 1 child, but a leaf that
 * becomes empty is unlinked from the chain and freed (unless it is the
 * root), an inner node that loses its last child is freed, and a root
 * with 0 keys is replaced by its only child. So every non-root leaf holds
 * at least one entry and the root is a leaf or has >= 1 key.
 *
 * Crash safety: every change of an operation (slots of existing nodes,
 * packed leaves' bytes, header, frees) is one block: redo-logged and
 * applied all or nothing; new nodes and key objects are written in place
 * before the block commits and are unreachable until it does.
 *
 * Concurrency: inserts and removes lock the header (they change the
 * count) before any node, so two of them never wait for each other in a
 * cycle; replacing the value of a present key locks only its leaf. Every
 * read is a validated read of the block's snapshot, key bytes included: a
 * key object may be freed and its slot reused by another session after
 * the snapshot, and the validated read notices (the block is rolled back
 * and re-run) where a plain one would compare garbage. Outside a block
 * a read-only call runs optimistically (optread.c: each node and key
 * object noted once, then read in place); a get (sm_get_lean) and a run
 * of iteration steps within a leaf or into the next one (sm_next_lean)
 * do so without even the try's bookkeeping. A changing call runs in its
 * own block through uh_run, re-run on conflicts; inside a block every
 * call joins it.
 *
 * Files (lower ones never call higher ones):
 *   smap_int.h     what the files share: layout constants, structs, the
 *                  small helpers every file inlines
 *   smap_node.c    errors, slots, keys, key hints, header and nodes, and
 *                  the argument checks and block runner of every call
 *   smap_search.c  the descent from the root to a key's leaf; get
 *   smap.c         new, key kind, len; put (splits) and remove (this file)
 *   smap_scan.c    scans: uh_smap_scan, uh_smap_next, uh_smap_next_n
 *   smap_check.c   uh_smap_check, the invariants above
 *   smap_leaf.c    the bytes of one packed leaf (smap_leaf.h)
 */
#include <string.h>

#include "smap_int.h"

/* ---- new, key kind, len ---- */

struct sm_new_op {
	uint32_t kind;
	uh_off out;
};

/* A new empty leaf for a map of key kind kind: packed for string and
 * bytes keys (format 6), a node of slots for i64 keys (inline already). */
static int sm_leaf_new(uh_heap *h, uint32_t kind, uh_off *out)
{
	static __thread unsigned char empty[PL_PAYLOAD];
	int rc;

	if (kind != UH_KEY_I64) {
		pl_init(empty);
		return uh_alloc_raw(h, UH_CLASS_SMAP_LEAF, PL_PAYLOAD, empty, out);
	}
	if ((rc = uh_values_new(h, UH_CLASS_SMAP_NODE, SM_NSLOTS, out)) != 0)
		return rc;
	if ((rc = sm_meta_set(h, *out, 0, 1, 0)) != 0 || (rc = sm_wr_ref(h, *out, SM_NEXT, 0)) != 0)
		return rc;
	return 0;
}

static int sm_new_body(uh_heap *h, void *arg)
{
	struct sm_new_op *op = arg;
	uh_off m, leaf;
	int rc;

	if ((rc = uh_values_new(h, UH_CLASS_SMAP, SH_NSLOTS, &m)) != 0)
		return rc;
	if ((rc = sm_leaf_new(h, op->kind, &leaf)) != 0) {
		uh_tx_log_free(h, m);
		return rc;
	}
	struct sm_map mp = { .off = m };
	if ((rc = sm_hdr_set(h, &mp, SH_KIND, UH_T_I64, op->kind)) != 0 ||
	    (rc = sm_hdr_set(h, &mp, SH_COUNT, UH_T_I64, 0)) != 0 ||
	    (rc = sm_hdr_set(h, &mp, SH_ROOT, UH_T_REF, leaf)) != 0 ||
	    (rc = sm_hdr_set(h, &mp, SH_HEIGHT, UH_T_I64, 1)) != 0 ||
	    (rc = sm_hdr_set(h, &mp, SH_FIRST, UH_T_REF, leaf)) != 0)
		return rc;
	op->out = m;
	return 0;
}

int uh_smap_new(uh_heap *h, uint32_t key_kind, uh_off *out)
{
	struct sm_new_op op = { key_kind, 0 };
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (!out)
		return uh_err_set(UH_EINVAL, "uh_smap_new: out is NULL");
	if (key_kind < UH_KEY_STRING || key_kind > UH_KEY_I64)
		return uh_err_set(UH_EINVAL, "uh_smap_new: unknown key kind %u", key_kind);
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "uh_smap_new: heap is connected read-only");
	if ((rc = sm_exec(h, sm_new_body, &op)) == 0)
		*out = op.out;
	return rc;
}

struct sm_hdr_op {
	uh_off m;
	struct sm_map mp;
};

static int sm_hdr_body(uh_heap *h, void *arg)
{
	struct sm_hdr_op *op = arg;
	return sm_hdr_load(h, op->m, &op->mp);
}

int uh_smap_key_kind(uh_heap *h, uh_off m, uint32_t *key_kind)
{
	struct sm_hdr_op op = { .m = m };
	int rc = sm_args_k(h, m, NULL, 0, 1);

	if (rc)
		return rc;
	if (!key_kind)
		return uh_err_set(UH_EINVAL, "uh_smap_key_kind: key_kind is NULL");
	if ((rc = uh_opt_run(h, sm_hdr_body, &op)) == 0)
		*key_kind = op.mp.kind;
	return rc;
}

int uh_smap_len(uh_heap *h, uh_off m, uint64_t *len)
{
	struct sm_hdr_op op = { .m = m };
	int rc = sm_args_k(h, m, NULL, 0, 1);

	if (rc)
		return rc;
	if (!len)
		return uh_err_set(UH_EINVAL, "uh_smap_len: len is NULL");
	if ((rc = uh_opt_run(h, sm_hdr_body, &op)) == 0)
		*len = op.mp.count;
	return rc;
}

/* ---- put ---- */

static int sm_spare(struct sm_op *op, uh_off *out)
{
	if (op->used >= op->nspare)
		return uh_err_set(UH_EINTERNAL, "sorted map: split needs more nodes than planned");
	*out = op->spare[op->used++];
	return 0;
}

static int sm_new_root(uh_heap *h, struct sm_op *op, const struct uh_slot *sep, uh_off right)
{
	struct uh_slot key = *sep;
	uint32_t hint;
	uh_off r = 0;
	int rc;

	if (op->mp.height >= SM_MAX_HEIGHT)
		return uh_err_set(UH_EINTERNAL, "sorted map would exceed %u levels", SM_MAX_HEIGHT);
	if ((rc = sm_hint_keys(h, op->mp.kind, &key, 1, &hint)) != 0 ||
	    (rc = sm_spare(op, &r)) != 0 ||
	    (rc = sm_inner_meta(h, op->mp.kind, r, 1, hint, &key)) != 0 ||
	    (rc = sm_wr(h, r, SM_KEY(0), &key)) != 0 ||
	    (rc = sm_wr_ref(h, r, SM_VAL(0), op->mp.root)) != 0 ||
	    (rc = sm_wr_ref(h, r, SM_VAL(1), right)) != 0 ||
	    (rc = sm_hdr_set(h, &op->mp, SH_ROOT, UH_T_REF, r)) != 0)
		return rc;
	op->mp.root = r;
	op->mp.height++;
	return sm_hdr_set(h, &op->mp, SH_HEIGHT, UH_T_I64, op->mp.height);
}

/* Insert separator sep and its right child into the inner node at level
 * l of the path (after child idx[l]); split it when full. */
static int sm_inner_insert(uh_heap *h, struct sm_op *op, int l, struct uh_slot sep, uh_off right)
{
	struct uh_slot keys[SM_F + 1], kids[SM_F + 2];
	int rc;

	if (l < 0)
		return sm_new_root(h, op, &sep, right);
	uh_off p = op->path.node[l];
	uint32_t ci = op->path.idx[l], n = op->path.n[l], hint = op->path.hint[l];
	if (n < SM_F) {
		int retag;
		if ((rc = sm_hint_join(h, op->mp.kind, p, n, &hint, &sep, NULL, 0, &retag)) != 0)
			return rc;
		if ((rc = sm_move(h, p, SM_KEY(ci), SM_KEY(ci + 1), n - ci)) != 0 ||
		    (rc = sm_move(h, p, SM_VAL(ci + 1), SM_VAL(ci + 2), n - ci)) != 0)
			return rc;
		if ((rc = sm_wr(h, p, SM_KEY(ci), &sep)) != 0 ||
		    (rc = sm_wr_ref(h, p, SM_VAL(ci + 1), right)) != 0)
			return rc;
		if (retag && (rc = sm_retag_node(h, op->mp.kind, p, n + 1, ci,
						 hint & SM_SKIP_MASK)) != 0)
			return rc;
		return sm_inner_meta(h, op->mp.kind, p, n + 1, hint, &sep);
	}
	/* Full: F+1 keys and F+2 children; the middle key moves up. */
	for (uint32_t i = 0, j = 0; i <= SM_F; i++) {	/* bound: F */
		if (i == ci)
			keys[i] = sep;
		else if ((rc = sm_rd(h, p, SM_KEY(j++), &keys[i])) != 0)
			return rc;
	}
	for (uint32_t i = 0, j = 0; i <= SM_F + 1; i++) {	/* bound: F */
		if (i == ci + 1) {
			kids[i].tag = UH_T_REF;
			kids[i].value = right;
		} else if ((rc = sm_rd(h, p, SM_VAL(j++), &kids[i])) != 0) {
			return rc;
		}
	}
	uint32_t nl = (SM_F + 1) / 2, nr = SM_F - nl, hl, hr;
	uh_off r = 0;
	struct uh_slot up = keys[nl];
	if ((rc = sm_hint_keys(h, op->mp.kind, keys, nl, &hl)) != 0 ||
	    (rc = sm_hint_keys(h, op->mp.kind, keys + nl + 1, nr, &hr)) != 0)
		return rc;
	if ((rc = sm_spare(op, &r)) != 0 ||
	    (rc = sm_inner_meta(h, op->mp.kind, r, nr, hr, &keys[nl + 1])) != 0)
		return rc;
	for (uint32_t i = 0; i < nr; i++)	/* bound: F */
		if ((rc = sm_wr(h, r, SM_KEY(i), &keys[nl + 1 + i])) != 0)
			return rc;
	for (uint32_t i = 0; i <= nr; i++)	/* bound: F */
		if ((rc = sm_wr(h, r, SM_VAL(i), &kids[nl + 1 + i])) != 0)
			return rc;
	/* Left keeps keys [0, nl) (their hints may change: all are
	 * rewritten) and children [0, nl]: rewrite those from the first
	 * slot that changed, clear the rest. */
	for (uint32_t i = 0; i < SM_F; i++)	/* bound: F */
		if ((rc = sm_wr(h, p, SM_KEY(i), i < nl ? &keys[i] : &sm_empty)) != 0)
			return rc;
	for (uint32_t i = ci < nl ? ci + 1 : nl + 1; i <= SM_F; i++)	/* bound: F */
		if ((rc = sm_wr(h, p, SM_VAL(i), i <= nl ? &kids[i] : &sm_empty)) != 0)
			return rc;
	if ((rc = sm_inner_meta(h, op->mp.kind, p, nl, hl, &keys[0])) != 0)
		return rc;
	return sm_inner_insert(h, op, l - 1, up, r);
}

/* The leaf is full: F+1 entries, the upper half to a new right leaf; its
 * first key, copied, becomes the separator in the parent. */
static int sm_leaf_split(uh_heap *h, struct sm_op *op, uint32_t pos, const struct uh_slot *ks)
{
	struct uh_slot keys[SM_F + 1], vals[SM_F + 1], lk[SM_F], lv[SM_F], sep;
	uh_off lf = op->leaf.off, r = 0;
	uint32_t nl = (SM_F + 1) / 2, nr = SM_F + 1 - nl, hl, hr;
	char *mem;
	int rc;

	/* The leaf's F entries with the new one at pos, F + 1 in all, read
	 * from its image (taken now: the leaf is rewritten below). */
	if ((rc = uh_tx_image(h, lf, uh_slot_off(lf, 0), SM_NSLOTS * sizeof(*lk), &mem)) != 0 ||
	    (rc = sm_slots_rd(h, lf, SM_KEY(0), SM_F, lk)) != 0 ||
	    (rc = sm_slots_rd(h, lf, SM_VAL(0), SM_F, lv)) != 0)
		return rc;
	memcpy(keys, lk, pos * sizeof(*keys));
	memcpy(vals, lv, pos * sizeof(*vals));
	keys[pos] = *ks;
	vals[pos] = op->val;
	memcpy(keys + pos + 1, lk + pos, (SM_F - pos) * sizeof(*keys));
	memcpy(vals + pos + 1, lv + pos, (SM_F - pos) * sizeof(*vals));
	sep = keys[nl];
	if (op->mp.kind != UH_KEY_I64 &&
	    ((rc = sm_key_get(h, op->mp.kind, &keys[nl], &op->kb)) != 0 ||
	     (rc = sm_key_new(h, &op->kb.k, &sep)) != 0))
		return rc;
	if (op->mp.kind != UH_KEY_I64 && (op->leaf.hint & SM_HINTED) &&
	    !op->path.leaf_range.outside) {
		/* Every key shares the leaf's prefix: halves keep its hints
		 * where they can. */
		uint32_t skip = op->leaf.hint & SM_SKIP_MASK;
		sm_retag(&keys[pos], op->k, skip);
		rc = sm_hint_half(h, op->mp.kind, keys, nl, skip, &hl);
		if (rc == 0)
			rc = sm_hint_half(h, op->mp.kind, keys + nl, nr, skip, &hr);
	} else if ((rc = sm_hint_keys(h, op->mp.kind, keys, nl, &hl)) == 0) {
		rc = sm_hint_keys(h, op->mp.kind, keys + nl, nr, &hr);
	}
	if (rc)
		return rc;
	if ((rc = sm_spare(op, &r)) != 0 || (rc = sm_meta_set(h, r, nr, 1, hr)) != 0 ||
	    (rc = sm_wr_ref(h, r, SM_NEXT, op->leaf.next)) != 0 ||
	    (rc = sm_slots_wr(h, r, SM_KEY(0), nr, keys + nl)) != 0 ||
	    (rc = sm_slots_wr(h, r, SM_VAL(0), nr, vals + nl)) != 0)
		return rc;
	/* Left: its first nl entries (their hints may have changed), the
	 * rest of its slots empty. */
	for (uint32_t i = 0; i < SM_F; i++) {	/* bound: F */
		lk[i] = i < nl ? keys[i] : sm_empty;
		lv[i] = i < nl ? vals[i] : sm_empty;
	}
	if ((rc = sm_slots_wr(h, lf, SM_KEY(0), SM_F, lk)) != 0 ||
	    (rc = sm_slots_wr(h, lf, SM_VAL(0), SM_F, lv)) != 0 ||
	    (rc = sm_meta_set(h, lf, nl, 1, hl)) != 0 || (rc = sm_wr_ref(h, lf, SM_NEXT, r)) != 0)
		return rc;
	return sm_inner_insert(h, op, (int)op->path.depth - 2, sep, r);
}

/* Where the block writes packed leaf off: its image (taken now if the
 * block has none yet), or the leaf itself if the block made it. */
static int sm_pl_image(uh_heap *h, uh_off off, unsigned char **p)
{
	char *mem;
	int rc = uh_tx_image(h, off, uh_slot_off(off, 0), PL_PAYLOAD, &mem);

	if (rc)
		return rc;
	if (!mem)
		return sm_bad(h, "leaf %llu is locked without an image", (unsigned long long)off);
	*p = (unsigned char *)mem;
	return 0;
}

/* The packed leaf is full: its PL_CAP entries and the new one at pos go
 * half to it and half to a new right leaf, whose first key, copied into
 * a key object, becomes the separator in the parent. */
static int sm_pl_split(uh_heap *h, struct sm_op *op, uint32_t pos, const struct uh_slot *ko)
{
	const uint32_t nl = (PL_CAP + 1) / 2, nr = PL_CAP + 1 - nl;
	unsigned char *p = NULL, *q = NULL;
	struct sm_kref first;
	struct uh_slot sep;
	uh_off r = 0;
	int rc;

	if ((rc = sm_spare(op, &r)) != 0 || (rc = sm_pl_image(h, op->leaf.off, &p)) != 0 ||
	    (rc = sm_pl_image(h, r, &q)) != 0)
		return rc;
	if (pos >= nl) {	/* the new entry goes right */
		pl_copy(q, 0, p, nl, pos - nl);
		pl_set_slot(q, pos - nl, &op->val);
		pl_set_key(q, pos - nl, op->k, ko);
		pl_copy(q, pos - nl + 1, p, pos, PL_CAP - pos);
		pl_clear(p, nl);
	} else {
		pl_copy(q, 0, p, nl - 1, nr);
		pl_move(p, pos, pos + 1, nl - 1 - pos);
		pl_set_slot(p, pos, &op->val);
		pl_set_key(p, pos, op->k, ko);
		pl_clear(p, nl);
	}
	pl_set_n(q, nr);
	pl_set_next(q, op->leaf.next);
	pl_set_n(p, nl);
	pl_set_next(p, r);
	pl_kref(q, 0, &first);
	if ((rc = sm_kref_key(h, op->mp.kind, &first, &op->kb)) != 0 ||
	    (rc = sm_key_new(h, &op->kb.k, &sep)) != 0)
		return rc;
	return sm_inner_insert(h, op, (int)op->path.depth - 2, sep, r);
}

/* Entry (k, val) at pos of the packed leaf; ko: k's key object if k is
 * long. */
static int sm_pl_insert(uh_heap *h, struct sm_op *op, uint32_t pos, const struct uh_slot *ko)
{
	uint32_t n = op->leaf.n;
	unsigned char *p = NULL;
	int rc;

	if (n == PL_CAP)
		return sm_pl_split(h, op, pos, ko);
	if ((rc = sm_pl_image(h, op->leaf.off, &p)) != 0)
		return rc;
	pl_move(p, pos, pos + 1, n - pos);
	pl_set_slot(p, pos, &op->val);
	pl_set_key(p, pos, op->k, ko);
	pl_set_n(p, n + 1);
	return 0;
}

static int sm_leaf_insert(uh_heap *h, struct sm_op *op, uint32_t pos, const struct uh_slot *ks)
{
	struct uh_slot key = *ks;
	uh_off lf = op->leaf.off;
	uint32_t n = op->leaf.n, hint = op->leaf.hint;
	int rc, retag;

	if (op->leaf.pk)
		return sm_pl_insert(h, op, pos, ks);
	if (n == SM_F)
		return sm_leaf_split(h, op, pos, ks);
	if ((rc = sm_hint_join(h, op->mp.kind, lf, n, &hint, &key, op->k,
				!op->path.leaf_range.outside, &retag)) != 0)
		return rc;
	if ((rc = sm_move(h, lf, SM_KEY(pos), SM_KEY(pos + 1), n - pos)) != 0 ||
	    (rc = sm_move(h, lf, SM_VAL(pos), SM_VAL(pos + 1), n - pos)) != 0)
		return rc;
	if ((rc = sm_wr(h, lf, SM_KEY(pos), &key)) != 0 ||
	    (rc = sm_wr(h, lf, SM_VAL(pos), &op->val)) != 0)
		return rc;
	if (retag && (rc = sm_retag_node(h, op->mp.kind, lf, n + 1, pos,
					 hint & SM_SKIP_MASK)) != 0)
		return rc;
	return sm_meta_set(h, lf, n + 1, 1, hint);
}

/* Nodes a split chain will need, allocated before anything is written so
 * that running out of space leaves the structure untouched. */
static int sm_plan_splits(uh_heap *h, struct sm_op *op)
{
	uint32_t need = 0;
	int rc;

	for (int l = (int)op->path.depth - 1; l >= 0; l--) {	/* bound: height */
		uint32_t full = op->leaf.pk && l + 1 == (int)op->path.depth ? PL_CAP : SM_F;
		if (op->path.n[l] != full)
			break;
		need += 1 + (l == 0);	/* a root that splits needs a new root too */
	}
	op->nspare = op->used = 0;
	for (uint32_t i = 0; i < need; i++) {	/* bound: height + 1 */
		/* The leaf's split takes spare[0]: a leaf of its kind. */
		if ((rc = i == 0 && op->leaf.pk ? sm_leaf_new(h, op->mp.kind, &op->spare[i]) :
			  uh_values_new(h, UH_CLASS_SMAP_NODE, SM_NSLOTS, &op->spare[i])) != 0) {
			for (uint32_t j = 0; j < i; j++)	/* bound: height + 1 */
				uh_tx_log_free(h, op->spare[j]);
			return rc;
		}
		op->nspare++;
	}
	return 0;
}

static int sm_leaf_set_val(uh_heap *h, const struct sm_node *nd, uint32_t i,
			   const struct uh_slot *v)
{
	unsigned char *p = NULL;
	int rc;

	if (!nd->pk)
		return sm_wr(h, nd->off, SM_VAL(i), v);
	if ((rc = sm_pl_image(h, nd->off, &p)) != 0)
		return rc;
	pl_set_slot(p, i, v);
	return 0;
}

static int sm_put_body(uh_heap *h, void *arg)
{
	struct sm_op *op = arg;
	struct uh_slot old, ks;
	uint32_t pos;
	int eq, rc;

	if ((rc = uh_tx_changed(h, op->m)) != 0 || (rc = sm_find(h, op, &pos, &eq)) != 0)
		return rc;
	if (eq) {
		if ((rc = sm_leaf_val(h, &op->leaf, pos, &old)) != 0 ||
		    (rc = sm_leaf_set_val(h, &op->leaf, pos, &op->val)) != 0)
			return rc;
		return uh_slot_free_old(h, &old, &op->val, op->flags);
	}
	/* Inserts and removes lock the header first (they change the count),
	 * before any node: they never wait for each other in a cycle. */
	if ((rc = sm_hdr_lock(h, op->m)) != 0 || (rc = sm_plan_splits(h, op)) != 0)
		return rc;
	/* A packed leaf keeps a short key inline: no key object. */
	ks = sm_empty;
	if ((!op->leaf.pk || op->k->len > PL_INLINE_MAX) && (rc = sm_key_new(h, op->k, &ks)) != 0) {
		for (uint32_t j = 0; j < op->nspare; j++)	/* bound: height + 1 */
			uh_tx_log_free(h, op->spare[j]);
		return rc;
	}
	if ((rc = sm_leaf_insert(h, op, pos, &ks)) != 0)
		return rc;
	if (op->used != op->nspare)
		return uh_err_set(UH_EINTERNAL, "sorted map: split used %u of %u planned nodes",
				  op->used, op->nspare);
	return sm_hdr_set(h, &op->mp, SH_COUNT, UH_T_I64, op->mp.count + 1);
}

int uh_smap_put(uh_heap *h, uh_off m, const uh_key *k, const uh_value *v, uint32_t flags)
{
	static __thread struct sm_op op;
	int rc = sm_args_k(h, m, k, 1, 0);

	if (rc)
		return rc;
	if ((rc = uh_free_flags_check(flags, "uh_smap_put")) != 0)
		return rc;
	if ((rc = uh_value_to_slot(h, v, 0, &op.val)) != 0)
		return rc;
	op.m = m;
	op.k = k;
	op.flags = flags;
	return sm_exec(h, sm_put_body, &op);
}

/* ---- remove ---- */

/* Collapse a root with 0 keys into its only child, as often as needed. */
static int sm_collapse_root(uh_heap *h, struct sm_op *op)
{
	static __thread struct sm_nodebuf copy;
	int rc;

	for (;;) {	/* bound: height */
		struct sm_node nd;
		uh_off child;
		if ((rc = sm_node_load(h, op->mp.root, op->mp.height == 1, &nd, &copy)) != 0)
			return rc;
		if (nd.leaf || nd.n > 0)
			return 0;
		if ((rc = sm_child(h, &nd, 0, &child)) != 0 || (rc = uh_tx_log_free(h, nd.off)) != 0)
			return rc;
		op->mp.root = child;
		op->mp.height--;
		if ((rc = sm_hdr_set(h, &op->mp, SH_ROOT, UH_T_REF, child)) != 0 ||
		    (rc = sm_hdr_set(h, &op->mp, SH_HEIGHT, UH_T_I64, op->mp.height)) != 0)
			return rc;
	}
}

/* The child idx[l] of the inner node at level l is gone: drop it and one
 * separator next to it; a node left without children goes too. */
static int sm_remove_child(uh_heap *h, struct sm_op *op, int l)
{
	struct uh_slot sk;
	int rc;

	if (l < 0)
		return sm_bad(h, "the root lost its last child");
	uh_off p = op->path.node[l];
	uint32_t ci = op->path.idx[l], n = op->path.n[l];
	if (n == 0) {
		if ((rc = uh_tx_log_free(h, p)) != 0)
			return rc;
		return sm_remove_child(h, op, l - 1);
	}
	uint32_t kd = ci > 0 ? ci - 1 : 0;
	if ((rc = sm_rd(h, p, SM_KEY(kd), &sk)) != 0 || (rc = uh_key_free(h, &sk)) != 0)
		return rc;
	if ((rc = sm_move(h, p, SM_KEY(kd + 1), SM_KEY(kd), n - kd - 1)) != 0 ||
	    (rc = sm_move(h, p, SM_VAL(ci + 1), SM_VAL(ci), n - ci)) != 0)
		return rc;
	if ((rc = sm_wr(h, p, SM_KEY(n - 1), &sm_empty)) != 0 ||
	    (rc = sm_wr(h, p, SM_VAL(n), &sm_empty)) != 0 ||
	    (rc = sm_meta_set(h, p, n - 1, 0, op->path.hint[l])) != 0)
		return rc;
	return l == 0 && n == 1 ? sm_collapse_root(h, op) : 0;
}

static int sm_leaf_set_next(uh_heap *h, const struct sm_node *nd, uh_off next)
{
	unsigned char *p = NULL;
	int rc;

	if (!nd->pk)
		return sm_wr_ref(h, nd->off, SM_NEXT, next);
	if ((rc = sm_pl_image(h, nd->off, &p)) != 0)
		return rc;
	pl_set_next(p, next);
	return 0;
}

/* The path's leaf became empty (and is not the root): unlink and free it. */
static int sm_drop_leaf(uh_heap *h, struct sm_op *op)
{
	struct sm_node pred;
	int found, rc = sm_pred_leaf(h, &op->mp, &op->path, &pred, &found);

	if (rc)
		return rc;
	if (found)
		rc = sm_leaf_set_next(h, &pred, op->leaf.next);
	else
		rc = sm_hdr_set(h, &op->mp, SH_FIRST, UH_T_REF, op->leaf.next);
	if (rc || (rc = uh_tx_log_free(h, op->leaf.off)) != 0)
		return rc;
	return sm_remove_child(h, op, (int)op->path.depth - 2);
}

/* Entry pos out of the slots leaf: its key slot into *ks, value *vs. */
static int sm_slots_remove(uh_heap *h, struct sm_op *op, uint32_t pos, struct uh_slot *ks,
			   struct uh_slot *vs)
{
	uh_off lf = op->leaf.off;
	uint32_t n = op->leaf.n;
	int rc;

	if ((rc = sm_rd(h, lf, SM_KEY(pos), ks)) != 0 || (rc = sm_rd(h, lf, SM_VAL(pos), vs)) != 0)
		return rc;
	if ((rc = sm_move(h, lf, SM_KEY(pos + 1), SM_KEY(pos), n - pos - 1)) != 0 ||
	    (rc = sm_move(h, lf, SM_VAL(pos + 1), SM_VAL(pos), n - pos - 1)) != 0)
		return rc;
	if ((rc = sm_wr(h, lf, SM_KEY(n - 1), &sm_empty)) != 0 ||
	    (rc = sm_wr(h, lf, SM_VAL(n - 1), &sm_empty)) != 0)
		return rc;
	return sm_meta_set(h, lf, n - 1, 1, op->leaf.hint);
}

/* Entry pos out of the packed leaf: its key object (an empty slot for an
 * inline key) into *ks, value *vs. */
static int sm_pl_remove(uh_heap *h, struct sm_op *op, uint32_t pos, struct uh_slot *ks,
			struct uh_slot *vs)
{
	uint32_t n = op->leaf.n;
	unsigned char *p = NULL;
	int rc = sm_pl_image(h, op->leaf.off, &p);

	if (rc)
		return rc;
	pl_slot(p, PL_KOBJ(pos), ks);
	pl_slot(p, pos, vs);
	pl_move(p, pos + 1, pos, n - pos - 1);
	pl_clear(p, n - 1);
	pl_set_n(p, n - 1);
	return 0;
}

static int sm_remove_body(uh_heap *h, void *arg)
{
	struct sm_op *op = arg;
	struct uh_slot ks, vs;
	uint32_t pos, n;
	int eq, rc;

	if ((rc = uh_tx_changed(h, op->m)) != 0 || (rc = sm_find(h, op, &pos, &eq)) != 0)
		return rc;
	if (!eq)
		return uh_err_set(UH_ENOTFOUND, "key is not in the sorted map");
	if ((rc = sm_hdr_lock(h, op->m)) != 0)
		return rc;
	n = op->leaf.n;
	if (op->leaf.pk)
		rc = sm_pl_remove(h, op, pos, &ks, &vs);
	else
		rc = sm_slots_remove(h, op, pos, &ks, &vs);
	if (rc || (rc = sm_hdr_set(h, &op->mp, SH_COUNT, UH_T_I64, op->mp.count - 1)) != 0 ||
	    (rc = uh_key_free(h, &ks)) != 0 || (rc = uh_slot_free_old(h, &vs, NULL, op->flags)) != 0)
		return rc;
	uh_slot_to_value(&vs, &op->out);
	if (n == 1 && op->path.depth > 1)
		return sm_drop_leaf(h, op);
	return 0;
}

int uh_smap_remove(uh_heap *h, uh_off m, const uh_key *k, uh_value *old, uint32_t flags)
{
	static __thread struct sm_op op;
	int rc = sm_args_k(h, m, k, 1, 0);

	if (rc)
		return rc;
	if ((rc = uh_free_flags_check(flags, "uh_smap_remove")) != 0)
		return rc;
	op.m = m;
	op.k = k;
	op.flags = flags;
	if ((rc = sm_exec(h, sm_remove_body, &op)) == 0 && old)
		*old = op.out;
	return rc;
}
