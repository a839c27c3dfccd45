/*
 * copy_value.h -- the string and bytes values test_copy_values and its
 * writer (prog_copy_writer) agree on: value k is "k=<k>;" then a fill
 * byte that depends on k, to a length that depends on k, so a reader can
 * tell a whole value from a torn one or a mix of two.
 */
#ifndef UH_TEST_COPY_VALUE_H
#define UH_TEST_COPY_VALUE_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CV_MAX 2100

/* The length of value k: 100 to 1999 bytes, or for a map's values (map 1)
 * 12 to 191, inline in their entries up to UH_MAP_INLINE_MAX, objects
 * beyond. */
static inline size_t cv_len(uint32_t k, int map)
{
	return map ? 12 + (size_t)(k * 37u) % 180 : 100 + (size_t)(k * 37u) % 1900;
}

/* Value k into buf (CV_MAX bytes); fill 'a'.. for strings, 'A'.. for bytes. */
static inline size_t cv_make(uint32_t k, char fill0, char *buf, int map)
{
	size_t len = cv_len(k, map);
	int n = snprintf(buf, CV_MAX, "k=%u;", k);

	memset(buf + n, fill0 + (char)(k % 26), len - (size_t)n);
	return len;
}

/* The k of a whole value made by cv_make(k, fill0, map), or 0 if it is
 * not one. */
static inline uint32_t cv_parse(const char *p, size_t len, char fill0, int map)
{
	unsigned k = 0;
	int n = 0;

	if (len < 8 || len > CV_MAX || sscanf(p, "k=%u;%n", &k, &n) != 1 || n == 0 ||
	    cv_len(k, map) != len)
		return 0;
	for (size_t i = (size_t)n; i < len; i++)	/* bound: len */
		if (p[i] != fill0 + (char)(k % 26))
			return 0;
	return k;
}

#endif /* UH_TEST_COPY_VALUE_H */
