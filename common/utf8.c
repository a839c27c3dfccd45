/*
 * utf8.c -- UTF-8 well-formedness checks.
 */
#include <stdint.h>
#include <string.h>

#include "utf8.h"

size_t uh_utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0], min, cp;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {	/* bound: 3 */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int uh_utf8_valid(const void *s, size_t n, size_t *bad)
{
	const unsigned char *p = s;

	for (size_t i = 0; i < n;) {	/* bound: n */
		uint64_t w;
		/* ASCII runs (most keys are) eight bytes at a time. */
		if (n - i >= 8 && (memcpy(&w, p + i, 8), !(w & 0x8080808080808080ull))) {
			i += 8;
			continue;
		}
		/* A tail shorter than eight: the last eight bytes at once (some
		 * already checked) when they are all ASCII. */
		if (n - i < 8 && n >= 8 && (memcpy(&w, p + n - 8, 8), !(w & 0x8080808080808080ull)))
			return 1;
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t len = uh_utf8_seq(p + i, n - i);
		if (!len) {
			if (bad)
				*bad = i;
			return 0;
		}
		i += len;
	}
	return 1;
}

void uh_utf8_clean(const char *s, size_t n, char *out)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {	/* bound: n */
		size_t len = uh_utf8_seq(p + i, n - i);
		if (!len) {
			out[i++] = '?';
			continue;
		}
		for (size_t k = 0; k < len; k++)
			out[i + k] = s[i + k];
		i += len;
	}
}
