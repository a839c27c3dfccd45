/*
 * utf8.h -- UTF-8 well-formedness (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF). Shared by heapd and libuniheap:
 * strings, class and field names, and what goes into protobuf strings.
 */
#ifndef UH_UTF8_H
#define UH_UTF8_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Length of the well-formed sequence at p (n >= 1 bytes left), 0 if the
 * bytes there are not one. Can't fail. */
size_t uh_utf8_seq(const unsigned char *p, size_t n);

/* 1 if s[0..n) is well-formed UTF-8; else 0, with the offset of the first
 * bad byte in *bad (if bad is not NULL). */
int uh_utf8_valid(const void *s, size_t n, size_t *bad);

/* Copy s[0..n) to out (room for n bytes), each byte that starts no
 * well-formed sequence replaced by '?': for free text (logs, names shown
 * by tools) that must not make a protobuf message invalid. Can't fail. */
void uh_utf8_clean(const char *s, size_t n, char *out);

#ifdef __cplusplus
}
#endif

#endif /* UH_UTF8_H */
