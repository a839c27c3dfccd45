/*
 * value.c -- typed slots, values and keys shared by the data types.
 */
#include <string.h>

#include "utf8.h"
#include "value.h"

int uh_slot_read(uh_heap *h, uh_off obj, uint64_t i, struct uh_slot *out)
{
	int rc = uh_tx_read(h, obj, uh_slot_off(obj, i), &out->tag, 8);
	if (rc == 0)
		rc = uh_tx_read(h, obj, uh_slot_off(obj, i) + 8, &out->value, 8);
	return rc;
}

int uh_slot_write(uh_heap *h, uh_off obj, uint64_t i, const struct uh_slot *in)
{
	int rc = uh_tx_write(h, obj, uh_slot_off(obj, i), &in->tag, 8);
	if (rc == 0)
		rc = uh_tx_write(h, obj, uh_slot_off(obj, i) + 8, &in->value, 8);
	return rc;
}

int uh_values_new(uh_heap *h, uint32_t cls, uint64_t nslots, uh_off *out)
{
	if (nslots > UH_OBJ_SIZE_MASK / sizeof(struct uh_slot))
		return uh_err_set(UH_EINVAL, "%llu slots are too many for one object",
				  (unsigned long long)nslots);
	return uh_alloc_raw(h, cls, nslots * sizeof(struct uh_slot), NULL, out);
}

uint64_t uh_values_nslots(uh_heap *h, uh_off obj)
{
	const struct uh_objhdr *o = (const void *)(h->base + UH_REF_OFFSET(obj));
	return (o->size & UH_OBJ_SIZE_MASK) / sizeof(struct uh_slot);
}

static int int_fits(uint32_t t, int64_t i)
{
	switch (t) {
	case UH_T_BOOL: return i == 0 || i == 1;
	case UH_T_I8: return i >= INT8_MIN && i <= INT8_MAX;
	case UH_T_I16: return i >= INT16_MIN && i <= INT16_MAX;
	case UH_T_I32: return i >= INT32_MIN && i <= INT32_MAX;
	default: return 1;
	}
}

int uh_value_to_slot(uh_heap *h, const uh_value *v, uint32_t want_class, struct uh_slot *out)
{
	int rc;

	if (!v)
		return uh_err_set(UH_EINVAL, "value is NULL");
	out->tag = v->type;
	switch (v->type) {
	case UH_T_BOOL: case UH_T_I8: case UH_T_I16: case UH_T_I32: case UH_T_I64:
		if (!int_fits(v->type, v->u.i))
			return uh_err_set(UH_ERANGE, "value %lld does not fit its type",
					  (long long)v->u.i);
		out->value = (uint64_t)v->u.i;
		return 0;
	case UH_T_F32: case UH_T_F64:
		memcpy(&out->value, &v->u.f, 8);
		return 0;
	case UH_T_STRING: case UH_T_BYTES: case UH_T_REF:
		out->value = v->u.ref;
		if (v->u.ref == 0)
			return 0;
		uint32_t cls = v->type == UH_T_STRING ? UH_CLASS_STRING :
			       v->type == UH_T_BYTES ? UH_CLASS_BYTES : want_class;
		return uh_obj_get(h, v->u.ref, cls, &rc) ? 0 : rc;
	case UH_T_ISTRING: case UH_T_IBYTES:
		return uh_err_set(UH_ETYPE, "an inline %s value (kept in a map entry) cannot be "
				  "stored as it is: copy its bytes (uh_value_bytes) and store "
				  "them with uh_map_put_bytes or as a new object",
				  v->type == UH_T_ISTRING ? "string" : "bytes");
	default:
		return uh_err_set(UH_ETYPE, "value type %u is not a field type", v->type);
	}
}

void uh_slot_to_value(const struct uh_slot *s, uh_value *v)
{
	v->type = uh_slot_type(s->tag);
	/* Only an inline value (map.c) says where its bytes are in the tag's
	 * high half; elsewhere that half may hold other things (key hints). */
	v->reserved = uh_type_is_inline(v->type) ? (uint32_t)(s->tag >> 32) : 0;
	if (v->type == UH_T_F32 || v->type == UH_T_F64)
		memcpy(&v->u.f, &s->value, 8);
	else
		v->u.i = (int64_t)s->value;
}

int uh_free_flags_check(uint32_t flags, const char *fn)
{
	if (flags & ~UH_FREE_FLAGS)
		return uh_err_set(UH_EINVAL, "%s: unknown flags 0x%x", fn, flags & ~UH_FREE_FLAGS);
	return 0;
}

int uh_slot_free_old(uh_heap *h, const struct uh_slot *old, const struct uh_slot *now,
		     uint32_t flags)
{
	if (!old->value || !uh_free_wanted(uh_slot_type(old->tag), flags))
		return 0;
	/* Storing the same object again must not free it. */
	if (now && uh_type_is_ref(uh_slot_type(now->tag)) && now->value == old->value)
		return 0;
	return uh_tx_log_free(h, old->value);
}

int uh_key_kind_check(uint32_t kind, const uh_key *k)
{
	if (k->kind != kind)
		return uh_err_set(UH_ETYPE, "key of kind %u given to a map keyed by kind %u",
				  k->kind, kind);
	return 0;
}

int uh_key_check(uint32_t kind, const uh_key *k)
{
	int rc = uh_key_check_shape(kind, k);

	return rc ? rc : uh_key_check_utf8(k);
}

int uh_key_check_utf8(const uh_key *k)
{
	size_t bad;

	if (k->kind == UH_KEY_STRING && !(k->flags & UH_KEY_VALID_UTF8) &&
	    !uh_utf8_valid(k->data, k->len, &bad))
		return uh_err_set(UH_EUTF8, "string key is not valid UTF-8 (at byte %zu)", bad);
	return 0;
}

int uh_key_check_shape(uint32_t kind, const uh_key *k)
{
	if (!k)
		return uh_err_set(UH_EINVAL, "key is NULL");
	if (uh_key_kind_check(kind, k))
		return UH_ETYPE;
	if (kind == UH_KEY_I64)
		return 0;
	if (kind != UH_KEY_STRING && kind != UH_KEY_BYTES)
		return uh_err_set(UH_EINVAL, "unknown key kind %u", kind);
	if (k->len > UH_KEY_MAX_LEN)
		return uh_err_set(UH_EINVAL, "key of %zu bytes: at most %u allowed", k->len,
				  UH_KEY_MAX_LEN);
	if (k->len && !k->data)
		return uh_err_set(UH_EINVAL, "key data is NULL");
	return 0;
}

int uh_key_store(uh_heap *h, const uh_key *k, struct uh_slot *out)
{
	if (k->kind == UH_KEY_I64) {
		out->tag = UH_T_I64;
		out->value = (uint64_t)k->i64;
		return 0;
	}
	uint32_t cls = k->kind == UH_KEY_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES;
	out->tag = k->kind == UH_KEY_STRING ? UH_T_STRING : UH_T_BYTES;
	return uh_alloc_raw(h, cls, k->len, k->data, &out->value);
}

int uh_key_load(uh_heap *h, const struct uh_slot *s, uh_key *out)
{
	uint32_t t = uh_slot_type(s->tag);
	int rc;

	memset(out, 0, sizeof(*out));
	if (t == UH_T_I64) {
		out->kind = UH_KEY_I64;
		out->i64 = (int64_t)s->value;
		return 0;
	}
	if (t != UH_T_STRING && t != UH_T_BYTES)
		return uh_err_set(UH_EINTERNAL, "slot holds no key (type %u)", t);
	struct uh_objhdr *o = uh_obj_get(h, s->value,
					 t == UH_T_STRING ? UH_CLASS_STRING : UH_CLASS_BYTES, &rc);
	if (!o)
		return rc;
	out->kind = t == UH_T_STRING ? UH_KEY_STRING : UH_KEY_BYTES;
	out->data = o + 1;
	out->len = o->size & UH_OBJ_SIZE_MASK;
	return 0;
}

int uh_key_free(uh_heap *h, const struct uh_slot *s)
{
	uint32_t t = uh_slot_type(s->tag);
	if ((t == UH_T_STRING || t == UH_T_BYTES) && s->value)
		return uh_tx_log_free(h, s->value);
	return 0;
}

int uh_key_cmp(const uh_key *a, const uh_key *b)
{
	if (a->kind == UH_KEY_I64)
		return a->i64 < b->i64 ? -1 : a->i64 > b->i64;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = n ? memcmp(a->data, b->data, n) : 0;
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* The word hash (FORMAT.md, Conventions): 8 bytes per step (a little-endian word),
 * the tail zero-padded, then a final mix so that the low bits, which pick
 * the bucket, depend on every byte. A step per 8 bytes where FNV-1a takes
 * one per byte. */
static uint64_t words_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = UH_WORDS_HASH_INIT ^ n, w;
	size_t rest = n & 7;

	for (size_t i = 0; i + 8 <= n; i += 8) {	/* bound: n / 8 */
		memcpy(&w, s + i, 8);
		h = (h ^ w) * UH_WORDS_HASH_MUL;
		h ^= h >> 32;
	}
	if (rest) {
		/* The last word, zero-padded: a key of 8 bytes or more gives it
		 * as the top of its last 8 bytes, shifted down, in one load. */
		if (n >= 8) {
			memcpy(&w, s + n - 8, 8);
			w >>= 8 * (8 - rest);
		} else {
			w = 0;
			for (size_t i = 0; i < rest; i++)	/* bound: 7 */
				w |= (uint64_t)s[n - rest + i] << (8 * i);
		}
		h = (h ^ w) * UH_WORDS_HASH_MUL;
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= UH_WORDS_HASH_FIN;
	return h ^ (h >> 33);
}

const char *uh_type_name(uint32_t t)
{
	static const char *const names[] = { "?", "bool", "i8", "i16", "i32", "i64", "f32",
					     "f64", "ref", "string", "bytes", "inline string",
					     "inline bytes" };
	return t <= UH_T_FIELD_MAX ? names[t] : "?";
}

const void *uh_key_bytes(const uh_key *k, size_t *len)
{
	*len = k->kind == UH_KEY_I64 ? sizeof(k->i64) : k->len;
	return k->kind == UH_KEY_I64 ? (const void *)&k->i64 : k->data;
}

uint64_t uh_key_hash(const uh_key *k, int words)
{
	size_t n;
	const void *p = uh_key_bytes(k, &n);

	return words ? words_hash(p, n) : uh_fnv1a64(p, n, UH_FNV_INIT);
}

int uh_in_implicit_block(uh_heap *h, int (*body)(uh_heap *, void *), void *arg)
{
	if (h->tx.depth)
		return body(h, arg);
	/* Alone, the operation is its own block: losing a conflict to
	 * another session is not the caller's business, so run it again. */
	return uh_run(h, body, arg, 0);
}
