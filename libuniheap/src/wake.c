/*
 * wake.c -- the committing side of change notifications (FORMAT.md 8.9):
 * after a commit has released its locks, advance the change counter of
 * every collection it changed and, only when some process waits, wake
 * the waiters of every object and counter it moved.
 *
 * The protocol against a waiter (wait.c) is Dekker's: the waiter counts
 * itself in hdr->waiters, fences, then reads the lock word or counter;
 * the committer stores the lock word or counter, fences, then reads
 * hdr->waiters. At least one of the two sees the other's store, so
 * either the waiter sees the change and does not sleep, or the committer
 * sees the waiter and wakes it; FUTEX_WAIT compares the word in the
 * kernel, under the lock FUTEX_WAKE takes, so a wake cannot fall between
 * the waiter's last read and its sleep. With no waiter, a commit pays the
 * counter additions, one fence and one load of a line it has just
 * written (waiters shares the clock's line): no system call.
 *
 * Futexes here are shared ones (no FUTEX_PRIVATE_FLAG): the kernel keys
 * them by the file page and offset, so processes that map the heap at
 * different addresses meet on the same word.
 */
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "uhint.h"

void uh_futex_wake(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int uh_tx_changed(uh_heap *h, uh_off coll)
{
	struct u64vec *c = &h->tx.changed;
	uint64_t off = UH_REF_OFFSET(coll);

	/* A block usually changes one collection many times: keep it once. */
	for (uint32_t i = 0; i < c->n; i++)	/* bound: a block's collections */
		if (c->v[i] == off)
			return 0;
	return u64vec_push(c, off) ? uh_err_set(UH_ENOMEM, "out of memory") : 0;
}

void uh_notify_commit(uh_heap *h, const uint64_t *objs, uint32_t n)
{
	const struct u64vec *c = &h->tx.changed;
	uint32_t *changes = h->hdr->changes;

	for (uint32_t i = 0; i < c->n; i++)	/* bound: the block's collections */
		__atomic_add_fetch(&changes[uh_change_channel(c->v[i])], 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->hdr->waiters, __ATOMIC_RELAXED) == 0)
		return;
	for (uint32_t i = 0; i < n; i++) {	/* bound: the objects it wrote */
		struct uh_objhdr *o = (void *)(h->base + objs[i]);
		uh_futex_wake((uint32_t *)&o->lock);	/* the low half: little-endian */
	}
	for (uint32_t i = 0; i < c->n; i++)
		uh_futex_wake(&changes[uh_change_channel(c->v[i])]);
}
