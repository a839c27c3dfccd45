/*
 * handle.c -- the checks every public call makes of its handle first: not
 * NULL, not used across a fork, and (for a change) not read-only.
 *
 * A forked child shares the parent's mapping but not its session: it
 * must never use the parent's session. Every child bumps a generation
 * counter (pthread_atfork); a handle stamped with another generation was
 * connected before a fork, and its first use in the child attaches it
 * anew (forked.c, through h->recover, one handle at a time under
 * forked_lock). This spares a getpid() system call on every operation.
 * At the bottom of the library: it calls only error.c, and forked.c
 * through the table set at connect.
 */
#include <pthread.h>
#include <unistd.h>

#include "uhint.h"

static volatile uint32_t fork_gen;	/* bumped in every forked child */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* Serializes the rebuilds of a child's inherited handles (threads of the
 * child may use two of them at once). */
static pthread_mutex_t forked_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_fork_child(void)
{
	fork_gen++;
	/* A parent thread may have held it at the fork. */
	pthread_mutex_init(&forked_lock, NULL);
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

void uh_handle_watch_fork(void)
{
	pthread_once(&atfork_once, install_atfork);
}

void uh_handle_stamp(uh_heap *h)
{
	h->pid = getpid();
	__atomic_store_n(&h->fork_gen, fork_gen, __ATOMIC_RELEASE);
}

uint32_t uh_fork_gen(void)
{
	return fork_gen;
}

int uh_handle_inherited(const uh_heap *h)
{
	return __atomic_load_n(&h->fork_gen, __ATOMIC_ACQUIRE) != fork_gen;
}

/* The first use of h in a forked child. */
static int attach_in_child(uh_heap *h)
{
	if (!h->recover || !h->recover->forked)
		return uh_err_set(UH_EFORK, "heap handle used in a forked child (pid %d "
				  "connected it)", (int)h->pid);
	pthread_mutex_lock(&forked_lock);
	int rc = uh_handle_inherited(h) ? h->recover->forked(h) : 0;
	pthread_mutex_unlock(&forked_lock);
	return rc;
}

int uh_check_handle(uh_heap *h)
{
	if (!h)
		return uh_err_set(UH_EINVAL, "heap handle is NULL");
	if (uh_handle_inherited(h))
		return attach_in_child(h);
	return 0;
}

int uh_check_writable(uh_heap *h, const char *fn)
{
	int rc = uh_check_handle(h);

	if (rc)
		return rc;
	if (h->readonly)
		return uh_err_set(UH_EREADONLY, "%s: heap is connected read-only", fn);
	return 0;
}
