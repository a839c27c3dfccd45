/*
 * error.c -- error codes' descriptions and the thread-local last message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "uniheap.h"

static __thread char last_msg[1024];

static const char *const err_names[] = {
	[0] = "success",
	[-UH_EINVAL] = "invalid argument",
	[-UH_ENOMEM] = "out of process memory",
	[-UH_ENOSPC] = "heap full",
	[-UH_ENOTFOUND] = "not found",
	[-UH_ECONFLICT] = "conflict with another session; block rolled back",
	[-UH_ECLASSMISMATCH] = "class registered with another layout",
	[-UH_EFREED] = "freed or invalid object",
	[-UH_ETYPE] = "wrong type",
	[-UH_ERANGE] = "out of range",
	[-UH_EDISCONNECTED] = "heapd unreachable",
	[-UH_EPROTO] = "protocol error",
	[-UH_EIO] = "heap file I/O error",
	[-UH_EFORK] = "the parent's, not usable in a forked child",
	[-UH_ELOGFULL] = "block too large for the session log",
	[-UH_EREADONLY] = "heap is read-only",
	[-UH_ESTATE] = "invalid state for this call",
	[-UH_EUTF8] = "invalid UTF-8",
	[-UH_EINTERNAL] = "internal error",
};

const char *uh_strerror(int err)
{
	if (err > 0)
		return strerror(err);
	if (err < UH_LAST_ERRCODE)
		return "unknown error";
	return err_names[-err];
}

const char *uh_errmsg(void)
{
	return last_msg;
}

int uh_err_set(int code, const char *fmt, ...)
{
	char buf[sizeof(last_msg)];	/* callers may pass uh_errmsg() itself */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	memcpy(last_msg, buf, sizeof(buf));
	return code;
}

void uh_err_clear(void)
{
	last_msg[0] = '\0';
}
