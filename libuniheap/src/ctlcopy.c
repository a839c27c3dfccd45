/*
 * ctlcopy.c -- the control client of a child forked after this library's
 * gRPC ran: a fresh copy of libuniheap in a new link-map namespace
 * (ctlcopy.h says why; control.cc sends its calls here).
 *
 * State, per process: grpc_ran (set before the first channel: gRPC is
 * about to run here), need_copy (set in every child forked after that:
 * pthread_atfork), copy (the loaded copy's control client, once loaded).
 * In a child of a child that loaded a copy, that copy's gRPC has run too:
 * it is dropped like the library's own, and a new copy is loaded. Each
 * generation that uses the heap thus takes one namespace (glibc has 16,
 * and room for a few libc copies: a chain of a few nested forks).
 *
 * The copy is dlmopen()ed from the very file this library was loaded
 * from (dladdr), and checked by its table's version and size. Nothing
 * crosses between the two but C calls, plain structs the caller owns and
 * the copy's opaque uhc handles; error messages are copied over. The
 * copy is never unloaded (its gRPC threads run until exit).
 *
 * A static libuniheap linked into a program cannot be loaded again: there
 * a child forked after gRPC ran gets UH_EFORK, as before. A libuniheap
 * built with AddressSanitizer cannot either, and worse: the copy's second
 * ASan runtime ends the child ("ASan runtime does not come first"), so
 * the sanitizer runs leave test_fork out.
 *
 * Shared layer, beside control.cc: calls only error.c and libc's dl*.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "ctlcopy.h"
#include "error.h"

static int grpc_ran;			/* this library's gRPC has run here */
static int need_copy;			/* forked after it ran: use a copy */
static const struct uhc_ops *copy;	/* the loaded copy; atomic */
static pid_t ran_in;			/* pid in which grpc_ran was first set */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void)
{
	/* Single-threaded here: plain stores. A parent thread may have held
	 * load_lock at the fork; it never releases it in this process. */
	pthread_mutex_init(&load_lock, NULL);
	if (!grpc_ran)
		return;
	need_copy = 1;
	__atomic_store_n(&copy, NULL, __ATOMIC_RELEASE);
}

static void install_atfork(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

void uhc_fork_watch(void)
{
	pthread_once(&watch_once, install_atfork);
	if (!__atomic_load_n(&grpc_ran, __ATOMIC_ACQUIRE)) {
		ran_in = getpid();
		__atomic_store_n(&grpc_ran, 1, __ATOMIC_RELEASE);
	}
}

const struct uhc_ops *uhc_fork_ops(void)
{
	return __atomic_load_n(&copy, __ATOMIC_ACQUIRE);
}

int uhc_fork_err(const struct uhc_ops *ops, int rc)
{
	return uh_err_set(rc, "%s", ops->errmsg());
}

static int load_failed(const char *file, const char *why)
{
	return uh_err_set(UH_EFORK,
			  "this process (pid %d) was forked after pid %d used heapd through "
			  "libuniheap, whose gRPC cannot run in a forked child, and a fresh copy "
			  "of libuniheap (%s) for the child could not be loaded: %s; connect "
			  "from a process started with exec (e.g. multiprocessing's 'spawn')",
			  (int)getpid(), (int)ran_in, file ? file : "?", why);
}

/* Load the copy; under load_lock. */
static int load_copy(void)
{
	Dl_info di;

	/* This very function lies in the library's file. */
	if (!dladdr((const void *)(uintptr_t)load_copy, &di) || !di.dli_fname || !di.dli_fname[0])
		return load_failed(NULL, "the library's own file is unknown (dladdr)");
	void *lib = dlmopen(LM_ID_NEWLM, di.dli_fname, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return load_failed(di.dli_fname, dlerror());
	const struct uhc_ops *ops = dlsym(lib, "uh_control_ops");
	if (!ops)
		return load_failed(di.dli_fname, "it exports no control client (uh_control_ops)");
	if (ops->version != UHC_OPS_VERSION || ops->size != sizeof(*ops))
		return load_failed(di.dli_fname, "its control client is of another version");
	__atomic_store_n(&copy, ops, __ATOMIC_RELEASE);
	return 0;
}

const struct uhc_ops *uhc_fork_ops_load(int *rc)
{
	const struct uhc_ops *ops = uhc_fork_ops();

	*rc = 0;
	if (ops || !__atomic_load_n(&need_copy, __ATOMIC_ACQUIRE))
		return ops;
	pthread_mutex_lock(&load_lock);
	if (!uhc_fork_ops())
		*rc = load_copy();
	pthread_mutex_unlock(&load_lock);
	return *rc ? NULL : uhc_fork_ops();
}
