/*
 * pmtrace.c -- writing the persistence trace (see pmtrace.h). Test
 * instrumentation: nothing happens unless $UH_PMTRACE is set.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmtrace.h"

static int trace_fd = -1;
static pthread_once_t trace_once = PTHREAD_ONCE_INIT;

static void trace_open(void)
{
	const char *path = getenv("UH_PMTRACE");

	if (path && *path)
		trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

int uh_pmtrace_on(void)
{
	pthread_once(&trace_once, trace_open);
	return trace_fd >= 0;
}

void uh_pmtrace_write(uint32_t kind, uint64_t off, const void *data, uint64_t len)
{
	if (!uh_pmtrace_on())
		return;
	struct uh_pmtrace_rec r = { UH_PMTRACE_MAGIC, kind, (uint32_t)syscall(SYS_gettid), 0,
				    off, len };
	char *buf = malloc(sizeof(r) + len);

	if (!buf)
		abort();	/* a trace with a hole would test nothing */
	memcpy(buf, &r, sizeof(r));
	if (len)
		memcpy(buf + sizeof(r), data, len);
	/* One write: records of concurrent writers never interleave. */
	if (write(trace_fd, buf, sizeof(r) + len) != (ssize_t)(sizeof(r) + len))
		abort();
	free(buf);
}

void uh_pmtrace_flush(const char *base, uint64_t map_len, const void *addr, uint64_t len,
		      uint32_t kind)
{
	uint64_t s = (uint64_t)((const char *)addr - base);
	uint64_t e = s + len;

	if (!uh_pmtrace_on() || len == 0 || s >= map_len)
		return;
	s &= ~(uint64_t)(UH_PMTRACE_LINE - 1);
	e = (e + UH_PMTRACE_LINE - 1) & ~(uint64_t)(UH_PMTRACE_LINE - 1);
	if (e > map_len)
		e = map_len;
	uh_pmtrace_write(kind, s, base + s, e - s);
}
