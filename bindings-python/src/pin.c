/*
 * pin.c -- what keeps the objects that Python code can still reach from
 * the online garbage collector (FORMAT.md 9.3): every proxy (proxy.c)
 * and every zero-copy view (view.c) pins its object with uh_pin when it
 * is made and unpins it when it dies.
 *
 * A pin belongs to the session it was taken on: the Heap's session of
 * that moment, named by the Heap's connection number (hp->conn, bumped at
 * every connect of the Heap). It is released on that session only, and
 * only while that session is still the Heap's (hp->h open, same number):
 *  - once the Heap was closed (or closed while views are exported, or
 *    connected anew), the session that held the pin has ended or is
 *    ending: heapd drops all of a session's pins with it, so there is
 *    nothing to release, and a closed handle is never called;
 *  - in a child forked from the process that made the proxy, nothing is
 *    released: the pin is the parent's session's, which goes on (the
 *    child's Heap attaches anew with a new connection number, session.c).
 *    The parent's pin keeps the object while the parent holds its proxy;
 *    proxies the child makes (a worker unpickling one, say) pin in the
 *    child's own session.
 * A dealloc may run in any thread, with the GIL held: uh_unpin is safe
 * against the session's own calls (libuniheap's per-handle pin lock), and
 * every block of the session (whose commit runs with the GIL held) is
 * between two of them.
 *
 * Cost: one uh_pin per proxy made and one uh_unpin per proxy freed, no
 * system call and no lock shared with other processes; reads through a
 * proxy do not touch its pin. A heapd without a GC file gives pin id 0,
 * which nothing needs to release (uh_unpin(h, 0) is a no-op, skipped
 * here).
 */
#include "ext.h"

int uhpy_pin_take(HeapObject *hp, uh_off ref, uhpy_pin *pin)
{
	int rc;

	pin->id = 0;
	pin->conn = hp->conn;
	if (!hp->h) {
		uhpy_closed();
		return -1;
	}
	if ((rc = uh_pin(hp->h, ref, &pin->id)) == 0)
		return 0;
	pin->id = 0;
	if (rc == UH_EFREED)
		uhpy_freed(ref);
	else
		uhpy_raise(rc, "pin");
	return -1;
}

void uhpy_pin_drop(HeapObject *hp, uhpy_pin *pin)
{
	uint32_t id = pin->id;

	pin->id = 0;
	if (!id || !hp || !hp->h || hp->conn != pin->conn || hp->epoch != uhpy_fork_epoch)
		return;
	/* Nothing can fail here that a caller could act on: an id this
	 * session does not hold (EINVAL) would be a binding bug, and a
	 * deferred release that finds no memory keeps the entry, which the
	 * session's end drops. */
	(void)uh_unpin(hp->h, id);
}
