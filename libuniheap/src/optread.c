/*
 * optread.c -- read-only operations outside blocks (map and sorted-map
 * get, len, key kind, iteration steps, scans), run optimistically: no
 * block, no snapshot bookkeeping in hash maps, nothing written to shared
 * memory, so readers in any number of processes never slow each other or
 * the writers down.
 *
 * How: the operation's body (the same code that runs inside blocks) runs
 * with h->opt.on. Before the first byte of an object is read, uh_opt_touch
 * notes the object's lock word w in a small fixed array (an object read
 * again is found there); the bytes are then read in place with plain
 * loads, no check per read. At the end, after an acquire fence, every
 * noted object must still pass uh_lock_still: lock word still w and, if
 * another session held it locked, that session's log still ACTIVE. If
 * all pass, the result stands; if one fails, or an object was found being
 * applied to (uh_lock_version says 0), the try is lost and the body runs
 * again; after UH_OPT_TRIES lost tries, or when an operation reads more
 * than UH_OPT_MAX objects, it runs in an implicit read-only block
 * (uh_run), whose validated reads wait for appliers and never give up
 * early. The rules for a lock word are tx.c's (uh_lock_version,
 * uh_lock_still; FORMAT.md 4.1), the same that validate reads in blocks.
 *
 * Why one such operation is linearizable (serializable as a block of its
 * own), and why it never returns a torn or phantom entry:
 *
 *  1. Per object. Say object o was first read at time r with lock word w
 *     (the word loaded before any byte), and the final check at time c
 *     finds the word still w and, if w is locked by a session S, S's log
 *     still ACTIVE. Every change of o's bytes in place happens under o's
 *     lock, in one of three ways, each of which changes the word or the
 *     log state before the bytes and does not restore both before c:
 *       - a commit applies (FORMAT.md 8.4): S holds o's lock, stores
 *         COMMITTED and a full fence before its first store in place, and
 *         releases o with a new version (++clock, never seen before);
 *       - a single write outside a block (8.5): lock, APPLIED, fence,
 *         store, release with a new version;
 *       - a free and a new allocation in the slot: the free is a commit
 *         (above); the allocator writes a lock word of the current clock,
 *         which is above the version the free released with (inside a
 *         block, locked by its session until the commit releases it
 *         with a new version).
 *     A block that rolls back restores w but never stored in place, and
 *     heapd releases a dead session's locks with a new version. Since the
 *     acquire fence after the reads pairs with the writer's fence before
 *     its stores, a byte we read that came from such a store makes the
 *     check see the new word or state. So over [r, c] o's bytes were the
 *     bytes of the version w names, unchanged, header included (class,
 *     generation, valid bit: uh_obj_get checks them after the touch).
 *  2. All objects at once. Every first read precedes every check, so the
 *     intervals [r_i, c_i] share the instant t = the first check. At t
 *     every object read held the bytes of its last committed version,
 *     that is, the heap's committed state at t as far as the operation
 *     looked: a block's objects are all locked before it is COMMITTED and
 *     stay locked until applied, so a state in which one of them shows
 *     the block and another does not is never accepted (that one's word
 *     or owner state moved). The answer is what the operation would have
 *     computed alone at t, inside the call: linearizable.
 *  3. Torn or phantom. Every reference the body follows was read from an
 *     object that passed the check, so it was a committed reference at t
 *     and names an object that was live with that generation at t (a
 *     freed object's reference was removed in the same commit that freed
 *     it). An entry is returned only from objects that passed: never half
 *     of one commit and half of another, never an entry that was not in
 *     the map at t, never one a later commit removed before t.
 * While a try runs on bytes that are changing, the body may see nonsense:
 * every read it does is bounds-checked (references go through
 * uh_arena_slot_of and the class/generation checks; loops are bounded by
 * counts or depths) exactly as for a damaged heap, so the worst is an
 * error or a wrong answer that the final check then throws away.
 *
 * A hash-map get in the common case (its header's view kept, a short
 * chain, no commit being applied) runs this same protocol without the
 * try's bookkeeping: map.c, get_lean; so do a sorted-map get
 * (smap_search.c, sm_get_lean) and a run of sorted-map iteration steps
 * that stays in its leaf or moves to the next one (smap_scan.c,
 * sm_next_lean).
 * The sorted map's other reads note each node and key object once
 * (sm_opt_obj) and then read its slots in place.
 *
 * Inside a block none of this is used: reads there stay validated one by
 * one against the block's snapshot (tx.c), which later writes rely on.
 */
#include <sched.h>
#include <string.h>

#include "uhint.h"

#define UH_OPT_TRIES 4	/* optimistic tries before the validated block */

int uh_opt_touch(uh_heap *h, uint64_t obj)
{
	struct uh_opt *o = &h->opt;
	uint64_t w, v;

	obj = UH_REF_OFFSET(obj);
	if (obj == o->last)
		return 0;	/* the object read last: the common case */
	for (uint32_t i = 0; i < o->n; i++) {	/* bound: UH_OPT_MAX */
		if (o->obj[i] == obj) {
			o->last = obj;
			return 0;
		}
	}
	if (o->lost || obj > h->size - sizeof(struct uh_objhdr))
		goto lost;
	if (o->n == UH_OPT_MAX) {
		o->full = 1;
		goto lost;
	}
	if (!uh_lock_note(h, obj, &w, &v))
		goto lost;	/* its owner is applying a commit: try again */
	o->obj[o->n] = obj;
	o->word[o->n] = w;
	o->n++;
	o->last = obj;
	return 0;
lost:
	o->lost = 1;
	return UH_ECONFLICT;
}

static struct uh_view *view_slot(uh_heap *h, uh_off obj)
{
	return &h->opt.cache[(UH_REF_OFFSET(obj) >> 4) % UH_VIEW_CACHE];
}

/* The word this try noted for obj (it was touched just before). */
static uint64_t noted_word(const struct uh_opt *o, uint64_t obj)
{
	for (uint32_t i = o->n; i-- > 0;)	/* bound: UH_OPT_MAX */
		if (o->obj[i] == obj)
			return o->word[i];
	return 0;
}

const void *uh_opt_view(uh_heap *h, uh_off obj, uint32_t kind)
{
	const struct uh_view *c = view_slot(h, obj);

	if (!h->opt.on || c->obj != obj || c->kind != kind || uh_opt_touch(h, obj) != 0)
		return NULL;
	return noted_word(&h->opt, UH_REF_OFFSET(obj)) == c->word ? c->bytes : NULL;
}

const void *uh_opt_kept(uh_heap *h, uh_off obj, uint32_t kind, uint64_t *word)
{
	const struct uh_view *c = view_slot(h, obj);

	if (c->obj != obj || c->kind != kind)
		return NULL;
	*word = c->word;
	return c->bytes;
}

void uh_opt_keep(uh_heap *h, uh_off obj, uint32_t kind, const void *view, size_t len)
{
	struct uh_view *p = &h->opt.pending;

	if (!h->opt.on || len > UH_VIEW_BYTES)
		return;
	p->obj = obj;
	p->kind = kind;
	p->word = noted_word(&h->opt, UH_REF_OFFSET(obj));
	memcpy(p->bytes, view, len);
}

/* Did every object keep the bytes it had when first read? */
static int opt_valid(uh_heap *h)
{
	const struct uh_opt *o = &h->opt;

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (o->lost)
		return 0;
	for (uint32_t i = 0; i < o->n; i++)	/* bound: UH_OPT_MAX */
		if (!uh_lock_still(h, o->obj[i], o->word[i]))
			return 0;
	return 1;
}

int uh_opt_run(uh_heap *h, uh_block_fn body, void *arg)
{
	struct uh_opt *o = &h->opt;
	int rc;

	if (h->tx.depth) {
		rc = body(h, arg);
		if (rc == 0 && h->tx.doomed)
			rc = uh_err_set(h->tx.doomed, "block was rolled back: %s",
					uh_strerror(h->tx.doomed));
		return rc;
	}
	for (int t = 0; t < UH_OPT_TRIES; t++) {	/* bound: UH_OPT_TRIES */
		o->on = 1;
		o->lost = o->full = 0;
		o->n = 0;
		o->last = ~0ull;
		o->pending.obj = 0;
		/* What scans keep as their snapshot clock: read before any
		 * object, so a later change of one carries a greater version. */
		h->tx.rv = __atomic_load_n(&h->hdr->clock, __ATOMIC_ACQUIRE);
		rc = body(h, arg);
		int ok = opt_valid(h);
		o->on = 0;
		if (ok) {
			/* The header view this try read was the validated state of
			 * its header: keep it for the next reads. */
			if (o->pending.obj)
				*view_slot(h, o->pending.obj) = o->pending;
			h->st.opt_reads++;
			return rc;
		}
		h->st.opt_retries++;
		if (o->full)
			break;
		sched_yield();	/* a writer is applying: give it the CPU */
	}
	h->st.opt_fallbacks++;
	return uh_run(h, body, arg, 0);
}
