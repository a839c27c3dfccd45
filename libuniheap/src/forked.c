/*
 * forked.c -- a handle's first use in a child forked from the process
 * that connected it: the handle attaches anew, as a new session of the
 * same heap, over the mapping the child inherited.
 *
 * What the child keeps: the mapping (the same addresses, so references,
 * offsets and pointers into it stay valid), the GC file's mapping, the
 * handle itself (the caller's pointer) and its readonly mode.
 * What was the parent's session's and is dropped, never released (the
 * parent still owns it): its control session (the child never touches
 * the parent's gRPC state: its calls go to a copy, ctlcopy.c), its log
 * area and extents, the arenas it leased (the parent allocates from them
 * still), its pin table, an optimistic read in progress, and the block
 * in progress: the parent's locks are the parent's, and so are its log
 * entries.
 * A block open at the fork stays open in the child, already rolled back:
 * every call in it fails with UH_EFORK until the child ends it (uh_abort,
 * or uh_commit, which returns UH_EFORK), as any doomed block (tx.c).
 * Pins: the child's pins go to its own session's table with a higher tag
 * (pins.c); the parent's pin ids that inherited proxies hold are not the
 * child's, and releasing one in the child does nothing: an object the
 * child reaches only through an inherited proxy is kept by the parent's
 * pin while the parent holds it.
 *
 * The new session is attached first, into locals; only once heapd
 * welcomed it on the same heap is anything of the handle changed, so a
 * failed attach (heapd gone, no copy loadable) leaves the handle as it
 * was and the next use tries again.
 *
 * Recovery layer, beside reattach.c: reached from handle.c's check
 * through h->recover (uhint.h), under handle.c's lock; uh_fork_attach,
 * the public way to do it at once, is that check.
 */
#include <stdlib.h>
#include <string.h>

#include "uhint.h"

/* Drop what was the parent's session's. Idempotent: a failed bind below
 * leaves the handle for the next use to rebuild again. */
static void drop_inherited(uh_heap *h)
{
	int depth = h->tx.depth;

	uh_tx_free_state(h);
	h->tx.depth = depth;
	h->tx.doomed = depth ? UH_EFORK : 0;
	memset(&h->opt, 0, sizeof(h->opt));
	uh_alloc_release_all(h);
	uh_logchain_free(h);
	int first = h->m->fork_gen != uh_fork_gen();
	h->m->fork_gen = uh_fork_gen();
	uh_gc_forked(h, first);
	memset(&h->st, 0, sizeof(h->st));
	h->seq = 0;
}

int uh_fork_rebuild(uh_heap *h)
{
	struct uhc_welcome *w = calloc(1, sizeof(*w));
	char desc[128];
	uhc *ctl = NULL;
	int rc;

	if (!w)
		return uh_err_set(UH_ENOMEM, "attach in a forked child: out of memory");
	rc = uhc_attach(h->m->socket, h->readonly, uh_client_desc(desc, sizeof(desc)), 0, 0,
			&ctl, w);
	if (rc == 0 && (rc = uh_same_heap(h->m, w)) != 0)
		uhc_detach(ctl);
	if (rc) {
		free(w);
		return rc;
	}
	/* The parent's uhc is left as it is: its memory is all the child
	 * has of it, and the parent's session is the parent's to end. */
	h->ctl = ctl;
	drop_inherited(h);
	rc = uh_session_bind(h, w);
	if (rc == 0)
		rc = uh_gc_attach(h, w->gc_path, w->session);
	free(w);
	if (rc) {
		h->ctl = NULL;
		uhc_detach(ctl);
		return rc;
	}
	uh_handle_stamp(h);
	return 0;
}

int uh_fork_attach(uh_heap *h)
{
	uh_err_clear();
	return uh_check_handle(h);
}
