/*
 * smap_node.c -- the sorted map's bottom layer: its errors, slot reads and
 * writes, keys (read validated, in place, or copied), key hints, the
 * header, and loading a node or packed leaf (in a block, optimistically,
 * or lean); then the argument checks every public call makes first. The
 * layout is described at the top of smap.c; the small helpers of these
 * sections that the other files inline are in smap_int.h.
 *
 * Key hints (format 4; string and bytes keys). A node whose meta tag has
 * SM_HINTED in its high half names there a length skip that every key of
 * the node has in common as a prefix, and each key slot's tag carries in
 * its high half the key's bytes [skip, skip + 4), big-endian, zero past
 * the key's end. A search for a key that shares the node's prefix (key 0
 * tells) decides every comparison whose hints differ without reading the
 * key object: the first differing byte lies in the hint, and a key that
 * ended there sorts first, as its zero does. Equal hints still read the
 * key. Writers keep the invariant: a key that does not share the prefix
 * shrinks skip (and every slot is retagged), a split computes each half's
 * skip afresh from its first and last keys. Nodes written by format 3
 * have no hints until they split.
 *
 * Slots are read 16 bytes at a time through uh_tx_read. A block's first
 * write to a node makes the node an image in its log (uh_tx_write_image):
 * one WRITE entry of all its slots, where the block's later writes to the
 * node land and its reads find them, so an insert that shifts 20 slots
 * shifts them with one memmove in the image and logs one entry per node
 * it changes, however many inserts of the block land there. The header
 * is logged the same way when a put or remove locks it (sm_hdr_lock).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "smap_int.h"

/* ---- errors ---- */

/* Something read does not fit the format. If the block was rolled back
 * (a conflict), that is the cause, not damage: reads then return zeros. */
int sm_bad(uh_heap *h, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (h->tx.doomed)
		return uh_err_set(h->tx.doomed, "block was rolled back: %s",
				  uh_strerror(h->tx.doomed));
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return uh_err_set(UH_EINTERNAL, "sorted map is damaged: %s", msg);
}

/* ---- slots ---- */

int sm_rd(uh_heap *h, uh_off obj, uint32_t i, struct uh_slot *s)
{
	int rc = uh_tx_read(h, obj, uh_slot_off(obj, i), s, sizeof(*s));
	return rc ? sm_doomed(h, rc) : 0;
}

/* Slots [from, from + n) of node obj to [to, to + n), as memmove would:
 * one memmove in the node's image, or slot by slot if the block locked
 * the node before without one. */
int sm_move(uh_heap *h, uh_off obj, uint32_t from, uint32_t to, uint32_t n)
{
	struct uh_slot s;
	char *mem;
	int rc = uh_tx_image(h, obj, uh_slot_off(obj, 0), SM_NSLOTS * sizeof(struct uh_slot), &mem);

	if (rc || n == 0)
		return rc;
	if (mem) {
		memmove(mem + to * sizeof(s), mem + from * sizeof(s), n * sizeof(s));
		return 0;
	}
	for (uint32_t j = 0; j < n; j++) {	/* bound: F + 1 */
		uint32_t k = to > from ? n - 1 - j : j;
		if ((rc = sm_rd(h, obj, from + k, &s)) != 0 || (rc = sm_wr(h, obj, to + k, &s)) != 0)
			return rc;
	}
	return 0;
}

/* Slots [from, from + n) of node obj into out: one copy from the block's
 * image of it (or from the node, if the block made it), else slot by slot. */
int sm_slots_rd(uh_heap *h, uh_off obj, uint32_t from, uint32_t n, struct uh_slot *out)
{
	const void *mem = uh_tx_own_bytes(h, obj, uh_slot_off(obj, from), n * sizeof(*out));
	int rc;

	if (mem) {
		memcpy(out, mem, n * sizeof(*out));
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)	/* bound: SM_NSLOTS */
		if ((rc = sm_rd(h, obj, from + i, &out[i])) != 0)
			return rc;
	return 0;
}

/* in[0..n) to slots [from, from + n) of node obj: one copy into its image
 * (taken now if the block has none yet), else slot by slot. */
int sm_slots_wr(uh_heap *h, uh_off obj, uint32_t from, uint32_t n,
		const struct uh_slot *in)
{
	char *mem;
	int rc = uh_tx_image(h, obj, uh_slot_off(obj, 0), SM_NSLOTS * sizeof(*in), &mem);

	if (rc)
		return rc;
	if (mem) {
		memcpy(mem + from * sizeof(*in), in, n * sizeof(*in));
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)	/* bound: SM_NSLOTS */
		if ((rc = sm_wr(h, obj, from + i, &in[i])) != 0)
			return rc;
	return 0;
}

/* Outside blocks (an optimistic try, optread.c) an object is noted once,
 * before its first byte is read, and then read in place with plain loads:
 * the try's final check vouches for every byte, so until then only the
 * bounds of what is read matter. The object at ref, noted, if its header
 * and `bytes` of payload lie inside the mapping (uh_obj_in_map); else
 * NULL and *rc. */
static const struct uh_objhdr *sm_opt_obj(uh_heap *h, uh_off ref, uint32_t bytes, int *rc)
{
	const struct uh_objhdr *o = uh_obj_in_map(h, ref, bytes);

	if (!o) {
		*rc = sm_bad(h, "reference %llu is not an object",
			     (unsigned long long)UH_REF_OFFSET(ref));
		return NULL;
	}
	if ((*rc = uh_opt_touch(h, UH_REF_OFFSET(ref))) != 0)
		return NULL;
	return o;
}

/* Class and payload size in an object's class and size words cs, and
 * whether it is live: valid, of ref's generation. */
static void sm_words(const uint32_t cs[2], uh_off ref, uint32_t *cls, uint32_t *payload,
		     int *valid)
{
	*cls = uh_word_class(cs[0]);
	*payload = cs[1] & UH_OBJ_SIZE_MASK;
	*valid = (cs[1] & UH_OBJ_VALID) != 0 && uh_word_gen(cs[0]) == UH_REF_GEN(ref);
}

/* Class and payload size of the object reference ref names, through a
 * validated read. *valid = 0 for a freed object (or one of another
 * generation: the slot was reused). */
int sm_obj_hdr(uh_heap *h, uh_off ref, uint32_t *cls, uint32_t *payload, int *valid,
	       uint32_t *slot_size)
{
	uint64_t off = UH_REF_OFFSET(ref);
	uint32_t slot, cs[2];
	const struct uh_arena_span *sp = off ? uh_arena_slot_of(&h->ix, off, &slot) : NULL;

	if (!sp)
		return sm_bad(h, "reference %llu is not an object", (unsigned long long)off);
	int rc = uh_tx_read(h, off, off + UH_OBJ_WORD_AT, cs, sizeof(cs));
	if (rc)
		return sm_doomed(h, rc);
	sm_words(cs, ref, cls, payload, valid);
	if (slot_size)
		*slot_size = sp->slot_size;
	return 0;
}

/* In a block, the class and size words of the object at ref and its
 * first len payload bytes as the block sees them, read at once into buf
 * (the words, then the bytes, as they lie from the object's offset 8 on):
 * one validated read instead of one for the words and one per slot. *mem
 * is where the bytes are: in buf, or the block's own (its image of the
 * object, or the object it made); NULL if the block locked the object
 * without an image (read it slot by slot then), or if ref's slot is too
 * small for len bytes (only the words are read: the caller's checks of
 * them name what is wrong). */
static int sm_obj_copy(uh_heap *h, uh_off ref, uint32_t *buf, uint32_t len, const void **mem)
{
	uint64_t off = UH_REF_OFFSET(ref);
	uint32_t slot;
	const struct uh_arena_span *sp = off ? uh_arena_slot_of(&h->ix, off, &slot) : NULL;
	int fits, rc;

	*mem = NULL;
	if (!sp)
		return sm_bad(h, "reference %llu is not an object", (unsigned long long)off);
	fits = sp->slot_size >= UH_OBJHDR_SIZE + len;
	if (!fits || uh_tx_holds(h, ref)) {
		if ((rc = uh_tx_read(h, ref, off + UH_OBJ_WORD_AT, buf, 2 * sizeof(*buf))) != 0)
			return sm_doomed(h, rc);
		*mem = fits ? uh_tx_own_bytes(h, ref, off + UH_OBJHDR_SIZE, len) : NULL;
		return 0;
	}
	if ((rc = uh_tx_read(h, ref, off + UH_OBJ_WORD_AT, buf, 2 * sizeof(*buf) + len)) != 0)
		return sm_doomed(h, rc);
	*mem = buf + 2;
	return 0;
}

/* ---- keys ---- */

/* Outside blocks: the key object ref names, its bytes left in place
 * (kb->k.data points into the mapping). */
static int sm_key_in_place(uh_heap *h, uint32_t kind, uh_off ref, struct sm_kbuf *kb)
{
	int rc;
	const struct uh_objhdr *o = sm_opt_obj(h, ref, 0, &rc);

	if (!o)
		return rc;
	if (sm_key_view(h, kind, ref, o, &kb->k))
		return sm_bad(h, "key object %llu is freed or not a key of this map",
			      (unsigned long long)ref);
	return 0;
}

/* The key a slot holds, copied into kb through validated reads: key
 * objects are immutable, but one may be freed and reused by another
 * session after our snapshot; a validated read notices that. */
int sm_key_read(uh_heap *h, uint32_t kind, const struct uh_slot *s, struct sm_kbuf *kb)
{
	uint32_t cls, len, ssz;
	int valid, rc;

	memset(&kb->k, 0, sizeof(kb->k));
	kb->k.kind = kind;
	if (uh_slot_type(s->tag) != sm_key_type(kind))
		return sm_bad(h, "key slot of type %u in a map of key kind %u",
			      uh_slot_type(s->tag), kind);
	if (kind == UH_KEY_I64) {
		kb->k.i64 = (int64_t)s->value;
		return 0;
	}
	if (h->opt.on)
		return sm_key_in_place(h, kind, s->value, kb);
	if ((rc = sm_obj_hdr(h, s->value, &cls, &len, &valid, &ssz)) != 0)
		return rc;
	if (!valid || cls != sm_key_class(kind) || len > UH_KEY_MAX_LEN ||
	    len > ssz - UH_OBJHDR_SIZE)
		return sm_bad(h, "key object %llu is freed, of class %u or %u bytes long",
			      (unsigned long long)s->value, cls, len);
	if (len && (rc = uh_tx_read(h, s->value, UH_REF_OFFSET(s->value) + UH_OBJHDR_SIZE, kb->b,
				    len)) != 0)
		return sm_doomed(h, rc);
	kb->k.data = kb->b;
	kb->k.len = len;
	return 0;
}

/* The key of key slot ks, in place, into *key: 0, else 1. */
int sm_lean_key(uh_heap *h, uint32_t kind, const struct uh_slot *ks, uh_key *key)
{
	key->kind = kind;
	if (kind == UH_KEY_I64) {
		key->i64 = (int64_t)ks->value;
		return uh_slot_type(ks->tag) != UH_T_I64;
	}
	const struct uh_objhdr *o = uh_obj_in_map(h, ks->value, 0);
	if (uh_slot_type(ks->tag) != sm_key_type(kind) || !o)
		return 1;
	return sm_key_view(h, kind, ks->value, o, key);
}

/* In a block, the string or bytes key of slot s of a node the block read
 * (its version in the read set) or holds, copied from its object in place
 * into kb: 0, else 1 (the validated read answers then). A key object
 * never changes while it lives, and one such a node references lives as
 * long as the node keeps the version the commit checks (freeing it
 * changes the node), so the key needs no read-set entry of its own; only
 * its header is checked, before and after the copy: a free, or a reuse
 * under another generation, in between shows there. */
static int sm_key_copy(uh_heap *h, uint32_t kind, const struct uh_slot *s, struct sm_kbuf *kb)
{
	uh_key in;
	uint32_t again;

	if (kind == UH_KEY_I64 || sm_lean_key(h, kind, s, &in))
		return 1;
	memcpy(kb->b, in.data, in.len);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!uh_obj_live_in_place(h, (const struct uh_objhdr *)in.data - 1, s->value,
				  sm_key_class(kind), &again) || again != in.len)
		return 1;
	kb->k = (uh_key){ .kind = kind, .data = kb->b, .len = in.len };
	return 0;
}

/* The key of slot s of a node the block read (its version in the read set)
 * or holds: sm_key_copy in a block, else (or if the copy does not pass)
 * sm_key_read. */
__attribute__((noinline))	/* keeps sm_bound's lean path short */
int sm_key_get(uh_heap *h, uint32_t kind, const struct uh_slot *s, struct sm_kbuf *kb)
{
	if (h->tx.depth && !h->opt.on && sm_key_copy(h, kind, s, kb) == 0)
		return 0;
	return sm_key_read(h, kind, s, kb);
}

/* ---- key hints ---- */

/* Hints for a node about to hold keys[0..n): skip is the prefix its first
 * and last keys share (the keys are sorted, so all of them share it), and
 * every slot in keys gets its key's hint. *hint is the meta's (0 for i64
 * keys). */
int sm_hint_keys(uh_heap *h, uint32_t kind, struct uh_slot *keys, uint32_t n,
		 uint32_t *hint)
{
	static __thread struct sm_kbuf a, b;
	uint32_t skip = 0;
	int rc;

	*hint = 0;
	if (kind == UH_KEY_I64)
		return 0;
	if (n > 0) {
		if ((rc = sm_key_get(h, kind, &keys[0], &a)) != 0 ||
		    (rc = sm_key_get(h, kind, &keys[n - 1], &b)) != 0)
			return rc;
		skip = sm_lcp(&a.k, &b.k);
	}
	for (uint32_t i = 0; i < n; i++) {	/* bound: F + 1 */
		if ((rc = sm_key_get(h, kind, &keys[i], &a)) != 0)
			return rc;
		sm_retag(&keys[i], &a.k, skip);
	}
	*hint = SM_HINTED | skip;
	return 0;
}

/* Key slot *ks is about to join the n keys of node off, whose meta hint is
 * *hint: give it its hint. A key that does not share the node's prefix
 * shrinks it, and then every other key slot must be retagged (*retag).
 * key: the slot's key when the caller has it (else it is read); shares:
 * the caller knows the key shares the node's prefix (a search of the
 * node confirmed it), so key 0 need not be read. */
int sm_hint_join(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t *hint,
		 struct uh_slot *ks, const uh_key *key, int shares, int *retag)
{
	static __thread struct sm_kbuf a, b;
	struct uh_slot k0;
	uint32_t skip = *hint & SM_SKIP_MASK;
	int rc;

	*retag = 0;
	ks->tag = uh_slot_type(ks->tag);
	if (kind == UH_KEY_I64 || !(*hint & SM_HINTED))
		return 0;	/* a format 3 node: no hints */
	if (!key) {
		if ((rc = sm_key_get(h, kind, ks, &a)) != 0)
			return rc;
		key = &a.k;
	}
	if (n == 0) {
		skip = sm_lcp(key, key);
	} else if (skip && !shares) {
		if ((rc = sm_rd(h, off, SM_KEY(0), &k0)) != 0 ||
		    (rc = sm_key_get(h, kind, &k0, &b)) != 0)
			return rc;
		uint32_t l = sm_lcp(key, &b.k);
		if (l < skip) {
			skip = l;
			*retag = 1;
		}
	}
	sm_retag(ks, key, skip);
	*hint = SM_HINTED | skip;
	return 0;
}

/* Give the key slots [0, n) of node off but slot `but` the hint of skip. */
int sm_retag_node(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t but,
		  uint32_t skip)
{
	static __thread struct sm_kbuf a;
	struct uh_slot s;
	int rc;

	for (uint32_t i = 0; i < n; i++) {	/* bound: F + 1 */
		if (i == but)
			continue;
		if ((rc = sm_rd(h, off, SM_KEY(i), &s)) != 0 ||
		    (rc = sm_key_get(h, kind, &s, &a)) != 0)
			return rc;
		sm_retag(&s, &a.k, skip);
		if ((rc = sm_wr(h, off, SM_KEY(i), &s)) != 0)
			return rc;
	}
	return 0;
}

/* ---- header and nodes ---- */

/* Room for a header read at once in a block (sm_obj_copy). */
struct sm_hdrbuf {
	uint32_t cs[2];
	struct uh_slot s[SH_NSLOTS];
};
_Static_assert(offsetof(struct sm_hdrbuf, s) == UH_OBJHDR_SIZE - UH_OBJ_WORD_AT,
	       "slots follow the class and size words");

int sm_hdr_load(uh_heap *h, uh_off m, struct sm_map *mp)
{
	struct uh_slot s[SH_NSLOTS];
	struct sm_hdrbuf b;
	uint32_t cls, payload;
	const void *kept, *mem = NULL;
	int valid, rc;

	/* Outside blocks, a header whose lock word has not moved since it was
	 * last read and checked is not read again (optread.c). */
	if ((kept = uh_opt_view(h, m, UH_CLASS_SMAP)) != NULL) {
		memcpy(mp, kept, sizeof(*mp));
		return 0;
	}
	if (h->tx.depth && !h->opt.on) {
		if ((rc = sm_obj_copy(h, m, b.cs, sizeof(b.s), &mem)) != 0)
			return rc;
		sm_words(b.cs, m, &cls, &payload, &valid);
	} else if ((rc = sm_obj_hdr(h, m, &cls, &payload, &valid, NULL)) != 0) {
		return rc;
	}
	if (!valid)
		return sm_doomed(h, uh_err_set(UH_EFREED, "sorted map %llu has been freed",
					       (unsigned long long)m));
	if (cls != UH_CLASS_SMAP)
		return sm_doomed(h, uh_err_set(UH_ETYPE, "object %llu is not a sorted map "
					       "(class %u)", (unsigned long long)m, cls));
	if (payload < SH_NSLOTS * sizeof(struct uh_slot))
		return sm_bad(h, "header %llu has %u bytes", (unsigned long long)m, payload);
	if (mem)
		memcpy(s, mem, sizeof(s));
	for (uint32_t i = 0; !mem && i < SH_NSLOTS; i++)	/* bound: 5 */
		if ((rc = sm_rd(h, m, i, &s[i])) != 0)
			return rc;
	mp->off = m;
	mp->kind = (uint32_t)s[SH_KIND].value;
	mp->count = s[SH_COUNT].value;
	mp->root = s[SH_ROOT].value;
	mp->height = (uint32_t)s[SH_HEIGHT].value;
	mp->first = s[SH_FIRST].value;
	if (uh_slot_type(s[SH_KIND].tag) != UH_T_I64 || mp->kind < UH_KEY_STRING ||
	    mp->kind > UH_KEY_I64)
		return sm_bad(h, "header %llu: bad key kind", (unsigned long long)m);
	if (uh_slot_type(s[SH_ROOT].tag) != UH_T_REF || !mp->root ||
	    uh_slot_type(s[SH_FIRST].tag) != UH_T_REF || !mp->first)
		return sm_bad(h, "header %llu: no root or first leaf", (unsigned long long)m);
	if (mp->height < 1 || mp->height > SM_MAX_HEIGHT)
		return sm_bad(h, "header %llu: height %u", (unsigned long long)m, mp->height);
	uh_opt_keep(h, m, UH_CLASS_SMAP, mp, sizeof(*mp));
	return 0;
}

_Static_assert(sizeof(struct sm_map) <= UH_VIEW_BYTES, "a sorted map header fits the cache");

/* The node header o of ref, read in place: 1 if it is live, of ref's
 * generation and a node or packed leaf (*cls), its payload in *payload. */
static int sm_node_in_place(uh_heap *h, const struct uh_objhdr *o, uh_off ref, uint32_t *cls,
			    uint32_t *payload)
{
	*cls = UH_CLASS_SMAP_NODE;
	if (uh_obj_live_in_place(h, o, ref, *cls, payload))
		return 1;
	*cls = UH_CLASS_SMAP_LEAF;
	return uh_obj_live_in_place(h, o, ref, *cls, payload);
}

/* The meta and next slots of a node into nd (n, leaf, hint, next): 0,
 * or 1 if the meta slot is malformed. */
static int sm_meta_decode(struct sm_node *nd, const struct uh_slot *meta,
			  const struct uh_slot *next)
{
	nd->n = (uint32_t)meta->value;
	nd->leaf = (meta->value & SM_LEAF_BIT) != 0;
	nd->hint = (uint32_t)(meta->tag >> 32);
	nd->next = next->value;
	nd->pre_n = 0;
	if (!nd->leaf && next->tag) {	/* the prefix slot (format 6) */
		nd->pre_n = (uint32_t)(next->tag >> 32);
		nd->pre = next->value;
		nd->next = 0;
		if (uh_slot_type(next->tag) != UH_T_I64 || nd->pre_n < 1 || nd->pre_n > SM_PRE_MAX ||
		    nd->pre_n > (nd->hint & SM_SKIP_MASK) || !(nd->hint & SM_HINTED))
			return 1;
	}
	return uh_slot_type(meta->tag) != UH_T_I64 || nd->n > SM_F || (meta->value >> 32) > 1 ||
	       (nd->hint & ~(SM_HINTED | SM_SKIP_MASK));
}

/* A packed leaf whose payload nd->mem names (in place or a copy) into nd:
 * 0, or 1 if its header, count or next do not say a leaf. In place its
 * bytes may change under the reader (the caller's check of its lock word
 * tells), so the count is read once and bounds every index used later. */
static int sm_pleaf_decode(struct sm_node *nd)
{
	nd->pk = (const unsigned char *)nd->mem;
	nd->mem = NULL;
	uh_load(&nd->n, (const char *)nd->pk + PL_N_AT, 4);
	uh_load(&nd->next, (const char *)nd->pk + PL_VALS_AT + 8 * PL_NEXT, 8);
	nd->leaf = 1;
	nd->hint = 0;
	return nd->n > PL_CAP || !pl_ok(nd->pk);
}

/* Node ref in place, if it is one (bounds, header, meta) and no commit is
 * being applied to it: 0, else 1. */
int sm_lean_node(uh_heap *h, uh_off ref, struct sm_lean_node *l)
{
	const struct uh_objhdr *o = uh_obj_in_map(h, ref, SM_NSLOTS * sizeof(struct uh_slot));
	struct sm_node *nd = &l->nd;
	struct uh_slot meta, next;
	uint32_t cls, payload;

	if (!o)
		return 1;
	nd->off = ref;
	if (!uh_lock_note(h, UH_REF_OFFSET(ref), &l->w, &l->ver))
		return 1;
	if (!sm_node_in_place(h, o, ref, &cls, &payload) ||
	    payload != SM_NSLOTS * sizeof(struct uh_slot))
		return 1;
	nd->mem = (const void *)(o + 1);
	nd->pk = NULL;
	nd->lean = 1;
	if (cls == UH_CLASS_SMAP_LEAF)
		return sm_pleaf_decode(nd);
	uh_load(&meta, (const char *)&nd->mem[SM_META], sizeof(meta));
	uh_load(&next, (const char *)&nd->mem[SM_NEXT], sizeof(next));
	return sm_meta_decode(nd, &meta, &next);
}

/* A packed leaf, its class and size checked: nd->mem is where its bytes
 * are (NULL: the block holds it without an image, which never happens,
 * since every write to one goes to its image). */
static int sm_pleaf_load(uh_heap *h, struct sm_node *nd, int want_leaf)
{
	if (!nd->mem)
		return sm_bad(h, "leaf %llu is locked without an image", (unsigned long long)nd->off);
	if (!want_leaf)
		return sm_bad(h, "leaf %llu is above the bottom level", (unsigned long long)nd->off);
	if (sm_pleaf_decode(nd))
		return sm_bad(h, "leaf %llu: bad packed header, count or next",
			      (unsigned long long)nd->off);
	return 0;
}

/* Node at off; want_leaf: 1, 0, or -1 for either. buf: in a block, room
 * for the node, read at once (sm_obj_copy: nd->mem is good until the
 * block writes the node, and a descent writes nothing); NULL: slot by
 * slot. */
int sm_node_load(uh_heap *h, uh_off off, int want_leaf, struct sm_node *nd,
		 struct sm_nodebuf *buf)
{
	struct uh_slot meta, next;
	uint32_t cls, payload;
	int valid, rc;

	sm_prefetch_node(h, off);
	nd->mem = NULL;
	nd->pk = NULL;
	nd->lean = 0;
	if (h->opt.on) {
		const struct uh_objhdr *o = sm_opt_obj(h, off, SM_NSLOTS * sizeof(struct uh_slot),
						       &rc);
		if (!o)
			return rc;
		valid = sm_node_in_place(h, o, off, &cls, &payload);
		nd->mem = (const struct uh_slot *)(o + 1);
	} else if (buf && h->tx.depth) {
		const void *mem;
		if ((rc = sm_obj_copy(h, off, buf->cs, sizeof(buf->s), &mem)) != 0)
			return rc;
		nd->mem = mem;
		sm_words(buf->cs, off, &cls, &payload, &valid);
	} else if ((rc = sm_obj_hdr(h, off, &cls, &payload, &valid, NULL)) != 0) {
		return rc;
	}
	if (!valid || (cls != UH_CLASS_SMAP_NODE && cls != UH_CLASS_SMAP_LEAF) ||
	    payload != SM_NSLOTS * sizeof(struct uh_slot))
		return sm_bad(h, "node %llu is freed, of class %u or %u bytes",
			      (unsigned long long)off, cls, payload);
	nd->off = off;
	if (cls == UH_CLASS_SMAP_LEAF)
		return sm_pleaf_load(h, nd, want_leaf);
	if ((rc = sm_at(h, nd, SM_META, &meta)) != 0 || (rc = sm_at(h, nd, SM_NEXT, &next)) != 0)
		return rc;
	if (sm_meta_decode(nd, &meta, &next))
		return sm_bad(h, "node %llu: bad meta slot", (unsigned long long)off);
	if (want_leaf >= 0 && nd->leaf != want_leaf)
		return sm_bad(h, "node %llu is %s", (unsigned long long)off,
			      nd->leaf ? "a leaf above the bottom level" :
					 "an inner node at the bottom level");
	if (nd->leaf && uh_slot_type(next.tag) != UH_T_REF)
		return sm_bad(h, "node %llu: bad next slot", (unsigned long long)off);
	return 0;
}

/* Meta of inner node off (n keys, hint) and its prefix slot (format 6):
 * the last SM_PRE_MAX bytes (or fewer) of the skip bytes its keys share,
 * from ks, one of its keys, so that a search confirms it shares them
 * without reading a key. No hints (i64 maps, skip 0): an empty slot. */
int sm_inner_meta(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t hint,
		  const struct uh_slot *ks)
{
	static __thread struct sm_kbuf kb;
	struct uh_slot ps = sm_empty;
	uint32_t skip = hint & SM_SKIP_MASK;
	int rc = sm_meta_set(h, off, n, 0, hint);

	if (rc)
		return rc;
	if (kind != UH_KEY_I64 && (hint & SM_HINTED) && skip > 0) {
		uint32_t m = skip < SM_PRE_MAX ? skip : SM_PRE_MAX;
		if ((rc = sm_key_get(h, kind, ks, &kb)) != 0)
			return rc;
		if (kb.k.len < skip)
			return sm_bad(h, "node %llu: a key is shorter than its %u-byte prefix",
				      (unsigned long long)off, skip);
		ps.tag = UH_T_I64 | (uint64_t)m << 32;
		memcpy(&ps.value, (const unsigned char *)kb.k.data + skip - m, m);
	}
	return sm_wr(h, off, SM_NEXT, &ps);
}

int sm_child(uh_heap *h, const struct sm_node *nd, uint32_t i, uh_off *out)
{
	struct uh_slot s;
	int rc = sm_at(h, nd, SM_VAL(i), &s);

	if (rc)
		return rc;
	if (uh_slot_type(s.tag) != UH_T_REF || !s.value)
		return sm_bad(h, "node %llu: child %u is not a reference",
			      (unsigned long long)nd->off, i);
	*out = s.value;
	return 0;
}

/* The key kr names, into kb (an inline key copied, as a key object's
 * bytes are by sm_key_read). */
int sm_kref_key(uh_heap *h, uint32_t kind, const struct sm_kref *kr, struct sm_kbuf *kb)
{
	if (!kr->inl)
		return sm_key_read(h, kind, &kr->s, kb);
	if (kind == UH_KEY_I64)
		return sm_bad(h, "an i64 map has a packed leaf");
	sm_kbuf_set(kb, kind, kr->cell + 1, kr->cell[0]);
	return 0;
}

/* ---- running bodies ---- */

static int sm_check_map_arg(uh_heap *h, uh_off m)
{
	int rc;
	return uh_obj_get(h, m, UH_CLASS_SMAP, &rc) ? 0 : rc;
}

/* Handle, map and key checked before any block; key_opt: k may be NULL. */
int sm_args_k(uh_heap *h, uh_off m, const uh_key *k, int writes, int key_opt)
{
	int rc = uh_check_handle(h);
	uint32_t kind;

	if (rc || (rc = sm_check_map_arg(h, m)) != 0)
		return rc;
	if (writes && h->readonly)
		return uh_err_set(UH_EREADONLY, "sorted map: heap is connected read-only");
	if (!k && key_opt)
		return 0;
	/* The kind never changes after creation: a plain read is exact. */
	kind = (uint32_t)((const struct uh_slot *)(h->base +
						   UH_REF_OFFSET(uh_slot_off(m, SH_KIND))))->value;
	return uh_key_check(kind, k);
}
