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

/* ---- errors ---- */

/* Something read does not fit the format. If the block was rolled back
 * (a conflict), that is the cause, not damage: reads then return zeros. */
static int sm_bad(uh_heap *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int sm_bad(uh_heap *h, const char *fmt, ...)
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

static int sm_doomed(uh_heap *h, int rc)
{
	return h->tx.doomed ? uh_err_set(h->tx.doomed, "block was rolled back: %s",
					 uh_strerror(h->tx.doomed)) : rc;
}

/* ---- slots ---- */

static int sm_rd(uh_heap *h, uh_off obj, uint32_t i, struct uh_slot *s)
{
	int rc = uh_tx_read(h, obj, uh_slot_off(obj, i), s, sizeof(*s));
	return rc ? sm_doomed(h, rc) : 0;
}

/* Slot i of node obj. A block's first write to a node makes it an image
 * (uh_tx_write_image): an insert or remove rewrites many of its slots. */
static int sm_wr(uh_heap *h, uh_off obj, uint32_t i, const struct uh_slot *s)
{
	return uh_tx_write_image(h, obj, uh_slot_off(obj, i), s, sizeof(*s), uh_slot_off(obj, 0),
				 SM_NSLOTS * sizeof(struct uh_slot));
}

static int sm_wr_ref(uh_heap *h, uh_off obj, uint32_t i, uh_off ref)
{
	struct uh_slot s = { UH_T_REF, ref };
	return sm_wr(h, obj, i, &s);
}

/* Slots [from, from + n) of node obj to [to, to + n), as memmove would:
 * one memmove in the node's image, or slot by slot if the block locked
 * the node before without one. */
static int sm_move(uh_heap *h, uh_off obj, uint32_t from, uint32_t to, uint32_t n)
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
static int sm_slots_rd(uh_heap *h, uh_off obj, uint32_t from, uint32_t n, struct uh_slot *out)
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
static int sm_slots_wr(uh_heap *h, uh_off obj, uint32_t from, uint32_t n,
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

/* Slot i of a loaded node: in place outside blocks, else a validated read. */
static int sm_at(uh_heap *h, const struct sm_node *nd, uint32_t i, struct uh_slot *s)
{
	if (nd->mem) {
		uh_load(s, (const char *)&nd->mem[i], sizeof(*s));
		return 0;
	}
	return sm_rd(h, nd->off, i, s);
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
static int sm_obj_hdr(uh_heap *h, uh_off ref, uint32_t *cls, uint32_t *payload, int *valid,
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

static uint32_t sm_key_type(uint32_t kind)
{
	return kind == UH_KEY_I64 ? UH_T_I64 : kind == UH_KEY_STRING ? UH_T_STRING : UH_T_BYTES;
}

static uint32_t sm_key_class(uint32_t kind)
{
	return kind == UH_KEY_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES;
}

/* Key object o (at ref, its header inside the mapping) as a key whose
 * bytes stay in place: 0, or 1 if it is not a live key object of kind's
 * class whose bytes fit the mapping. */
static int sm_key_view(uh_heap *h, uint32_t kind, uh_off ref, const struct uh_objhdr *o,
		       uh_key *key)
{
	uint32_t len;

	if (!uh_obj_live_in_place(h, o, ref, sm_key_class(kind), &len) || len > UH_KEY_MAX_LEN)
		return 1;
	key->data = (const unsigned char *)(o + 1);
	key->len = len;
	return 0;
}

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
static int sm_key_read(uh_heap *h, uint32_t kind, const struct uh_slot *s, struct sm_kbuf *kb)
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
static int sm_lean_key(uh_heap *h, uint32_t kind, const struct uh_slot *ks, uh_key *key)
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
static int sm_key_get(uh_heap *h, uint32_t kind, const struct uh_slot *s, struct sm_kbuf *kb)
{
	if (h->tx.depth && !h->opt.on && sm_key_copy(h, kind, s, kb) == 0)
		return 0;
	return sm_key_read(h, kind, s, kb);
}

/* A key slot for k: a new object for string/bytes keys. */
static int sm_key_new(uh_heap *h, const uh_key *k, struct uh_slot *out)
{
	return uh_key_store(h, k, out);
}

/* ---- key hints ---- */

static uint32_t sm_hint(const uh_key *k, uint32_t skip)
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
static uint32_t sm_lcp(const uh_key *a, const uh_key *b)
{
	const unsigned char *x = a->data, *y = b->data;
	size_t n = a->len < b->len ? a->len : b->len;
	uint32_t i = 0;

	while (i < n && i < SM_SKIP_MASK && x[i] == y[i])	/* bound: n */
		i++;
	return i;
}

static void sm_retag(struct uh_slot *s, const uh_key *k, uint32_t skip)
{
	s->tag = uh_slot_type(s->tag) | (uint64_t)sm_hint(k, skip) << 32;
}

/* Hints for a node about to hold keys[0..n): skip is the prefix its first
 * and last keys share (the keys are sorted, so all of them share it), and
 * every slot in keys gets its key's hint. *hint is the meta's (0 for i64
 * keys). */
static int sm_hint_keys(uh_heap *h, uint32_t kind, struct uh_slot *keys, uint32_t n,
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

/* Hints for keys[0..n), one half of a split node whose keys all carry
 * hints of the node's skip: if the first and last keys' hints differ in
 * their first byte, skip is exactly what those two keys share and every
 * hint stays as it is (no key read); else sm_hint_keys afresh. */
static int sm_hint_half(uh_heap *h, uint32_t kind, struct uh_slot *keys, uint32_t n,
			uint32_t skip, uint32_t *hint)
{
	if (n > 0 && (keys[0].tag >> 56) != (keys[n - 1].tag >> 56)) {
		*hint = SM_HINTED | skip;
		return 0;
	}
	return sm_hint_keys(h, kind, keys, n, hint);
}

/* Key slot *ks is about to join the n keys of node off, whose meta hint is
 * *hint: give it its hint. A key that does not share the node's prefix
 * shrinks it, and then every other key slot must be retagged (*retag).
 * key: the slot's key when the caller has it (else it is read); shares:
 * the caller knows the key shares the node's prefix (a search of the
 * node confirmed it), so key 0 need not be read. */
static int sm_hint_join(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t *hint,
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
static int sm_retag_node(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t but,
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

/* The key of key slot s of node nd. A node read by a lean get or
 * iteration step has its key objects read in place without a note (the
 * node's own check covers them, sm_get_lean); 1 there means "not a key
 * object" and the general path answers. Else sm_key_get. */
static int sm_node_key(uh_heap *h, uint32_t kind, const struct sm_node *nd,
		       const struct uh_slot *s, struct sm_kbuf *kb)
{
	if (nd->lean)
		return sm_lean_key(h, kind, s, &kb->k) ? UH_ECONFLICT : 0;
	return sm_key_get(h, kind, s, kb);
}

/* ---- header and nodes ---- */

/* Room for a header read at once in a block (sm_obj_copy). */
struct sm_hdrbuf {
	uint32_t cs[2];
	struct uh_slot s[SH_NSLOTS];
};
_Static_assert(offsetof(struct sm_hdrbuf, s) == UH_OBJHDR_SIZE - UH_OBJ_WORD_AT,
	       "slots follow the class and size words");

static int sm_hdr_load(uh_heap *h, uh_off m, struct sm_map *mp)
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

/* Header slot i. Like a node, the header is logged as an image of its
 * slots on the block's first write (sm_hdr_lock): a block of many puts
 * rewrites its count each time and reads it back at once. */
static int sm_hdr_set(uh_heap *h, const struct sm_map *mp, uint32_t i, uint32_t tag,
		      uint64_t v)
{
	struct uh_slot s = { tag, v };
	return uh_tx_write_image(h, mp->off, uh_slot_off(mp->off, i), &s, sizeof(s),
				 uh_slot_off(mp->off, 0), SH_NSLOTS * sizeof(struct uh_slot));
}

/* Lock header m (and take its image) before a change of the count. */
static int sm_hdr_lock(uh_heap *h, uh_off m)
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
static int sm_lean_node(uh_heap *h, uh_off ref, struct sm_lean_node *l)
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
static int sm_node_load(uh_heap *h, uh_off off, int want_leaf, struct sm_node *nd,
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

static int sm_meta_set(uh_heap *h, uh_off off, uint32_t n, int leaf, uint32_t hint)
{
	struct uh_slot s = { UH_T_I64 | (uint64_t)hint << 32,
			     (uint64_t)n | (leaf ? SM_LEAF_BIT : 0) };
	return sm_wr(h, off, SM_META, &s);
}

/* Meta of inner node off (n keys, hint) and its prefix slot (format 6):
 * the last SM_PRE_MAX bytes (or fewer) of the skip bytes its keys share,
 * from ks, one of its keys, so that a search confirms it shares them
 * without reading a key. No hints (i64 maps, skip 0): an empty slot. */
static int sm_inner_meta(uh_heap *h, uint32_t kind, uh_off off, uint32_t n, uint32_t hint,
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

static int sm_child(uh_heap *h, const struct sm_node *nd, uint32_t i, uh_off *out)
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

/* Value of entry i of leaf nd (of a leaf read in place: a plain load,
 * which the caller's check of its lock word vouches for; never fails). */
static int sm_leaf_val(uh_heap *h, const struct sm_node *nd, uint32_t i, struct uh_slot *s)
{
	if (nd->pk) {
		pl_slot(nd->pk, i, s);
		return 0;
	}
	return sm_at(h, nd, SM_VAL(i), s);
}

/* Key of entry i of leaf nd, as the leaf holds it. */
static int sm_leaf_kref(uh_heap *h, const struct sm_node *nd, uint32_t i, struct sm_kref *kr)
{
	if (nd->pk) {
		pl_kref(nd->pk, i, kr);
		return 0;
	}
	kr->inl = 0;
	return sm_at(h, nd, SM_KEY(i), &kr->s);
}

/* The len bytes at d, copied into kb as a key of kind. */
static void sm_kbuf_set(struct sm_kbuf *kb, uint32_t kind, const void *d, size_t len)
{
	memcpy(kb->b, d, len);
	kb->k = (uh_key){ .kind = kind, .data = kb->b, .len = len };
}

/* The key kr names, into kb (an inline key copied, as a key object's
 * bytes are by sm_key_read). */
static int sm_kref_key(uh_heap *h, uint32_t kind, const struct sm_kref *kr, struct sm_kbuf *kb)
{
	if (!kr->inl)
		return sm_key_read(h, kind, &kr->s, kb);
	if (kind == UH_KEY_I64)
		return sm_bad(h, "an i64 map has a packed leaf");
	sm_kbuf_set(kb, kind, kr->cell + 1, kr->cell[0]);
	return 0;
}

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
static int sm_shares(const uh_key *k, const uh_key *x, uint32_t skip, uint32_t n, uint32_t *side,
		     uint32_t *d)
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
static int sm_bound(uh_heap *h, uint32_t kind, const struct sm_node *nd, const uh_key *k,
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
static int sm_descend(uh_heap *h, const struct sm_map *mp, const uh_key *k, int rightmost,
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
static int sm_pred_leaf(uh_heap *h, const struct sm_map *mp, const struct sm_path *p,
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

/* ---- running bodies ---- */

/* Inside the user's block the body joins it; outside, it runs in its own
 * block, re-run on conflicts (nothing of a failed try is left). */
static int sm_exec(uh_heap *h, uh_block_fn body, void *arg)
{
	if (h->tx.depth) {
		int rc = body(h, arg);
		return rc ? rc : sm_doomed(h, 0);
	}
	return uh_run(h, body, arg, 0);
}

static int sm_check_map_arg(uh_heap *h, uh_off m)
{
	int rc;
	return uh_obj_get(h, m, UH_CLASS_SMAP, &rc) ? 0 : rc;
}

/* Handle, map and key checked before any block; key_opt: k may be NULL. */
static int sm_args_k(uh_heap *h, uh_off m, const uh_key *k, int writes, int key_opt)
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

/* ---- get ---- */

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

/* Descend to k's leaf; *pos its index there, *eq whether k is present. */
static int sm_find(uh_heap *h, struct sm_op *op, uint32_t *pos, int *eq)
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
