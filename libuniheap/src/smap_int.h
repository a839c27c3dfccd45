/*
 * smap_int.h -- what the sorted map's files share (smap.c has the layout
 * and the list of files): the node and header slot numbers, the structs a
 * node, a header, a key buffer and a descent path are read into, the
 * prototypes of smap_node.c and smap_search.c, and the small helpers of
 * the read and write paths as static inline functions, so that a get, a
 * scan step and a put inline them as they did when the map was one file.
 *
 * Every function here runs inside a block (an implicit one if the caller
 * is outside) or in an optimistic read (optread.c): reads are validated
 * against the block's snapshot or by the try's final check; writes commit
 * or roll back with the block.
 */
#ifndef UH_SMAP_INT_H
#define UH_SMAP_INT_H

#include <string.h>

#include "smap_leaf.h"
#include "value.h"

#define SM_F 30u				/* keys per node, at most */
#define SM_NSLOTS (3u + 2u * SM_F)		/* 63 */
#define SM_META 0u
#define SM_NEXT 1u
#define SM_KEY(i) (2u + (i))
#define SM_VAL(i) (2u + SM_F + (i))		/* value (leaf) / child (inner) */
#define SM_LEAF_BIT (1ull << 32)
#define SM_HINTED (1u << 31)			/* meta tag, high half: keys carry hints */
#define SM_SKIP_MASK 0xfffu			/* ... and the prefix length they skip */
#define SM_PRE_MAX 8u				/* prefix bytes an inner node keeps */
#define SM_MAX_HEIGHT 24u			/* 15^23 keys: never reached */

#define SH_KIND 0u
#define SH_COUNT 1u
#define SH_ROOT 2u
#define SH_HEIGHT 3u
#define SH_FIRST 4u
#define SH_NSLOTS 5u

struct sm_map {
	uh_off off;
	uint32_t kind;
	uint32_t height;
	uint64_t count;
	uh_off root;
	uh_off first;
};

struct sm_node {
	uh_off off;
	uint32_t n;
	int leaf;
	uint32_t hint;		/* the meta tag's high half: SM_HINTED | skip, or 0 */
	uh_off next;
	uint32_t pre_n;		/* inner: prefix bytes [skip - pre_n, skip) in pre, or 0 */
	uint64_t pre;
	const struct uh_slot *mem;	/* outside blocks: its slots in place, else NULL */
	const unsigned char *pk;	/* a packed leaf: its payload (in place or a copy) */
	int lean;		/* read by a lean get or step: key objects in place, unnoted */
};

/* A key read from the heap, copied out through validated reads. */
struct sm_kbuf {
	uh_key k;
	unsigned char b[UH_KEY_MAX_LEN];
};

/* Bytes a search key is known to share with the lower and upper bound
 * of a node's key range (the separators around it in its parent; 0 for a
 * side with no bound): every key of the range shares min(lo, hi) bytes
 * with the search key, since the keys between two keys share what those
 * two share. outside: the last sm_bound found that the search key does
 * not share the node's prefix (it lies beyond all its keys on one side). */
struct sm_range {
	uint32_t lo, hi;
	int outside;
};

/* Nodes from the root (0) to a leaf, and the child taken at each inner. */
struct sm_path {
	uint32_t depth;
	uh_off node[SM_MAX_HEIGHT];
	uint32_t idx[SM_MAX_HEIGHT];
	uint32_t n[SM_MAX_HEIGHT];
	uint32_t hint[SM_MAX_HEIGHT];
	struct sm_range leaf_range;	/* of the leaf it ends at */
};

static const struct uh_slot sm_empty = { 0, 0 };

/* Room for a node read at once in a block: its class and size words,
 * then its slots, as they lie from the object's offset 8 on. */
struct sm_nodebuf {
	uint32_t cs[2];
	struct uh_slot s[SM_NSLOTS];
};
_Static_assert(offsetof(struct sm_nodebuf, s) == UH_OBJHDR_SIZE - UH_OBJ_WORD_AT,
	       "slots follow the class and size words");

/* A node read in place by a lean get or iteration step: its lock word w
 * (loaded before its bytes) and the version ver its bytes are at. */
struct sm_lean_node {
	struct sm_node nd;
	uint64_t w, ver;
};

struct sm_op {
	uh_off m;
	const uh_key *k;
	struct uh_slot val;	/* put: the new value */
	uint32_t flags;
	uh_value out;		/* get: the value; remove: the old one */
	struct sm_map mp;
	struct sm_path path;
	struct sm_node leaf;
	uh_off spare[SM_MAX_HEIGHT + 1];	/* put: nodes allocated up front */
	uint32_t nspare, used;
	struct sm_kbuf kb;
};

/* Defined in smap_node.c and smap_search.c; hidden: calls between the
 * sorted map's files bind locally, as calls inside one file did. */
#pragma GCC visibility push(hidden)

/* smap_node.c */
int sm_bad(uh_heap *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int sm_rd(uh_heap *h, uh_off obj, uint32_t i, struct uh_slot *s);
int sm_move(uh_heap *h, uh_off obj, uint32_t from, uint32_t to, uint32_t n);
int sm_slots_rd(uh_heap *h, uh_off obj, uint32_t from, uint32_t n, struct uh_slot *out);
int sm_slots_wr(uh_heap *h, uh_off obj, uint32_t from, uint32_t n,
		const struct uh_slot *in);
int sm_obj_hdr(uh_heap *h, uh_off ref, uint32_t *cls, uint32_t *payload, int *valid,
	       uint32_t *slot_size);
int sm_key_read(uh_heap *h, uint32_t kind, const struct uh_slot *s, struct sm_kbuf *kb);
int sm_lean_key(uh_heap *h, uint32_t kind, const struct uh_slot *ks, uh_key *key);
__attribute__((noinline))	/* keeps sm_bound's lean path short */
int sm_key_get(uh_heap *h, uint32_t kind, const struct uh_slot *s, struct sm_kbuf *kb);
int sm_hint_keys(uh_heap *h, uint32_t kind, struct uh_slot *keys, uint32_t n,
		 uint32_t *hint);
int sm_hint_join(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t *hint,
		 struct uh_slot *ks, const uh_key *key, int shares, int *retag);
int sm_retag_node(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t but,
		  uint32_t skip);
int sm_hdr_load(uh_heap *h, uh_off m, struct sm_map *mp);
int sm_lean_node(uh_heap *h, uh_off ref, struct sm_lean_node *l);
int sm_node_load(uh_heap *h, uh_off off, int want_leaf, struct sm_node *nd,
		 struct sm_nodebuf *buf);
int sm_inner_meta(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t hint,
		  const struct uh_slot *ks);
int sm_child(uh_heap *h, const struct sm_node *nd, uint32_t i, uh_off *out);
int sm_kref_key(uh_heap *h, uint32_t kind, const struct sm_kref *kr, struct sm_kbuf *kb);
int sm_args_k(uh_heap *h, uh_off m, const uh_key *k, int writes, int key_opt);

/* smap_search.c */
int sm_bound(uh_heap *h, uint32_t kind, const struct sm_node *nd, const uh_key *k,
	     int upper, struct sm_kbuf *kb, uint32_t *out, int *eq, struct sm_range *r);
int sm_descend(uh_heap *h, const struct sm_map *mp, const uh_key *k, int rightmost,
	       struct sm_path *p, struct sm_node *leaf, struct sm_kbuf *kb);
int sm_pred_leaf(uh_heap *h, const struct sm_map *mp, const struct sm_path *p,
		 struct sm_node *pred, int *found);
int sm_find(uh_heap *h, struct sm_op *op, uint32_t *pos, int *eq);

#pragma GCC visibility pop

/* ---- small helpers every file inlines (slots, keys, hints, header) ---- */

static inline int sm_doomed(uh_heap *h, int rc)
{
	return h->tx.doomed ? uh_err_set(h->tx.doomed, "block was rolled back: %s",
					 uh_strerror(h->tx.doomed)) : rc;
}

/* Slot i of node obj. A block's first write to a node makes it an image
 * (uh_tx_write_image): an insert or remove rewrites many of its slots. */
static inline int sm_wr(uh_heap *h, uh_off obj, uint32_t i, const struct uh_slot *s)
{
	return uh_tx_write_image(h, obj, uh_slot_off(obj, i), s, sizeof(*s), uh_slot_off(obj, 0),
				 SM_NSLOTS * sizeof(struct uh_slot));
}

static inline int sm_wr_ref(uh_heap *h, uh_off obj, uint32_t i, uh_off ref)
{
	struct uh_slot s = { UH_T_REF, ref };
	return sm_wr(h, obj, i, &s);
}

/* Slot i of a loaded node: in place outside blocks, else a validated read. */
static inline int sm_at(uh_heap *h, const struct sm_node *nd, uint32_t i, struct uh_slot *s)
{
	if (nd->mem) {
		uh_load(s, (const char *)&nd->mem[i], sizeof(*s));
		return 0;
	}
	return sm_rd(h, nd->off, i, s);
}

static inline uint32_t sm_key_type(uint32_t kind)
{
	return kind == UH_KEY_I64 ? UH_T_I64 : kind == UH_KEY_STRING ? UH_T_STRING : UH_T_BYTES;
}

static inline uint32_t sm_key_class(uint32_t kind)
{
	return kind == UH_KEY_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES;
}

/* Key object o (at ref, its header inside the mapping) as a key whose
 * bytes stay in place: 0, or 1 if it is not a live key object of kind's
 * class whose bytes fit the mapping. */
static inline int sm_key_view(uh_heap *h, uint32_t kind, uh_off ref, const struct uh_objhdr *o,
			      uh_key *key)
{
	uint32_t len;

	if (!uh_obj_live_in_place(h, o, ref, sm_key_class(kind), &len) || len > UH_KEY_MAX_LEN)
		return 1;
	key->data = (const unsigned char *)(o + 1);
	key->len = len;
	return 0;
}

/* A key slot for k: a new object for string/bytes keys. */
static inline int sm_key_new(uh_heap *h, const uh_key *k, struct uh_slot *out)
{
	return uh_key_store(h, k, out);
}

static inline uint32_t sm_hint(const uh_key *k, uint32_t skip)
{
	const unsigned char *d = k->data;
	uint32_t hv = 0;

	if (skip + 4 <= k->len) {	/* the common case: one load */
		memcpy(&hv, d + skip, 4);
		return __builtin_bswap32(hv);
	}
	for (uint32_t i = 0; i < 4; i++)	/* bound: 4 */
		hv = hv << 8 | (skip + i < k->len ? d[skip + i] : 0u);
	return hv;
}

/* Bytes a and b have in common at their start (at most SM_SKIP_MASK). */
static inline uint32_t sm_lcp(const uh_key *a, const uh_key *b)
{
	const unsigned char *x = a->data, *y = b->data;
	size_t n = a->len < b->len ? a->len : b->len;
	uint32_t i = 0;

	while (i < n && i < SM_SKIP_MASK && x[i] == y[i])	/* bound: n */
		i++;
	return i;
}

static inline void sm_retag(struct uh_slot *s, const uh_key *k, uint32_t skip)
{
	s->tag = uh_slot_type(s->tag) | (uint64_t)sm_hint(k, skip) << 32;
}

/* Hints for keys[0..n), one half of a split node whose keys all carry
 * hints of the node's skip: if the first and last keys' hints differ in
 * their first byte, skip is exactly what those two keys share and every
 * hint stays as it is (no key read); else sm_hint_keys afresh. */
static inline int sm_hint_half(uh_heap *h, uint32_t kind, struct uh_slot *keys, uint32_t n,
			       uint32_t skip, uint32_t *hint)
{
	if (n > 0 && (keys[0].tag >> 56) != (keys[n - 1].tag >> 56)) {
		*hint = SM_HINTED | skip;
		return 0;
	}
	return sm_hint_keys(h, kind, keys, n, hint);
}

/* The key of key slot s of node nd. A node read by a lean get or
 * iteration step has its key objects read in place without a note (the
 * node's own check covers them, sm_get_lean); 1 there means "not a key
 * object" and the general path answers. Else sm_key_get. */
static inline int sm_node_key(uh_heap *h, uint32_t kind, const struct sm_node *nd,
			      const struct uh_slot *s, struct sm_kbuf *kb)
{
	if (nd->lean)
		return sm_lean_key(h, kind, s, &kb->k) ? UH_ECONFLICT : 0;
	return sm_key_get(h, kind, s, kb);
}

/* Header slot i. Like a node, the header is logged as an image of its
 * slots on the block's first write (sm_hdr_lock): a block of many puts
 * rewrites its count each time and reads it back at once. */
static inline int sm_hdr_set(uh_heap *h, const struct sm_map *mp, uint32_t i, uint32_t tag,
			     uint64_t v)
{
	struct uh_slot s = { tag, v };
	return uh_tx_write_image(h, mp->off, uh_slot_off(mp->off, i), &s, sizeof(s),
				 uh_slot_off(mp->off, 0), SH_NSLOTS * sizeof(struct uh_slot));
}

/* Lock header m (and take its image) before a change of the count. */
static inline int sm_hdr_lock(uh_heap *h, uh_off m)
{
	char *mem;
	return uh_tx_image(h, m, uh_slot_off(m, 0), SH_NSLOTS * sizeof(struct uh_slot), &mem);
}

/* Start loading every line of the node at off at once: a search then
 * waits for one memory round trip per node instead of one per probe.
 * off need not name a node yet (that is checked next): a prefetch reads
 * nothing and never faults. */
UH_PREFETCH_FN void sm_prefetch_node(uh_heap *h, uh_off off)
{
	uint64_t o = UH_REF_OFFSET(off);

	if (o < h->size)
		uh_prefetch(h->base + o, UH_OBJHDR_SIZE + SM_NSLOTS * sizeof(struct uh_slot));
}

static inline int sm_meta_set(uh_heap *h, uh_off off, uint32_t n, int leaf, uint32_t hint)
{
	struct uh_slot s = { UH_T_I64 | (uint64_t)hint << 32,
			     (uint64_t)n | (leaf ? SM_LEAF_BIT : 0) };
	return sm_wr(h, off, SM_META, &s);
}

/* The len bytes at d, copied into kb as a key of kind. */
static inline void sm_kbuf_set(struct sm_kbuf *kb, uint32_t kind, const void *d, size_t len)
{
	memcpy(kb->b, d, len);
	kb->k = (uh_key){ .kind = kind, .data = kb->b, .len = len };
}

/* Inside the user's block the body joins it; outside, it runs in its own
 * block, re-run on conflicts (nothing of a failed try is left). */
static inline int sm_exec(uh_heap *h, uh_block_fn body, void *arg)
{
	if (h->tx.depth) {
		int rc = body(h, arg);
		return rc ? rc : sm_doomed(h, 0);
	}
	return uh_run(h, body, arg, 0);
}

/* Value of entry i of leaf nd (of a leaf read in place: a plain load,
 * which the caller's check of its lock word vouches for; never fails). */
static inline int sm_leaf_val(uh_heap *h, const struct sm_node *nd, uint32_t i, struct uh_slot *s)
{
	if (nd->pk) {
		pl_slot(nd->pk, i, s);
		return 0;
	}
	return sm_at(h, nd, SM_VAL(i), s);
}

/* Key of entry i of leaf nd, as the leaf holds it. */
static inline int sm_leaf_kref(uh_heap *h, const struct sm_node *nd, uint32_t i, struct sm_kref *kr)
{
	if (nd->pk) {
		pl_kref(nd->pk, i, kr);
		return 0;
	}
	kr->inl = 0;
	return sm_at(h, nd, SM_KEY(i), &kr->s);
}

#endif
