/*
 * log.c -- heapd's structured log: one logfmt line per event on stderr.
 *
 *   ts=2026-11-21T13:15:00.123Z level=info event=start key=value ...
 *
 * Each line is built in a buffer and written with a single write(), so
 * lines from concurrent gRPC threads never interleave (stderr is unbuffered
 * and a write to a pipe of <= PIPE_BUF bytes is atomic; longer lines are
 * truncated to stay under that limit).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#define HD_LOG_LINE_MAX PIPE_BUF	/* 4096 on Linux: one atomic pipe write */

/* "2026-11-21T13:15:00.123Z" into buf (at least 32 bytes). */
static void log_timestamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", (tm.tm_year + 1900) % 10000,
		 (tm.tm_mon + 1) % 100, tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
		 tm.tm_sec % 100, (int)(ts.tv_nsec / 1000000) % 1000);
}

/* Replace newlines and other control bytes so a value can never start a
 * second line. */
static void log_flatten(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20)
			s[i] = ' ';
	}
}

void hd_log(const char *level, const char *event, const char *fmt, ...)
{
	char line[HD_LOG_LINE_MAX], ts[32];
	log_timestamp(ts, sizeof(ts));
	int k = snprintf(line, sizeof(line), "ts=%s level=%s event=%s", ts, level, event);
	size_t n = k < 0 ? 0 : ((size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1);
	if (fmt && fmt[0] && n + 2 < sizeof(line)) {
		line[n++] = ' ';
		va_list ap;
		va_start(ap, fmt);
		k = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		va_end(ap);
		if (k > 0) {
			size_t got = (size_t)k < sizeof(line) - n ? (size_t)k : sizeof(line) - n - 1;
			log_flatten(line + n, got);
			n += got;
		}
	}
	if (n >= sizeof(line) - 1)
		n = sizeof(line) - 2;	/* truncated: keep room for the newline */
	line[n++] = '\n';
	/* One write; a short write or EINTR loses the line rather than
	 * splitting it, which is what a log that never interleaves needs. */
	ssize_t w;
	do {
		w = write(STDERR_FILENO, line, n);
	} while (w < 0 && errno == EINTR);
}

static int quote_needed(const char *s)
{
	if (!s[0])
		return 1;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\' || *p == 0x7f)
			return 1;
	}
	return 0;
}

const char *hd_log_quote(char *buf, size_t len, const char *s)
{
	if (len == 0)
		return "";
	if (!s)
		s = "";
	if (!quote_needed(s)) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	size_t o = 0;
	buf[o++] = '"';
	/* Bounded by strlen(s) and by len: room for a 2-byte escape plus the
	 * closing quote and NUL is kept at every step. */
	for (const unsigned char *p = (const unsigned char *)s; *p && o + 4 < len; p++) {
		if (*p < 0x20 || *p == 0x7f)
			continue;
		if (*p == '"' || *p == '\\')
			buf[o++] = '\\';
		buf[o++] = (char)*p;
	}
	if (o < len - 1)
		buf[o++] = '"';
	buf[o < len ? o : len - 1] = '\0';
	return buf;
}
