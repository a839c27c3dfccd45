/*
 * smap_check.c -- uh_smap_check: walks the whole sorted map in one block
 * and verifies the invariants listed at the top of smap.c (keys strictly
 * increasing in every node and along the leaf chain, separators bounding
 * their children, every leaf at depth height-1, the chain visiting exactly
 * the leaves in order, the count), the key hints and prefixes of every
 * node (smap_node.c), and that packed leaves' unused cells are zero.
 * Read-only; a failure names the node and what is wrong with it.
 */
#include <string.h>

#include "smap_int.h"

/* ---- check ---- */

struct sm_chk {
	uh_off m;
	struct sm_map mp;
	uh_off expect;		/* next leaf the chain must name */
	uint64_t entries;
	int have_last;
	int li;			/* bufs[li] holds the last leaf key seen */
	struct sm_kbuf bufs[2], a, b;
};

/* k(x) < k(y) required (strict), both keys loaded and compared. */
static int sm_chk_less(uh_heap *h, struct sm_chk *c, const struct sm_kref *x,
		       const struct sm_kref *y, int orequal, int *ok)
{
	int rc;

	if ((rc = sm_kref_key(h, c->mp.kind, x, &c->a)) != 0 ||
	    (rc = sm_kref_key(h, c->mp.kind, y, &c->b)) != 0)
		return rc;
	int cmp = uh_key_cmp(&c->a.k, &c->b.k);
	*ok = orequal ? cmp <= 0 : cmp < 0;
	return 0;
}

static int sm_chk_tail(uh_heap *h, uh_off off, uint32_t from, uint32_t to)
{
	struct uh_slot s;
	int rc;

	for (uint32_t i = from; i < to; i++) {	/* bound: slots */
		if ((rc = sm_rd(h, off, i, &s)) != 0)
			return rc;
		if (s.tag || s.value)
			return sm_bad(h, "node %llu: unused slot %u is not empty",
				      (unsigned long long)off, i);
	}
	return 0;
}

/* Entry i of a packed leaf, key k, held as kr: an inline key's cell is
 * zero past it and it has no key object; a long key's cell holds its
 * first bytes and its key object is of the map's kind. */
static int sm_chk_cell(uh_heap *h, struct sm_chk *c, const struct sm_node *nd, uint32_t i,
		       const struct sm_kref *kr, const uh_key *k)
{
	static const unsigned char zero[PL_CELL];
	uint32_t len = k->len < PL_INLINE_MAX ? (uint32_t)k->len : PL_INLINE_MAX;

	if (kr->inl ? (kr->s.tag || kr->s.value ||
		       memcmp(kr->cell + 1 + len, zero, PL_INLINE_MAX - len) != 0) :
		      (kr->cell[0] != PL_LONG || k->len <= PL_INLINE_MAX ||
		       uh_slot_type(kr->s.tag) != sm_key_type(c->mp.kind) ||
		       memcmp(kr->cell + 1, k->data, PL_INLINE_MAX) != 0))
		return sm_bad(h, "leaf %llu: cell %u does not hold its %u-byte key as the "
			      "format says", (unsigned long long)nd->off, i, (unsigned)k->len);
	return 0;
}

/* A packed leaf's entries past n and its reserved bytes are zero. */
static int sm_chk_pl_tail(uh_heap *h, const struct sm_node *nd)
{
	static __thread unsigned char want[PL_PAYLOAD];
	const unsigned char *p = nd->pk;

	/* The leaf as it should be: its header and entries, zeros elsewhere. */
	memset(want, 0, sizeof(want));
	memcpy(want, p, PL_N_AT + 4);
	pl_copy(want, 0, p, 0, nd->n);
	memcpy(want + PL_VALS_AT + 8 * PL_NEXT, p + PL_VALS_AT + 8 * PL_NEXT, 8);
	want[PL_TYPES_AT + PL_NEXT] = p[PL_TYPES_AT + PL_NEXT];
	if (memcmp(want, p, PL_PAYLOAD) != 0)
		return sm_bad(h, "leaf %llu: bytes past its %u entries are not zero",
			      (unsigned long long)nd->off, nd->n);
	return 0;
}

static int sm_chk_leaf(uh_heap *h, struct sm_chk *c, const struct sm_node *nd, uint32_t level,
		       struct sm_kref *min, struct sm_kref *max)
{
	struct sm_kref ks;
	struct uh_slot vs;
	int rc;

	if (nd->off != c->expect)
		return sm_bad(h, "leaf chain names leaf %llu where the tree has leaf %llu",
			      (unsigned long long)c->expect, (unsigned long long)nd->off);
	c->expect = nd->next;
	if (nd->n == 0 && level > 0)
		return sm_bad(h, "leaf %llu is empty", (unsigned long long)nd->off);
	for (uint32_t i = 0; i < nd->n; i++) {	/* bound: F */
		struct sm_kbuf *kb = &c->bufs[c->li ^ 1];
		if ((rc = sm_leaf_kref(h, nd, i, &ks)) != 0 || (rc = sm_leaf_val(h, nd, i, &vs)) != 0 ||
		    (rc = sm_kref_key(h, c->mp.kind, &ks, kb)) != 0)
			return rc;
		if (nd->pk && (rc = sm_chk_cell(h, c, nd, i, &ks, &kb->k)) != 0)
			return rc;
		if (c->have_last && uh_key_cmp(&c->bufs[c->li].k, &kb->k) >= 0)
			return sm_bad(h, "leaf %llu: key %u is not greater than the key before it",
				      (unsigned long long)nd->off, i);
		if (uh_slot_type(vs.tag) == 0 || uh_slot_type(vs.tag) > UH_T_MAX)
			return sm_bad(h, "leaf %llu: value %u has type %u",
				      (unsigned long long)nd->off, i, uh_slot_type(vs.tag));
		c->li ^= 1;
		c->have_last = 1;
		if (i == 0)
			*min = ks;
		*max = ks;
	}
	c->entries += nd->n;
	if (nd->pk)
		return sm_chk_pl_tail(h, nd);
	if ((rc = sm_chk_tail(h, nd->off, SM_KEY(nd->n), SM_KEY(SM_F))) != 0)
		return rc;
	return sm_chk_tail(h, nd->off, SM_VAL(nd->n), SM_NSLOTS);
}

static int sm_chk_node(uh_heap *h, struct sm_chk *c, uh_off off, uint32_t level,
		       struct sm_kref *min, struct sm_kref *max);

static int sm_chk_inner(uh_heap *h, struct sm_chk *c, const struct sm_node *nd, uint32_t level,
			struct sm_kref *min, struct sm_kref *max)
{
	struct sm_kref key = { .inl = 0 }, prev, cmin, cmax;
	uh_off child;
	int ok, rc;

	if (level == 0 && nd->n == 0)
		return sm_bad(h, "root %llu has no keys", (unsigned long long)nd->off);
	for (uint32_t i = 0; i <= nd->n; i++) {	/* bound: F */
		if ((rc = sm_child(h, nd, i, &child)) != 0 ||
		    (rc = sm_chk_node(h, c, child, level + 1, &cmin, &cmax)) != 0)
			return rc;
		if (i == 0)
			*min = cmin;
		*max = cmax;
		if (i > 0) {	/* child i >= key i-1 */
			if ((rc = sm_chk_less(h, c, &prev, &cmin, 1, &ok)) != 0)
				return rc;
			if (!ok)
				return sm_bad(h, "node %llu: child %u holds a key below "
					      "separator %u", (unsigned long long)nd->off, i, i - 1);
		}
		if (i == nd->n)
			break;
		if ((rc = sm_rd(h, nd->off, SM_KEY(i), &key.s)) != 0 ||
		    (rc = sm_chk_less(h, c, &cmax, &key, 0, &ok)) != 0)
			return rc;
		if (!ok)
			return sm_bad(h, "node %llu: child %u holds a key not below separator %u",
				      (unsigned long long)nd->off, i, i);
		if (i > 0) {
			if ((rc = sm_chk_less(h, c, &prev, &key, 0, &ok)) != 0)
				return rc;
			if (!ok)
				return sm_bad(h, "node %llu: separators %u and %u out of order",
					      (unsigned long long)nd->off, i - 1, i);
		}
		prev = key;
	}
	if ((rc = sm_chk_tail(h, nd->off, SM_KEY(nd->n), SM_KEY(SM_F))) != 0)
		return rc;
	return sm_chk_tail(h, nd->off, SM_VAL(nd->n + 1), SM_NSLOTS);
}

/* A hinted node's keys share its prefix and carry their hints; any other
 * node's key slots have no hint bits. */
static int sm_chk_hints(uh_heap *h, struct sm_chk *c, const struct sm_node *nd)
{
	uint32_t skip = nd->hint & SM_SKIP_MASK, hinted = nd->hint & SM_HINTED;
	struct uh_slot s;
	int rc;

	if (hinted && c->mp.kind == UH_KEY_I64)
		return sm_bad(h, "node %llu of an i64 map has key hints",
			      (unsigned long long)nd->off);
	if (!hinted && skip)
		return sm_bad(h, "node %llu: skip %u without hints", (unsigned long long)nd->off,
			      skip);
	for (uint32_t i = 0; i < nd->n; i++) {	/* bound: F */
		if ((rc = sm_rd(h, nd->off, SM_KEY(i), &s)) != 0)
			return rc;
		uint32_t sh = (uint32_t)(s.tag >> 32);
		if (!hinted) {
			if (sh)
				return sm_bad(h, "node %llu: key %u has a hint, the node none",
					      (unsigned long long)nd->off, i);
			continue;
		}
		if ((rc = sm_key_read(h, c->mp.kind, &s, i ? &c->b : &c->a)) != 0)
			return rc;
		const uh_key *k = i ? &c->b.k : &c->a.k;
		if (k->len < skip || (i && memcmp(k->data, c->a.k.data, skip) != 0))
			return sm_bad(h, "node %llu: key %u does not share the node's %u-byte prefix",
				      (unsigned long long)nd->off, i, skip);
		if (sh != sm_hint(k, skip))
			return sm_bad(h, "node %llu: key %u has hint %08x, its bytes say %08x",
				      (unsigned long long)nd->off, i, sh, sm_hint(k, skip));
	}
	/* An inner node's prefix slot: the last bytes of the prefix, as key
	 * 0 has them (sm_meta_decode checked its form). */
	uint32_t m = skip < SM_PRE_MAX ? skip : SM_PRE_MAX;
	if (nd->pre_n && (nd->pre_n != m ||
			  (nd->n > 0 && memcmp(c->a.k.data + skip - m, &nd->pre, m) != 0)))
		return sm_bad(h, "node %llu: its prefix slot does not hold the last %u bytes of "
			      "its %u-byte prefix", (unsigned long long)nd->off, m, skip);
	return 0;
}

static int sm_chk_node(uh_heap *h, struct sm_chk *c, uh_off off, uint32_t level,
		       struct sm_kref *min, struct sm_kref *max)
{
	struct sm_node nd;
	static __thread struct sm_nodebuf copy[SM_MAX_HEIGHT];
	int rc = level < SM_MAX_HEIGHT ? sm_node_load(h, off, level + 1 == c->mp.height, &nd,
						      &copy[level]) :
					 sm_bad(h, "node %llu is deeper than %u levels",
						(unsigned long long)off, SM_MAX_HEIGHT);

	if (rc)
		return rc;
	if (nd.pk && c->mp.kind == UH_KEY_I64)
		return sm_bad(h, "leaf %llu of an i64 map is packed", (unsigned long long)off);
	if (!nd.pk && (rc = sm_chk_hints(h, c, &nd)) != 0)
		return rc;
	return nd.leaf ? sm_chk_leaf(h, c, &nd, level, min, max) :
			 sm_chk_inner(h, c, &nd, level, min, max);
}

static int sm_check_body(uh_heap *h, void *arg)
{
	struct sm_chk *c = arg;
	struct sm_kref min, max;
	int rc;

	c->entries = 0;
	c->have_last = 0;
	c->li = 0;
	if ((rc = sm_hdr_load(h, c->m, &c->mp)) != 0)
		return rc;
	c->expect = c->mp.first;
	if ((rc = sm_chk_node(h, c, c->mp.root, 0, &min, &max)) != 0)
		return rc;
	if (c->expect)
		return sm_bad(h, "leaf chain goes on past the last leaf to %llu",
			      (unsigned long long)c->expect);
	if (c->entries != c->mp.count)
		return sm_bad(h, "header counts %llu entries, leaves hold %llu",
			      (unsigned long long)c->mp.count, (unsigned long long)c->entries);
	return 0;
}

int uh_smap_check(uh_heap *h, uh_off m)
{
	static __thread struct sm_chk c;
	int rc = sm_args_k(h, m, NULL, 0, 1);

	if (rc)
		return rc;
	c.m = m;
	return sm_exec(h, sm_check_body, &c);
}
