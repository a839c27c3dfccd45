/*
 * values.cc -- JS values <-> libuniheap values and keys.
 *
 * Values: null/undefined (a null reference), boolean, number (a safe
 * integer is an i64, any other number an f64), bigint (an i64, exact or
 * refused), string, Buffer/Uint8Array (bytes), and references, which the
 * JS layer passes as (offset, generation). A string or bytes value becomes a
 * new string/bytes object owned by the slot that holds it (a hash map
 * takes its bytes instead: collections.cc, mapPut). Nothing else is
 * coerced: a string is never taken for bytes, nor a number for a string.
 */
#include "addon.h"

#include <cmath>
#include <cstring>

namespace uhn {

static const double SAFE = 9007199254740991.0;	/* 2^53 - 1 */

Napi::Value int_value(Napi::Env env, int64_t i)
{
	if (i >= -(int64_t)SAFE && i <= (int64_t)SAFE)
		return Napi::Number::New(env, (double)i);
	return Napi::BigInt::New(env, i);
}

Napi::Value ref_value(Napi::Env env, uh_off ref, uint32_t cls)
{
	uint32_t *scr = data(env)->scratch;

	if (ref == 0) {
		scr[SCR_IS_REF] = 0;
		return env.Null();
	}
	scr[SCR_IS_REF] = 1;
	scr[SCR_GEN] = UH_REF_GEN(ref);
	scr[SCR_CLASS] = cls;
	return Napi::Number::New(env, (double)UH_REF_OFFSET(ref));
}

bool arg_ref(const Napi::CallbackInfo &info, size_t i, uh_off *out)
{
	double off = info[i].As<Napi::Number>().DoubleValue();
	uint32_t gen = info[i + 1].As<Napi::Number>().Uint32Value();

	if (!(off >= 0 && off < 281474976710656.0) || off != std::floor(off)) {
		raise_msg(info.Env(), UH_EINVAL, "not an object offset: " + std::to_string(off));
		return false;
	}
	*out = make_ref(off, gen);
	return true;
}

Read changed_or_raise(Napi::Env env, uh_heap *h, int rc, const std::string &what)
{
	/* Outside a block a string or bytes value is read in place, with no
	 * lock: the slot that named it may have been given a new value by
	 * another session meanwhile, freeing this one in the same commit.
	 * Inside a block libuniheap has already made that a conflict (the
	 * block's snapshot no longer holds), which stands. */
	if (rc == UH_EFREED && uh_in_block(h) == 0)
		return CHANGED;
	raise(env, rc, what);
	return FAILED;
}

int Copier::copy(uint32_t i, uint32_t type, const void *p, size_t len)
{
	bool own = hand == BUFFER || (span && span[2 + 2 * i] != (int32_t)UH_T_BYTES);

	if (is_string_type(type)) {
		outs[i] = Napi::String::New(env, (const char *)p, len);
	} else if (own || len > BYTES_BUF_SIZE - at) {	/* a Buffer of its own */
		outs[i] = Napi::Buffer<uint8_t>::Copy(env, (const uint8_t *)p, len);
	} else {
		/* The JS side copies the buffer's bytes into a pooled Buffer,
		 * several times faster than the addon making one. */
		memcpy(data(env)->bytes + at, p, len);
		outs[i] = Napi::Number::New(env, (double)len);
		in_buf = true;
		if (hand == IN_BUF)
			at += len;
	}
	return 0;
}

int ref_as_copied(uh_heap *h, uh_value *v)
{
	uint32_t cls;
	int rc;

	if (v->type != UH_T_REF || v->u.ref == 0)
		return 0;
	if ((rc = uh_obj_class(h, v->u.ref, &cls)) != 0)
		return rc;
	if (cls == UH_CLASS_STRING || cls == UH_CLASS_BYTES)
		v->type = cls == UH_CLASS_STRING ? UH_T_STRING : UH_T_BYTES;
	return 0;
}

/* The value of string or bytes object s, as a value to copy. */
static uh_value held_object(uh_off s, uint32_t type)
{
	uh_value v{};

	v.type = type;
	v.u.ref = s;
	return v;
}

/* The copy of string or bytes value held (is_copied), a value that cannot
 * be read again from where it was kept: CHANGED when its object (a string
 * or bytes object, or the map entry holding an inline value) was replaced
 * (freed) under the copy, or before it. */
static Read copy_held(Napi::Env env, uh_heap *h, const uh_value &held, Copier *c,
		      Napi::Value *out)
{
	bool fetched = false;
	uh_value v{};
	int rc = copy_values(h, [&](uh_value *vals, uint32_t *n) {
		if (fetched)
			return (int)READ_CHANGED;
		fetched = true;
		vals[0] = held;
		*n = 1;
		return 0;
	}, c, &v, 1);

	if (rc == READ_CHANGED)
		return CHANGED;
	if (rc)
		return changed_or_raise(env, h, rc, is_string_type(held.type) ? "string" : "bytes");
	*out = c->outs[0];
	return COPIED;
}

Read copy_of(Napi::Env env, uh_heap *h, const uh_value &v, bool via_buf, Napi::Value *out)
{
	Napi::Value copy;
	Copier c(env, via_buf ? Copier::VIA_BUF : Copier::BUFFER, &copy);
	Read r = copy_held(env, h, v, &c, out);

	/* Only a good copy tells the JS side to take it from the buffer. */
	if (r == COPIED && c.in_buf)
		data(env)->scratch[SCR_IS_REF] = SCR_BYTES;
	return r;
}

Read string_at(Napi::Env env, uh_heap *h, uh_off s, uint32_t type, bool via_buf, Napi::Value *out)
{
	return copy_of(env, h, held_object(s, type), via_buf, out);
}

Napi::Value string_at(Napi::Env env, uh_heap *h, uh_off s, uint32_t type, bool via_buf)
{
	Napi::Value out;

	data(env)->scratch[SCR_IS_REF] = 0;
	if (string_at(env, h, s, type, via_buf, &out) == CHANGED)
		return raise_msg(env, UH_EFREED, std::string(type == UH_T_STRING ? "string" : "bytes") +
				 " value at offset " + std::to_string(UH_REF_OFFSET(s)) +
				 " has been freed: the reference to it is stale");
	return out;
}

Read read_value(Napi::Env env, uh_heap *h, const uh_value &v, bool via_buf, Napi::Value *out)
{
	uint32_t cls;
	int rc;

	data(env)->scratch[SCR_IS_REF] = 0;
	*out = env.Null();
	switch (v.type) {
	case UH_T_BOOL: *out = Napi::Boolean::New(env, v.u.i != 0); break;
	case UH_T_I8: case UH_T_I16: case UH_T_I32: case UH_T_I64: *out = int_value(env, v.u.i); break;
	case UH_T_F32: case UH_T_F64: *out = Napi::Number::New(env, v.u.f); break;
	case UH_T_STRING: case UH_T_BYTES: case UH_T_ISTRING: case UH_T_IBYTES:
		return is_copied(v) ? copy_of(env, h, v, via_buf, out) : COPIED;	/* else null */
	case UH_T_REF:
		if (v.u.ref == 0)
			break;
		/* A reference does not own its target: one freed before this
		 * read is dangling, an error; one freed during it, changed. */
		if ((rc = uh_obj_class(h, v.u.ref, &cls)) != 0) {
			raise(env, rc, "reference");
			return FAILED;
		}
		if (cls == UH_CLASS_STRING || cls == UH_CLASS_BYTES)
			return string_at(env, h, v.u.ref, cls == UH_CLASS_STRING ? UH_T_STRING : UH_T_BYTES,
					 via_buf, out);
		*out = ref_value(env, v.u.ref, cls);
		break;
	default:	/* never null: that is a stored null, and this is not one */
		raise_msg(env, UH_EINTERNAL, "value type " + std::to_string(v.type) +
			  " is not one this binding knows: upgrade the Node binding (a newer "
			  "libuniheap may have written it), or check the heap for damage "
			  "(heapctl check)");
		return FAILED;
	}
	return COPIED;
}

Napi::Value from_value(Napi::Env env, uh_heap *h, const uh_value &v, bool via_buf)
{
	Napi::Value out;

	if (read_value(env, h, v, via_buf, &out) == CHANGED)
		return raise_msg(env, UH_EFREED, "string or bytes value at offset " +
				 std::to_string(UH_REF_OFFSET(v.u.ref)) + ": freed while it was read; "
				 "read it again from where it is stored");
	return env.IsExceptionPending() ? env.Undefined() : out;
}

Napi::Value ref_triple(Napi::Env env, uh_off ref, uint32_t cls)
{
	Napi::Array r = Napi::Array::New(env, 3);

	r.Set(0u, Napi::Number::New(env, (double)UH_REF_OFFSET(ref)));
	r.Set(1u, Napi::Number::New(env, UH_REF_GEN(ref)));
	r.Set(2u, Napi::Number::New(env, cls));
	return r;
}

Read bytes_in_buf(Napi::Env env, uh_heap *h, uh_off s, size_t *at, Napi::Value *out)
{
	Napi::Value copy;
	Copier c(env, Copier::IN_BUF, &copy);

	c.from = *at;
	Read r = copy_held(env, h, held_object(s, UH_T_BYTES), &c, out);
	if (r == COPIED)
		*at = c.at;
	return r;
}

Read bytes_batched(Napi::Env env, uh_heap *h, uh_off s, size_t *at, Napi::Value *out)
{
	size_t from = *at;
	Read r = bytes_in_buf(env, h, s, at, out);

	if (r == COPIED && out->IsNumber()) {
		Napi::Array a = Napi::Array::New(env, 2);
		a.Set(0u, Napi::Number::New(env, (double)from));
		a.Set(1u, *out);
		*out = a;
	}
	return r;
}

Napi::Value read_answer(Napi::Env env, uh_heap *h, const std::string &what, bool via_buf, int rc,
			const uh_value &v, const Copier &c, Napi::Value out)
{
	if (rc == READ_DONE)
		return env.IsExceptionPending() ? env.Undefined() : out;
	if (rc)
		return raise(env, rc, what);
	if (is_copied(v)) {
		/* Only a good copy tells the JS side to take it from the buffer. */
		data(env)->scratch[SCR_IS_REF] = c.in_buf ? (uint32_t)SCR_BYTES : 0u;
		return c.outs[0];
	}
	/* No string or bytes value: nothing is copied, nothing changes. */
	return read_value(env, h, v, via_buf, &out) == COPIED ? out : env.Undefined();
}

/* An integer of a JS number or bigint; false and a pending exception if v
 * is neither, not an integer, or outside i64. */
static bool to_int(Napi::Env env, Napi::Value v, int64_t *out, const char *what)
{
	if (v.IsBigInt()) {
		bool lossless;
		*out = v.As<Napi::BigInt>().Int64Value(&lossless);
		if (!lossless)
			raise_msg(env, UH_ERANGE, std::string(what) + " does not fit i64");
		return lossless;
	}
	if (!v.IsNumber()) {
		type_error(env, std::string(what) + " must be an integer (number or bigint)");
		return false;
	}
	double d = v.As<Napi::Number>().DoubleValue();
	if (d != std::floor(d) || std::isinf(d)) {
		raise_msg(env, UH_ERANGE, std::string(what) + " must be an integer, not " +
			  v.ToString().Utf8Value());
		return false;
	}
	if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
		raise_msg(env, UH_ERANGE, std::string(what) + " " + v.ToString().Utf8Value() +
			  " does not fit i64");
		return false;
	}
	*out = (int64_t)d;
	return true;
}

static bool bytes_of(Napi::Value v, std::string *out)
{
	if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
		return false;
	Napi::Uint8Array a = v.As<Napi::Uint8Array>();
	out->assign((const char *)a.Data(), a.ByteLength());
	return true;
}

/* By the JS type of v (hint -1). */
static bool auto_value(Napi::Env env, Napi::Value v, Stored *out)
{
	uh_value &u = out->v;

	if (v.IsBoolean()) {
		u.type = UH_T_BOOL;
		u.u.i = v.As<Napi::Boolean>().Value();
	} else if (v.IsNumber()) {
		double d = v.As<Napi::Number>().DoubleValue();
		bool safe = d == std::floor(d) && std::fabs(d) <= SAFE && !(d == 0 && std::signbit(d));
		u.type = safe ? UH_T_I64 : UH_T_F64;
		if (safe)
			u.u.i = (int64_t)d;
		else
			u.u.f = d;
	} else if (v.IsBigInt()) {
		u.type = UH_T_I64;
		return to_int(env, v, &u.u.i, "bigint value");
	} else if (v.IsString()) {
		u.type = UH_T_STRING;
		out->data = v.As<Napi::String>().Utf8Value();
		out->needs_alloc = true;
	} else if (bytes_of(v, &out->data)) {
		u.type = UH_T_BYTES;
		out->needs_alloc = true;
	} else {
		type_error(env, "cannot store " + v.ToString().Utf8Value() + " in the heap: store null, "
			   "a boolean, number, bigint, string, Buffer/Uint8Array or a persistent "
			   "object (PObject, PMap, PSortedMap, PList, PArray)");
		return false;
	}
	return true;
}

bool to_value(Napi::Env env, Napi::Value v, int32_t hint, uint32_t gen, Stored *out)
{
	uh_value &u = out->v;

	u = uh_value{};
	if (hint == -2) {
		u.type = UH_T_REF;
		u.u.ref = make_ref(v.As<Napi::Number>().DoubleValue(), gen);
		return true;
	}
	if (v.IsNull() || v.IsUndefined()) {
		if (hint >= (int32_t)UH_T_BOOL && hint <= (int32_t)UH_T_F64) {
			type_error(env, "null cannot be stored in an array of numbers");
			return false;
		}
		u.type = hint > 0 ? (uint32_t)hint : UH_T_REF;
		return true;
	}
	if (hint < 0)
		return auto_value(env, v, out);
	u.type = (uint32_t)hint;
	switch (hint) {
	case UH_T_BOOL:
		if (v.IsBoolean()) {
			u.u.i = v.As<Napi::Boolean>().Value();
			return true;
		}
		[[fallthrough]];	/* 0 and 1 are accepted */
	case UH_T_I8: case UH_T_I16: case UH_T_I32: case UH_T_I64:
		return to_int(env, v, &u.u.i, "element");
	case UH_T_F32: case UH_T_F64:
		if (!v.IsNumber())
			return type_error(env, "element must be a number"), false;
		u.u.f = v.As<Napi::Number>().DoubleValue();
		return true;
	case UH_T_STRING:
		if (!v.IsString())
			return type_error(env, "element must be a string or null"), false;
		out->data = v.As<Napi::String>().Utf8Value();
		out->needs_alloc = true;
		return true;
	case UH_T_BYTES:
		if (!bytes_of(v, &out->data))
			return type_error(env, "element must be a Buffer/Uint8Array or null"), false;
		out->needs_alloc = true;
		return true;
	}
	type_error(env, "element must be a persistent object or null");
	return false;
}

int alloc_value(uh_heap *h, Stored *v)
{
	if (!v->needs_alloc)
		return 0;
	v->needs_alloc = false;
	if (v->v.type == UH_T_STRING)
		return uh_string_new(h, v->data.data(), v->data.size(), &v->v.u.ref);
	return uh_bytes_new(h, v->data.data(), v->data.size(), &v->v.u.ref);
}

static const char *const KIND_NAMES[] = { "?", "strings", "bytes (Buffer/Uint8Array)",
					  "integers" };

/* A string key's UTF-8 bytes into out->small when they surely fit (V8
 * writes whole characters only, so a write that leaves fewer than 4
 * bytes free may have stopped short), else into out->bytes. */
static bool string_key(Napi::Env env, Napi::Value v, Key *out)
{
	size_t n = 0;

	if (napi_get_value_string_utf8(env, v, out->small, sizeof out->small, &n) != napi_ok)
		return false;
	if (n + 4 < sizeof out->small) {
		out->k.data = out->small;
		out->k.len = n;
		return true;
	}
	out->bytes = v.As<Napi::String>().Utf8Value();
	out->k.data = out->bytes.data();
	out->k.len = out->bytes.size();
	return true;
}

/* A bytes key: a copy (the caller's array may view the mapping or a
 * buffer the call writes), in out->small when it fits. */
static void bytes_key(Napi::Uint8Array a, Key *out)
{
	size_t n = a.ByteLength();

	if (n <= sizeof out->small) {
		if (n)
			memcpy(out->small, a.Data(), n);
		out->k.data = out->small;
	} else {
		out->bytes.assign((const char *)a.Data(), n);
		out->k.data = out->bytes.data();
	}
	out->k.len = n;
}

bool to_key(Napi::Env env, uint32_t kind, Napi::Value v, Key *out)
{
	uh_key &k = out->k;

	k = uh_key{};
	k.kind = kind;
	if (kind == UH_KEY_STRING && v.IsString()) {
		k.flags = UH_KEY_VALID_UTF8;	/* lone surrogates come out as U+FFFD */
		return string_key(env, v, out);
	}
	if (kind == UH_KEY_BYTES && v.IsTypedArray() &&
	    v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
		bytes_key(v.As<Napi::Uint8Array>(), out);
		return true;
	}
	if (kind == UH_KEY_I64 && (v.IsNumber() || v.IsBigInt()))
		return to_int(env, v, &k.i64, "key");
	std::string got = v.IsString() ? "a string" : v.IsNumber() ? "a number" :
			  v.IsBigInt() ? "a bigint" : v.IsTypedArray() ? "a typed array" :
			  v.IsNull() ? "null" : v.IsUndefined() ? "undefined" : "an object";
	raise_msg(env, UH_ETYPE, std::string("this map's keys are ") +
		  KIND_NAMES[kind <= 3 ? kind : 0] + ", not " + got);
	return false;
}

Napi::Value from_key(Napi::Env env, const uh_key &k)
{
	if (k.kind == UH_KEY_I64)
		return int_value(env, k.i64);
	if (k.kind == UH_KEY_STRING)
		return Napi::String::New(env, (const char *)k.data, k.len);
	return Napi::Buffer<uint8_t>::Copy(env, (const uint8_t *)k.data, k.len);
}

int Step::note(int rc)
{
	if (rc && !f.rc)
		f = uhn::failure(rc);
	return rc;
}

int Step::begin()
{
	outer = uh_in_block(h) == 0;
	return note(uh_begin(h));
}

int Step::end(int rc)
{
	note(rc);
	if (rc == 0)
		return note(uh_commit(h));
	if (outer)
		uh_abort(h);
	else
		uh_commit(h);	/* leave our level; a doomed block stays doomed */
	return rc;
}

}  // namespace uhn
