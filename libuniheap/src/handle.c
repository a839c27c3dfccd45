/*
 * handle.c -- the checks every public call makes of its handle first: not
 * NULL, not used across a fork, and (for a change) not read-only.
 *
 * A forked child shares the parent's mapping but not its gRPC session, so
 * it must never use the parent's handle. Every child bumps a generation
 * counter (pthread_atfork); a handle stamped with another generation was
 * connected before a fork. This spares a getpid() system call on every
 * operation. At the bottom of the library: it calls only error.c.
 */
#include <pthread.h>
#include <unistd.h>

#include "uhint.h"

static volatile uint32_t fork_gen;	/* bumped in every forked child */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
	fork_gen++;
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
	h->fork_gen = fork_gen;
}

int uh_check_handle(uh_heap *h)
{
	if (!h)
		return uh_err_set(UH_EINVAL, "heap handle is NULL");
	if (h->fork_gen != fork_gen)
		return uh_err_set(UH_EFORK, "heap handle used in a forked child (pid %d "
				  "connected it); start the child with exec and connect there",
				  (int)h->pid);
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
