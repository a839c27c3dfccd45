/*
 * smap_search.c -- finding a key in the sorted map: the binary search of
 * one node (key hints and prefixes decide most comparisons without a key
 * read, packed leaves compare inline cells), the descent from the root to
 * a key's leaf (struct sm_path: the nodes and child indices taken, which
 * put and remove then change bottom-up), the predecessor leaf, and get.
 *
 * Invariant the descent relies on: in an inner node the keys of child i
 * are >= key i-1 and < key i, so the child to take is the number of keys
 * <= k. A get outside a block (sm_get_lean) reads each node in place
 * without the optimistic try's bookkeeping: each node's lock word is
 * noted before its bytes are read and checked after, and key objects it
 * references are covered by that check; any doubt falls back to the
 * general path (sm_get_body in a block or an optimistic try).
 */
#include <string.h>

#include "smap_int.h"

/* ---- descent ---- */

/* Leading bytes two hints have in common, up to the first 0 (which may
 * stand for a key that ended). */
static uint32_t sm_hint_common(uint32_t a, uint32_t b)
{
	/* 0x80 in each byte of a that is 0 (no carry crosses bytes). */
	uint32_t zero = ~(((a & 0x7f7f7f7fu) + 0x7f7f7f7fu) | a | 0x7f7f7f7fu);
	uint32_t stop = (a ^ b) | zero;

	return stop ? (uint32_t)__builtin_clz(stop) / 8 : 4;
}

/* k starts with the skip bytes every key of the node shares, as key x
 * (one of them) shows; else all of them lie on one side of k: *side is
 * the index that follows from it, and every key shares *d bytes with k. */
static inline int sm_shares(const uh_key *k, const uh_key *x, uint32_t skip, uint32_t n,
			    uint32_t *side, uint32_t *d)
{
	if (k->len >= skip && memcmp(k->data, x->data, skip) == 0)
		return 1;
	*side = uh_key_cmp(k, x) < 0 ? 0 : n;
	*d = sm_lcp(k, x);
	return 0;
}

/* What k shares with the bounds of child ci's range; k shares the node's
 * prefix (skip) and its hint is kh. */
static int sm_child_range(uh_heap *h, const struct sm_node *nd, uint32_t ci, uint32_t skip,
			  uint32_t kh, struct sm_range *r)
{
	struct uh_slot s;
	int rc;

	if (ci > 0) {
		if ((rc = sm_at(h, nd, SM_KEY(ci - 1), &s)) != 0)
			return rc;
		r->lo = skip + sm_hint_common(kh, (uint32_t)(s.tag >> 32));
	}
	if (ci < nd->n) {
		if ((rc = sm_at(h, nd, SM_KEY(ci), &s)) != 0)
			return rc;
		r->hi = skip + sm_hint_common(kh, (uint32_t)(s.tag >> 32));
	}
	return 0;
}

/* One step of a bound's binary search: k compared c with the key at mid
 * (upper: the first key > k is wanted, else the first >= k). */
static inline void sm_halve(int c, int upper, uint32_t mid, uint32_t *lo, uint32_t *hi, int *eq)
{
	if (c == 0)
		*eq = 1;
	if (upper ? c >= 0 : c > 0)
		*lo = mid + 1;
	else
		*hi = mid;
}

/* sm_bound in a packed leaf: the cells decide every comparison but those
 * with a long key whose first bytes are k's, which read its key object
 * (sm_node_key: in place for a lean get, else as the block reads). */
static int sm_pl_bound(uh_heap *h, uint32_t kind, const struct sm_node *nd, const uh_key *k,
		       int upper, struct sm_kbuf *kb, uint32_t *out, int *eq)
{
	uint32_t lo = 0, hi = nd->n;
	struct pl_skey sk;
	int rc;

	if (kind == UH_KEY_I64)
		return nd->lean ? UH_ECONFLICT :
				  sm_bad(h, "leaf %llu of an i64 map is packed",
					 (unsigned long long)nd->off);
	*eq = 0;
	pl_skey_of(k, &sk);
	while (lo < hi) {	/* bound: log2(PL_CAP) rounds */
		uint32_t mid = (lo + hi) / 2;
		int c = pl_cmp(nd->pk, mid, &sk);
		if (c == 2) {
			struct uh_slot ko;
			pl_slot(nd->pk, PL_KOBJ(mid), &ko);
			if ((rc = sm_node_key(h, kind, nd, &ko, kb)) != 0)
				return rc;
			c = uh_key_cmp(k, &kb->k);
		}
		sm_halve(c, upper, mid, &lo, &hi, eq);
	}
	*out = lo;
	return 0;
}

/* Whether k starts with the skip bytes every key of inner node nd shares,
 * as far as nd's prefix slot tells without a key read: k shares `have`
 * bytes with them already (its range in the parent), and the slot holds
 * the prefix's last pre_n bytes. 0: unknown (a key read tells). */
static int sm_pre_match(const struct sm_node *nd, const uh_key *k, uint32_t skip, uint32_t have)
{
	uint32_t m = nd->pre_n, from = skip - m;
	const unsigned char *d = (const unsigned char *)k->data + from;
	uint64_t x = 0;

	if (!m || have < from || k->len < skip)
		return 0;
	if (k->len - from >= 8) {	/* one load; the slot is zero past m */
		memcpy(&x, d, 8);
		if (m < 8)
			x &= (1ull << (8 * m)) - 1;
	} else {
		memcpy(&x, d, m);
	}
	return x == nd->pre;
}

/* First index whose key is > k (upper) or >= k (lower). *eq: k is there.
 * In a hinted node, comparisons whose hints differ read no key object;
 * they are right if k shares the node's prefix, which r (what k shares
 * with the bounds of the node's range, may be NULL) or the first key
 * object read (or, if neither, one read at the end) confirms. With r, it
 * is updated to the range of the child at the returned index. */
int sm_bound(uh_heap *h, uint32_t kind, const struct sm_node *nd, const uh_key *k,
	     int upper, struct sm_kbuf *kb, uint32_t *out, int *eq, struct sm_range *r)
{
	uint32_t lo = 0, hi = nd->n, skip = nd->hint & SM_SKIP_MASK, kh = 0, d;
	int hinted = (nd->hint & SM_HINTED) && kind != UH_KEY_I64;
	uint32_t have = r ? (r->lo < r->hi ? r->lo : r->hi) : 0;
	int confirmed = !hinted || skip == 0 || skip <= have || sm_pre_match(nd, k, skip, have);
	struct uh_slot s;
	int rc;

	*eq = 0;
	if (nd->pk) {
		if (r)
			*r = (struct sm_range){ 0, 0, 0 };
		return sm_pl_bound(h, kind, nd, k, upper, kb, out, eq);
	}
	if (hinted)
		kh = sm_hint(k, skip);
	while (lo < hi) {	/* bound: log2(F) rounds */
		uint32_t mid = (lo + hi) / 2, sh;
		int c;
		if ((rc = sm_at(h, nd, SM_KEY(mid), &s)) != 0)
			return rc;
		sh = (uint32_t)(s.tag >> 32);
		if (hinted && sh != kh) {
			c = kh < sh ? -1 : 1;
		} else {
			if ((rc = sm_node_key(h, kind, nd, &s, kb)) != 0)
				return rc;
			if (!confirmed && !sm_shares(k, &kb->k, skip, nd->n, out, &d))
				goto one_side;
			confirmed = 1;
			c = uh_key_cmp(k, &kb->k);
		}
		sm_halve(c, upper, mid, &lo, &hi, eq);
	}
	if (!confirmed && nd->n > 0) {
		uint32_t at = lo < nd->n ? lo : nd->n - 1;
		if ((rc = sm_at(h, nd, SM_KEY(at), &s)) != 0 ||
		    (rc = sm_node_key(h, kind, nd, &s, kb)) != 0)
			return rc;
		if (!sm_shares(k, &kb->k, skip, nd->n, out, &d))
			goto one_side;
	}
	*out = lo;
	if (!r)
		return 0;
	r->outside = 0;
	if (!hinted) {
		r->lo = r->hi = 0;	/* nothing known below */
		return 0;
	}
	return sm_child_range(h, nd, lo, skip, kh, r);
one_side:
	/* Every key of the node shares d bytes with k. */
	if (r && *out == 0)
		r->hi = d;
	else if (r)
		r->lo = d;
	if (r)
		r->outside = 1;
	return 0;
}

/* From the root to the leaf whose range holds k; with k NULL the leftmost
 * (or rightmost) leaf. */
int sm_descend(uh_heap *h, const struct sm_map *mp, const uh_key *k, int rightmost,
	       struct sm_path *p, struct sm_node *leaf, struct sm_kbuf *kb)
{
	/* A node per level, read at once in a block; the leaf's is the
	 * caller's until its next descent. */
	static __thread struct sm_nodebuf copy[SM_MAX_HEIGHT];
	uh_off cur = mp->root;
	struct sm_range r = { 0, 0, 0 };
	int rc, eq;

	for (uint32_t l = 0; l < mp->height; l++) {	/* bound: height */
		struct sm_node nd;
		if ((rc = sm_node_load(h, cur, l + 1 == mp->height, &nd, &copy[l])) != 0)
			return rc;
		p->node[l] = cur;
		p->n[l] = nd.n;
		p->hint[l] = nd.hint;
		p->depth = l + 1;
		if (nd.leaf) {
			*leaf = nd;
			p->leaf_range = r;
			return 0;
		}
		uint32_t ci = rightmost ? nd.n : 0;
		if (k && (rc = sm_bound(h, mp->kind, &nd, k, 1, kb, &ci, &eq, &r)) != 0)
			return rc;
		p->idx[l] = ci;
		if ((rc = sm_child(h, &nd, ci, &cur)) != 0)
			return rc;
	}
	return sm_bad(h, "no leaf at height %u", mp->height);
}

/* The leaf before the path's leaf, or 0 if it is the first. */
int sm_pred_leaf(uh_heap *h, const struct sm_map *mp, const struct sm_path *p,
		 struct sm_node *pred, int *found)
{
	/* The leaf's is the caller's until the next call. */
	static __thread struct sm_nodebuf copy[SM_MAX_HEIGHT];
	int rc;

	*found = 0;
	for (int l = (int)p->depth - 2; l >= 0; l--) {	/* bound: height */
		if (p->idx[l] == 0)
			continue;
		struct sm_node nd = { .off = p->node[l] };
		uh_off cur;
		if ((rc = sm_child(h, &nd, p->idx[l] - 1, &cur)) != 0)
			return rc;
		for (uint32_t d = (uint32_t)l + 1; d < p->depth; d++) {	/* bound: height */
			if ((rc = sm_node_load(h, cur, d + 1 == mp->height, &nd, &copy[d])) != 0)
				return rc;
			if (nd.leaf) {
				*pred = nd;
				*found = 1;
				return 0;
			}
			if ((rc = sm_child(h, &nd, nd.n, &cur)) != 0)
				return rc;
		}
		return sm_bad(h, "no leaf left of node %llu", (unsigned long long)p->node[l]);
	}
	return 0;
}

/* ---- get ---- */

/* Descend to k's leaf; *pos its index there, *eq whether k is present. */
int sm_find(uh_heap *h, struct sm_op *op, uint32_t *pos, int *eq)
{
	int rc = sm_hdr_load(h, op->m, &op->mp);

	if (rc || (rc = sm_descend(h, &op->mp, op->k, 0, &op->path, &op->leaf, &op->kb)) != 0)
		return rc;
	return sm_bound(h, op->mp.kind, &op->leaf, op->k, 0, &op->kb, pos, eq,
			&op->path.leaf_range);
}

static int sm_get_body(uh_heap *h, void *arg)
{
	struct sm_op *op = arg;
	struct uh_slot s;
	uint32_t pos;
	int eq, rc = sm_find(h, op, &pos, &eq);

	if (rc)
		return rc;
	if (!eq)
		return uh_err_set(UH_ENOTFOUND, "key is not in the sorted map");
	if ((rc = sm_leaf_val(h, &op->leaf, pos, &s)) != 0)
		return rc;
	uh_slot_to_value(&s, &op->out);
	return 0;
}

/* The header of sorted map m read in place for a lean get: its lock word
 * (loaded before its bytes) in *w, its kind, root and height in *mp, if
 * it is a live sorted map header and no commit is being applied to it:
 * 0, else 1. */
static int sm_lean_hdr(uh_heap *h, uh_off m, uint64_t *w, uint64_t *ver, struct sm_map *mp)
{
	const struct uh_objhdr *o = uh_obj_in_map(h, m, SH_NSLOTS * sizeof(struct uh_slot));
	struct uh_slot root, height;
	uint32_t payload;

	if (!o)
		return 1;
	if (!uh_lock_note(h, UH_REF_OFFSET(m), w, ver) ||
	    !uh_obj_live_in_place(h, o, m, UH_CLASS_SMAP, &payload) ||
	    payload < SH_NSLOTS * sizeof(struct uh_slot))
		return 1;
	const struct uh_slot *mem = (const void *)(o + 1);
	uh_load(&mp->kind, (const char *)&mem[SH_KIND].value, 4);
	uh_load(&root, (const char *)&mem[SH_ROOT], sizeof(root));
	uh_load(&height, (const char *)&mem[SH_HEIGHT], sizeof(height));
	mp->root = root.value;
	mp->height = (uint32_t)height.value;
	return uh_slot_type(root.tag) != UH_T_REF || !mp->root || mp->height < 1 ||
	       mp->height > SM_MAX_HEIGHT;
}

/* sm_bound for an inner node of a lean get in the common case: hinted,
 * k shares its prefix (as its range or the node's prefix slot shows) and
 * no probed key has k's hint, so the search reads the key slots' tags
 * only. 0 with *pos and r set as sm_bound sets them; 1: sm_bound decides. */
static int sm_lean_inner(uh_heap *h, const struct sm_node *nd, const uh_key *k,
			 struct sm_range *r, uint32_t *pos)
{
	uint32_t skip = nd->hint & SM_SKIP_MASK, have = r->lo < r->hi ? r->lo : r->hi;
	uint32_t lo = 0, hi = nd->n, kh;
	uint64_t tag;

	if (!(nd->hint & SM_HINTED) || k->kind == UH_KEY_I64 ||
	    (skip > have && !sm_pre_match(nd, k, skip, have)))
		return 1;
	kh = sm_hint(k, skip);
	/* The hints of keys lo - 1 and hi, the bounds of the child's range,
	 * are the last ones each side's move saw (sm_child_range's answer
	 * without its reads). */
	uint32_t below = 0, above = 0;
	while (lo < hi) {	/* bound: log2(F) rounds */
		uint32_t mid = (lo + hi) / 2;
		uh_load(&tag, (const char *)&nd->mem[SM_KEY(mid)].tag, 8);
		uint32_t th = (uint32_t)(tag >> 32);
		if (th == kh)
			return 1;
		if (kh > th)
			lo = mid + 1, below = th;
		else
			hi = mid, above = th;
	}
	*pos = lo;
	r->outside = 0;
	if (lo > 0)
		r->lo = skip + sm_hint_common(kh, below);
	if (lo < nd->n)
		r->hi = skip + sm_hint_common(kh, above);
	return 0;
}

/* uh_smap_get in the common case, without an optimistic try's or a
 * block's per-slot bookkeeping (as map.c's get_lean): the header, then a
 * node per level, each read in place after its lock word was loaded; after an
 * acquire fence every one of them must pass uh_lock_still, and then the
 * answer is the map's state at the first of those checks (optread.c says
 * why). Key objects are read in place without a note: a key object is
 * immutable and freed only by a commit that changes the node whose slot
 * names it, so that node's check covers it. The search itself is
 * sm_bound's. 0 with *found (and *s when found); 1 when anything is
 * unusual (a commit being applied, a changed node, damage, a key outside
 * a node's prefix...): the general path answers, retries or reports.
 * Inside a block, objects the block holds send it to the general path,
 * and the header and nodes read join the block's read set at the end
 * (uh_tx_note_read: at the versions read, within its snapshot). */
static int sm_get_lean(uh_heap *h, uh_off m, const uh_key *k, struct uh_slot *s, int *found)
{
	static __thread struct sm_kbuf kb;	/* only kb.k is used: keys stay in place */
	struct sm_lean_node path[SM_MAX_HEIGHT];
	struct sm_range r = { 0, 0, 0 };
	struct sm_map mp;
	uint64_t hw, hv;
	uint32_t l, pos = 0;
	int eq = 0, in_block = h->tx.depth > 0;

	/* In a block, an object the block holds is read as the block sees
	 * it (its log, or bytes it made): not here. */
	if ((in_block && (h->tx.doomed || uh_tx_holds(h, m))) || sm_lean_hdr(h, m, &hw, &hv, &mp) ||
	    mp.kind != k->kind)
		return 1;
	for (l = 0; l < mp.height; l++) {	/* bound: height */
		const struct sm_node *nd = &path[l].nd;
		uh_off child = l ? path[l - 1].nd.mem[SM_VAL(pos)].value : mp.root;
		sm_prefetch_node(h, child);
		if ((in_block && uh_tx_holds(h, child)) || sm_lean_node(h, child, &path[l]) ||
		    nd->leaf != (l + 1 == mp.height))
			return 1;
		if (nd->pk ? sm_pl_bound(h, mp.kind, nd, k, 0, &kb, &pos, &eq) != 0 :
			     (nd->leaf || sm_lean_inner(h, nd, k, &r, &pos)) &&
				     sm_bound(h, mp.kind, nd, k, !nd->leaf, &kb, &pos, &eq, &r) != 0)
			return 1;
		if (!nd->leaf && uh_slot_type(nd->mem[SM_VAL(pos)].tag) != UH_T_REF)
			return 1;
	}
	if (eq)
		sm_leaf_val(h, &path[mp.height - 1].nd, pos, s);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (l = 0; l < mp.height; l++)	/* bound: height */
		if (!uh_lock_still(h, UH_REF_OFFSET(path[l].nd.off), path[l].w))
			return 1;
	if (!uh_lock_still(h, UH_REF_OFFSET(m), hw))
		return 1;
	/* In a block the objects read join its read set, as validated reads
	 * would: its snapshot holds them, and its commit checks them. */
	if (in_block && !uh_tx_note_read(h, m, hv))
		return 1;
	for (l = 0; in_block && l < mp.height; l++)	/* bound: height */
		if (!uh_tx_note_read(h, path[l].nd.off, path[l].ver))
			return 1;
	*found = eq;
	h->st.opt_reads++;
	return 0;
}

int uh_smap_get(uh_heap *h, uh_off m, const uh_key *k, uh_value *v)
{
	static __thread struct sm_op op;	/* 4 KiB key buffer: not on the stack */
	int found, rc = uh_check_handle(h);
	struct uh_slot s;

	/* The key is checked against its own kind: the lean get reads the
	 * map's in place and gives up on another, and the arguments are
	 * checked in full (sm_args_k) only on the way to the general path,
	 * as the hash map's get does. A key the lean get finds is byte for
	 * byte one the map holds, whose UTF-8 was checked when it was put:
	 * only a miss checks it (a bad key is an error, not "not found"). */
	if (rc || (rc = uh_key_check_shape(k ? k->kind : 0, k)) != 0)
		return rc;
	int lean = sm_get_lean(h, m, k, &s, &found) == 0;
	if (lean && found) {
		if (v)
			uh_slot_to_value(&s, v);
		uh_prefetch_value(h, &s);
		return 0;
	}
	if ((rc = uh_key_check_utf8(k)) != 0)
		return rc;
	if (lean)
		return uh_err_set(UH_ENOTFOUND, "key is not in the sorted map");
	if ((rc = sm_args_k(h, m, k, 0, 0)) != 0)
		return rc;
	op.m = m;
	op.k = k;
	if ((rc = uh_opt_run(h, sm_get_body, &op)) == 0 && v)
		*v = op.out;
	return rc;
}
