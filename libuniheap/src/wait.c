/*
 * wait.c -- waiting for another process's commit to change an object, a
 * collection or the roots (FORMAT.md 8.9; the committing side is wake.c).
 *
 * What a waiter watches, and so what wakes it:
 *  - a record, a string or bytes value, or an array: its lock word. The
 *    token is the object's version (the clock value of the last commit
 *    that wrote it), and every commit that writes the object moves it.
 *  - a list, hash map or sorted map (its header object): the change
 *    counter of its channel, advanced by every commit that changed the
 *    collection in any way (a put, a remove, a set, an insert, a pop, a
 *    resize step). Channels are shared by hashing (768 of them), so a
 *    change of another collection may wake the waiter too: the token
 *    moves, the collection may be as it was.
 *  - UH_WAIT_ROOTS: the root map's counter, advanced by every commit that
 *    sets or removes a root.
 *
 * A waiter counts itself in hdr->waiters and sets its session's bit in
 * hdr->waiting for the time it waits, so that a commit with nobody
 * waiting makes no system call, and heapd, reaping a session killed in
 * its wait, takes its count back. It sleeps in slices of at most
 * UH_WAIT_SLICE_MS: a new heapd forgets every waiter (it zeroes both),
 * and a waiter notices at the end of its slice, re-attaches and counts
 * itself again, then compares the tokens again, so no change is lost;
 * one made while it was not counted wakes it at the end of that slice.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "uhint.h"

#define UH_WAIT_SLICE_MS 250

/* The slice; tests lengthen it (UH_WAIT_SLICE_MS) so that a lost wake-up
 * shows as a hang instead of a late wake at the end of a slice. */
static uint64_t slice_ns(void)
{
	const char *s = getenv("UH_WAIT_SLICE_MS");
	uint64_t ms = s ? strtoull(s, NULL, 10) : 0;

	return (ms ? ms : UH_WAIT_SLICE_MS) * 1000000ull;
}

/* One watched word. */
struct watch {
	uint32_t *word;		/* what the futex waits on */
	uint32_t val;		/* its value when last read */
	uint64_t token;		/* what the caller compares */
};

/* The registration of one wait: on which heapd's watch it counts. */
struct reg {
	uint64_t starts;	/* hdr->heapd_starts when counted */
	uint32_t session;	/* the bit set in hdr->waiting, or 0 */
	int on;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int is_collection(uint32_t cls)
{
	return cls == UH_CLASS_LIST || cls == UH_CLASS_MAP || cls == UH_CLASS_SMAP;
}

/* Read what obj's waiter compares; UH_EFREED once obj is gone. */
static int watch_read(uh_heap *h, uh_off obj, struct watch *w)
{
	int rc;

	if (obj == UH_WAIT_ROOTS) {
		w->word = &h->hdr->changes[uh_change_channel(h->hdr->rootmap_off)];
		w->val = __atomic_load_n(w->word, __ATOMIC_ACQUIRE);
		w->token = w->val;
		return 0;
	}
	struct uh_objhdr *o = uh_obj_get(h, obj, 0, &rc);
	if (!o)
		return rc;
	if (is_collection(uh_word_class(o->class_word))) {
		w->word = &h->hdr->changes[uh_change_channel(UH_REF_OFFSET(obj))];
		w->val = __atomic_load_n(w->word, __ATOMIC_ACQUIRE);
		w->token = w->val;
	} else {
		uint64_t lw = __atomic_load_n(&o->lock, __ATOMIC_ACQUIRE);
		w->word = (uint32_t *)&o->lock;	/* the low half: little-endian */
		w->val = (uint32_t)lw;
		/* Locked: the bytes in place are still the old version's. */
		w->token = uh_lock_is_locked(lw) ? uh_lock_old_version(lw) : lw;
	}
	/* The slot may have been freed (and reused) while we read it. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (!uh_obj_get(h, obj, 0, &rc))
		return rc;
	return 0;
}

static void reg_on(uh_heap *h, struct reg *r)
{
	struct uh_hdr *hd = h->hdr;

	r->starts = __atomic_load_n(&hd->heapd_starts, __ATOMIC_ACQUIRE);
	r->session = h->session > 0 && h->session < UH_SESSION_CAP ? h->session : 0;
	/* Count first, bit second: a process killed between the two leaves
	 * a count too high (commits make needless wake calls until heapd
	 * restarts), never too low (a waiter nobody wakes). */
	__atomic_add_fetch(&hd->waiters, 1, __ATOMIC_SEQ_CST);
	if (r->session)
		__atomic_or_fetch(&hd->waiting[r->session / 64], 1ull << (r->session % 64),
				  __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	r->on = 1;
}

static void reg_off(uh_heap *h, struct reg *r)
{
	struct uh_hdr *hd = h->hdr;

	if (!r->on)
		return;
	r->on = 0;
	/* A new heapd zeroed both and may have given our slot to another
	 * session: nothing of ours is left to take back. */
	if (__atomic_load_n(&hd->heapd_starts, __ATOMIC_ACQUIRE) != r->starts)
		return;
	if (r->session) {
		/* Whoever clears the bit (we, or heapd reaping the session)
		 * takes the count back, once. */
		uint64_t bit = 1ull << (r->session % 64);
		uint64_t old = __atomic_fetch_and(&hd->waiting[r->session / 64], ~bit,
						  __ATOMIC_SEQ_CST);
		if (!(old & bit))
			return;
	}
	__atomic_sub_fetch(&hd->waiters, 1, __ATOMIC_SEQ_CST);
}

/* Sleep until one of the words moves, a wake, uh_wait_cancel() (the
 * handle's private word, still cancel), or deadline_ns (monotonic). */
static void sleep_on(uh_heap *h, struct watch *w, uint32_t n, uint32_t cancel,
		     uint64_t deadline_ns)
{
	struct futex_waitv v[UH_WAIT_MAX + 1];

	if (mono_ns() >= deadline_ns)
		return;
	for (uint32_t i = 0; i < n; i++)	/* bound: n <= UH_WAIT_MAX */
		v[i] = (struct futex_waitv){ .val = w[i].val,
					     .uaddr = (uint64_t)(uintptr_t)w[i].word,
					     .flags = FUTEX_32 };
	v[n] = (struct futex_waitv){ .val = cancel,
				     .uaddr = (uint64_t)(uintptr_t)&h->wait_cancel,
				     .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	struct timespec abs = { (time_t)(deadline_ns / 1000000000ull),
				(long)(deadline_ns % 1000000000ull) };
	if (syscall(SYS_futex_waitv, v, n + 1, 0, &abs, CLOCK_MONOTONIC) >= 0 ||
	    errno != ENOSYS)
		return;
	/* A kernel before 5.16: sleep on the first word, a millisecond at a
	 * time, so that the others and a cancel are looked at often. */
	struct timespec ms = { 0, 1000000 };
	syscall(SYS_futex, w[0].word, FUTEX_WAIT, w[0].val, &ms, NULL, 0);
}

static int check_args(uh_heap *h, uint32_t n, const uh_off *objs, const uint64_t *since,
		      uint64_t *now)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (h->tx.depth)
		return uh_err_set(UH_ESTATE, "uh_wait: inside a block, which sees one "
				  "snapshot; wait outside blocks");
	if (n == 0 || n > UH_WAIT_MAX)
		return uh_err_set(UH_EINVAL, "uh_wait: %u objects; 1 to %u can be waited on "
				  "at once", n, UH_WAIT_MAX);
	if (!objs || !since || !now)
		return uh_err_set(UH_EINVAL, "uh_wait: objs, since and now must not be NULL");
	return 0;
}

/* Read every watch; 1 when a token differs from since, 0 if none does. */
static int read_all(uh_heap *h, uint32_t n, const uh_off *objs, const uint64_t *since,
		    struct watch *w, uint64_t *now)
{
	int changed = 0;

	for (uint32_t i = 0; i < n; i++) {	/* bound: n <= UH_WAIT_MAX */
		int rc = watch_read(h, objs[i], &w[i]);
		if (rc)
			return rc;
		now[i] = w[i].token;
		changed |= w[i].token != since[i];
	}
	return changed;
}

int uh_wait_any(uh_heap *h, uint32_t n, const uh_off *objs, const uint64_t *since,
		int64_t timeout_ns, uint64_t *now)
{
	struct watch w[UH_WAIT_MAX];
	struct reg r = { 0 };
	int rc;

	uh_err_clear();
	if ((rc = check_args(h, n, objs, since, now)) != 0)
		return rc;
	uint64_t start = mono_ns();
	uint64_t deadline = timeout_ns < 0 ? UINT64_MAX : start + (uint64_t)timeout_ns;
	uint64_t slice_len = slice_ns();
	uint32_t cancel = __atomic_load_n(&h->wait_cancel, __ATOMIC_ACQUIRE);
	reg_on(h, &r);
	for (;;) {
		if ((rc = read_all(h, n, objs, since, w, now)) != 0 ||
		    __atomic_load_n(&h->wait_cancel, __ATOMIC_ACQUIRE) != cancel)
			break;
		uint64_t t = mono_ns();
		if (t >= deadline)
			break;
		uint64_t slice = t + slice_len;
		sleep_on(h, w, n, cancel, slice < deadline ? slice : deadline);
		if (uh_heapd_changed(h)) {
			/* Counted on the old heapd's watch: count anew on the
			 * new one's, from a session it knows. */
			reg_off(h, &r);
			if ((rc = uh_reattach(h)) != 0)
				break;
			reg_on(h, &r);
		}
	}
	reg_off(h, &r);
	return rc;
}

int uh_wait(uh_heap *h, uh_off obj, uint64_t since, int64_t timeout_ns, uint64_t *now)
{
	uint64_t tmp;

	return uh_wait_any(h, 1, &obj, &since, timeout_ns, now ? now : &tmp);
}

int uh_change_token(uh_heap *h, uh_off obj, uint64_t *token)
{
	struct watch w;
	int rc;

	uh_err_clear();
	if ((rc = uh_check_handle(h)) != 0)
		return rc;
	if (!token)
		return uh_err_set(UH_EINVAL, "uh_change_token: token is NULL");
	if ((rc = watch_read(h, obj, &w)) != 0)
		return rc;
	*token = w.token;
	return 0;
}

void uh_wait_cancel(uh_heap *h)
{
	if (!h)
		return;
	__atomic_add_fetch(&h->wait_cancel, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &h->wait_cancel, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
