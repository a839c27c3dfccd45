/*
 * prog_gold_model.h -- the content of the golden heap (tests/gold/v1),
 * shared by its generator (prog_gold_gen.c) and its checker
 * (prog_gold_check.c). Changing anything here changes the golden file:
 * regenerate it (tests/gold/v1/README.md) and say so in the commit.
 */
#ifndef PROG_GOLD_MODEL_H
#define PROG_GOLD_MODEL_H

#include <stdint.h>

#include "uniheap.h"

/* GoldAll: one field of every type. Offsets by the format's layout rule. */
enum { GA_FLAG, GA_TINY, GA_SMALL, GA_MID, GA_BIG, GA_RATIO, GA_REAL, GA_LINK, GA_TEXT,
       GA_BLOB, GA_NFIELDS };
static const uh_field_spec gold_all_fields[GA_NFIELDS] = {
	{ "flag", UH_T_BOOL, 0 },   { "tiny", UH_T_I8, 0 },    { "small", UH_T_I16, 0 },
	{ "mid", UH_T_I32, 0 },     { "big", UH_T_I64, 0 },    { "ratio", UH_T_F32, 0 },
	{ "real", UH_T_F64, 0 },    { "link", UH_T_REF, 0 },   { "text", UH_T_STRING, 0 },
	{ "blob", UH_T_BYTES, 0 },
};
static const uint32_t gold_all_offsets[GA_NFIELDS] = { 16, 17, 18, 20, 24, 32, 40, 48, 56, 64 };
#define GOLD_ALL_PAYLOAD 56u
#define GOLD_ALL_ID 32u		/* first user class */

/* GoldPair: mixed alignment; right is an untyped ref. left's ref_class is
 * GoldAll's id (32), fixed here because the file pins it. */
enum { GP_TAG, GP_LEFT, GP_RIGHT, GP_OK, GP_NFIELDS };
static const uh_field_spec gold_pair_fields[GP_NFIELDS] = {
	{ "tag", UH_T_I32, 0 }, { "left", UH_T_REF, GOLD_ALL_ID },
	{ "right", UH_T_REF, 0 }, { "ok", UH_T_BOOL, 0 },
};
static const uint32_t gold_pair_offsets[GP_NFIELDS] = { 16, 24, 32, 40 };
#define GOLD_PAIR_PAYLOAD 32u
#define GOLD_PAIR_ID 33u

/* Scalar values of the objects "one" and "two". */
struct gold_vals {
	uint8_t flag;
	int8_t tiny;
	int16_t small;
	int32_t mid;
	int64_t big;
	float ratio;
	double real;
	const char *text;	/* NULL = null field */
	int blob;		/* 1 = bytes 0..255, 0 = null */
};
static const struct gold_vals gold_one = {
	1, -128, 32767, INT32_MIN, INT64_MAX, 1.5f, 3.141592653589793, "hello, uniheap", 1,
};
static const struct gold_vals gold_two = {
	0, 127, -32768, INT32_MAX, INT64_MIN, -2.25f, 1e300,
	"h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93", 0,	/* "héllo wörld ✓" */
};

#define GOLD_CHAIN_LEN 10
#define GOLD_BIG_LEN 20000u	/* > 16384: a large-object arena */
static inline uint8_t gold_big_byte(uint32_t i) { return (uint8_t)(i * 7u + 3u); }

#define GOLD_ROOT_UTF8 "gold.\xc3\xbcn\xc3\xaf"	/* "gold.ünï" -> one */
#define GOLD_NROOTS 6	/* one, two, pair, chain, big, ünï */
#define GOLD_PAIR_TAG 42

#endif /* PROG_GOLD_MODEL_H */
