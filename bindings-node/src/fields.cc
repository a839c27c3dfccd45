/*
 * fields.cc -- objects and their fields. The JS layer reads primitive
 * fields outside blocks straight from the mapping; everything else comes
 * here: reads inside a block (validated against the block's snapshot),
 * every write (locked, logged and persisted by libuniheap), allocation,
 * free, and string/bytes fields.
 *
 * Arguments: (off, gen) name the object, idx the field's index in its
 * class, and `what` ("Class.field") names it in error messages.
 */
#include "session.h"

#include <cstring>
#include <vector>

namespace uhn {

static std::string what_of(const Napi::CallbackInfo &info, size_t i)
{
	return info[i].IsString() ? info[i].As<Napi::String>().Utf8Value() : "field";
}

/* alloc(classId) -> offset of a new zeroed object (generation in scratch) */
Napi::Value Session::Alloc(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t cls = info[0].As<Napi::Number>().Uint32Value();
	uh_off off;
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_alloc(h, cls, &off)) != 0)
		return raise(env, rc, "alloc");
	return ref_value(env, off, cls);
}

/* allocInline(classId, indexes, values) -> offset of a new object
 * (generation in scratch) whose inline fields indexes[i] hold values[i] (a
 * string's UTF-8 bytes or a Uint8Array's; the JS side checked each against
 * its field's type), allocated and written in one step: new C(values) of
 * a class whose given fields are all inline, in one call. */
Napi::Value Session::AllocInline(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t cls = info[0].As<Napi::Number>().Uint32Value();
	uh_off off = 0;

	InlineValues iv;

	if (!open(env) || !to_inline_values(env, info[1], info[2], "allocInline", &iv))
		return env.Undefined();
	Step st(h);
	int rc = st.begin();
	if (rc == 0)
		rc = uh_alloc(h, cls, &off);
	for (size_t i = 0; i < iv.v.size() && rc == 0; i++)	/* bound: the fields */
		rc = uh_set_inline(h, off, iv.v[i].field, iv.v[i].data, iv.v[i].len);
	if (st.end(rc) != 0)
		return raise(env, st.failure(), "new object");
	return ref_value(env, off, cls);
}

/* free(off, gen): at commit when inside a block */
Napi::Value Session::Free(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	if ((rc = uh_free(h, ref)) != 0)
		return raise(env, rc, "free");
	return env.Undefined();
}

/* objClass(off, gen) -> class id; FreedObjectError when not a valid object */
Napi::Value Session::ObjClass(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;
	uint32_t cls;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	if ((rc = uh_obj_class(h, ref, &cls)) != 0)
		return raise(env, rc, "object");
	return Napi::Number::New(env, cls);
}

/* getI64(off, gen, idx, what) -> number, or a bigint beyond 2^53 - 1;
 * serves every integer field */
Napi::Value Session::GetI64(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;
	int64_t v;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	if ((rc = uh_get_i64(h, ref, info[2].As<Napi::Number>().Uint32Value(), &v)) != 0)
		return raise(env, rc, what_of(info, 3));
	return int_value(env, v);
}

/* setI64(off, gen, idx, number | bigint, what): range-checked by the field */
Napi::Value Session::SetI64(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;
	int64_t v;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	if (info[3].IsBigInt()) {
		bool lossless;
		v = info[3].As<Napi::BigInt>().Int64Value(&lossless);
		if (!lossless)
			return raise_msg(env, UH_ERANGE, what_of(info, 4) + ": " +
					 info[3].ToString().Utf8Value() + " does not fit i64");
	} else {
		v = (int64_t)info[3].As<Napi::Number>().DoubleValue();
	}
	if ((rc = uh_set_i64(h, ref, info[2].As<Napi::Number>().Uint32Value(), v)) != 0)
		return raise(env, rc, what_of(info, 4));
	return env.Undefined();
}

/* getF64(off, gen, idx, what) -> number; serves f32 and f64 fields */
Napi::Value Session::GetF64(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;
	double v;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	if ((rc = uh_get_f64(h, ref, info[2].As<Napi::Number>().Uint32Value(), &v)) != 0)
		return raise(env, rc, what_of(info, 3));
	return Napi::Number::New(env, v);
}

/* setF64(off, gen, idx, number, what) */
Napi::Value Session::SetF64(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	rc = uh_set_f64(h, ref, info[2].As<Napi::Number>().Uint32Value(),
			info[3].As<Napi::Number>().DoubleValue());
	if (rc)
		return raise(env, rc, what_of(info, 4));
	return env.Undefined();
}

/* getRef(off, gen, idx, what) -> null, a string/bytes value, or the target's
 * offset (generation and class in scratch) */
Napi::Value Session::GetRef(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t idx = info[2].As<Napi::Number>().Uint32Value();
	uh_off ref;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	std::string what = what_of(info, 3);
	return read_again(env, h, what, false, [&](uh_value *v, Napi::Value *out) {
		int rc;

		v->type = UH_T_REF;
		if ((rc = uh_get_ref(h, ref, idx, &v->u.ref)) != 0) {
			*out = raise(env, rc, what);
			return DONE;
		}
		return FOUND;
	});
}

/* setRef(off, gen, idx, targetOff, targetGen, what); targetOff 0 = null.
 * libuniheap checks the target's class against a typed ref field. */
Napi::Value Session::SetRef(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref, target;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &ref) || !arg_ref(info, 3, &target))
		return env.Undefined();
	if ((rc = uh_set_ref(h, ref, info[2].As<Napi::Number>().Uint32Value(), target)) != 0)
		return raise(env, rc, what_of(info, 5));
	return env.Undefined();
}

/* getStr(off, gen, idx, type, what, viaBuf) -> string (UH_T_STRING) or
 * Buffer (UH_T_BYTES), a copy; null for a null field (viaBuf: bytes may
 * come through the bytes buffer) */
Napi::Value Session::GetStr(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t idx = info[2].As<Napi::Number>().Uint32Value();
	uint32_t type = info[3].As<Napi::Number>().Uint32Value();
	uh_off ref;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	std::string what = what_of(info, 4);
	/* A field's value is replaced by a new object, the old one freed:
	 * read the field again when its value changes under the copy. */
	return read_again(env, h, what, info[5].ToBoolean(), [&](uh_value *v, Napi::Value *out) {
		int rc;

		v->type = type;
		if ((rc = uh_get_ref(h, ref, idx, &v->u.ref)) != 0) {
			*out = raise(env, rc, what);
			return DONE;
		}
		return FOUND;
	});
}

/* setStr(off, gen, idx, type, string | Buffer | null, what). A string or
 * bytes field owns its value object: replacing it frees the old one in
 * the same step. */
Napi::Value Session::SetStr(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t idx = info[2].As<Napi::Number>().Uint32Value();
	int32_t type = info[3].As<Napi::Number>().Int32Value();
	uh_off ref, old = 0;
	Stored val;

	if (!open(env) || !arg_ref(info, 0, &ref) || !to_value(env, info[4], type, 0, &val))
		return env.Undefined();
	Step st(h);
	int rc = st.begin();
	if (rc == 0)
		rc = uh_get_ref(h, ref, idx, &old);
	if (rc == 0)
		rc = alloc_value(h, &val);
	if (rc == 0)
		rc = uh_set_ref(h, ref, idx, val.v.u.ref);
	if (rc == 0 && old && old != val.v.u.ref)
		rc = uh_free(h, old);
	if (st.end(rc) != 0)
		return raise(env, st.failure(), what_of(info, 5));
	return env.Undefined();
}

/* An inline string or bytes value (FORMAT.md 3.2) from its field's bytes
 * at p (length word, then the value): a string or a Buffer (a copy). */
static Napi::Value inline_value(Napi::Env env, const uint8_t *p, uint32_t type, uint32_t cap)
{
	uint32_t n;

	memcpy(&n, p, UH_INLINE_LEN_SIZE);
	if (n > cap)
		return raise_msg(env, UH_EINTERNAL, "an inline field holds more than its capacity");
	const char *data = (const char *)p + UH_INLINE_LEN_SIZE;
	if (type == UH_T_ISTRING)
		return Napi::String::New(env, data, n);
	return Napi::Buffer<uint8_t>::Copy(env, (const uint8_t *)data, n);
}

/* getInline(off, gen, idx, type, capacity, what) -> string or Buffer: an
 * inline field's value as of one instant (uh_get_inline). */
Napi::Value Session::GetInline(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t idx = info[2].As<Napi::Number>().Uint32Value();
	uint32_t type = info[3].As<Napi::Number>().Uint32Value();
	uint32_t cap = info[4].As<Napi::Number>().Uint32Value();
	uh_off ref;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	std::vector<uint8_t> buf(UH_INLINE_LEN_SIZE + (size_t)cap);
	size_t n = 0;
	int rc = uh_get_inline(h, ref, idx, buf.data() + UH_INLINE_LEN_SIZE, cap, &n);
	if (rc)
		return raise(env, rc, what_of(info, 5));
	uint32_t n32 = (uint32_t)n;
	memcpy(buf.data(), &n32, UH_INLINE_LEN_SIZE);
	return inline_value(env, buf.data(), type, cap);
}

/* setInline(off, gen, idx, type, string | Uint8Array, what): the value
 * written in place (uh_set_inline, which refuses one longer than the
 * capacity, naming field, capacity and length). */
Napi::Value Session::SetInline(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t idx = info[2].As<Napi::Number>().Uint32Value();
	uh_off ref;
	std::string s;
	const void *data;
	size_t len;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	if (info[4].IsString()) {
		s = info[4].As<Napi::String>().Utf8Value();
		data = s.data();
		len = s.size();
	} else {
		Napi::Uint8Array a = info[4].As<Napi::Uint8Array>();
		data = a.Data();
		len = a.ByteLength();
	}
	int rc = uh_set_inline(h, ref, idx, data, len);
	if (rc)
		return raise(env, rc, what_of(info, 5));
	return env.Undefined();
}

/* The field of type `type` at p (a copy of the object's bytes) as the
 * uh_get_* call of its type would give it. */
static uh_value field_at(const uint8_t *p, uint32_t type)
{
	union { int8_t i8; int16_t i16; int32_t i32; int64_t i64; float f32; double f64;
		uint64_t ref; } x;
	uh_value v{};

	v.type = type;
	switch (type) {
	case UH_T_BOOL: v.u.i = *p != 0; break;
	case UH_T_I8: memcpy(&x.i8, p, 1); v.u.i = x.i8; break;
	case UH_T_I16: memcpy(&x.i16, p, 2); v.u.i = x.i16; break;
	case UH_T_I32: memcpy(&x.i32, p, 4); v.u.i = x.i32; break;
	case UH_T_I64: memcpy(&x.i64, p, 8); v.u.i = x.i64; break;
	case UH_T_F32: memcpy(&x.f32, p, 4); v.u.f = x.f32; break;
	case UH_T_F64: memcpy(&x.f64, p, 8); v.u.f = x.f64; break;
	default: memcpy(&x.ref, p, 8); v.u.ref = x.ref; break;	/* ref, string, bytes */
	}
	return v;
}

/* Value v of a field read by readFields, not a string or bytes value
 * (those are copied by uh_copy_values), in *out: a reference to an object
 * as ref_triple gives it (the scratch words describe one value, and there
 * are several); anything else as read_value gives it. */
static Read field_value(Napi::Env env, uh_heap *h, const uh_value &v, Napi::Value *out)
{
	uint32_t *scr = data(env)->scratch;

	Read r = read_value(env, h, v, false, out);
	if (r == COPIED && v.type == UH_T_REF && scr[SCR_IS_REF] == 1) {
		scr[SCR_IS_REF] = 0;
		*out = ref_triple(env, v.u.ref, scr[SCR_CLASS]);
	}
	return r;
}

static const uint32_t FIELD_SIZE[] = { 0, 1, 1, 2, 4, 8, 4, 8, 8, 8, 8 };

/* A span's type word: the field type in bits 0..7, an inline field's
 * capacity in bits 8..31. */
static uint32_t span_type(int32_t w)
{
	return (uint32_t)w & 0xff;
}

static uint32_t span_cap(int32_t w)
{
	return (uint32_t)w >> 8;
}

static bool is_inline(uint32_t t)
{
	return t == UH_T_ISTRING || t == UH_T_IBYTES;
}

static int32_t span_size(int32_t w)
{
	uint32_t t = span_type(w);
	return (int32_t)(is_inline(t) ? UH_INLINE_LEN_SIZE + span_cap(w) : FIELD_SIZE[t]);
}

/* True when span (see readFields) is whole: lo and hi 8-byte aligned,
 * every field of a known type inside [lo, hi). The JS side makes it; a
 * bad one would read past the copy. */
static bool span_ok(const int32_t *s, size_t words)
{
	if (words < 2 || words % 2 || s[0] < 0 || s[0] % 8 || s[1] <= s[0] || s[1] % 8)
		return false;
	for (size_t i = 2; i < words; i += 2) {	/* bound: words */
		uint32_t t = span_type(s[i]);
		if (t < UH_T_BOOL || t > UH_T_IBYTES || (!is_inline(t) && span_cap(s[i])) ||
		    (is_inline(t) && span_cap(s[i]) > UH_INLINE_MAX) || s[i + 1] < s[0] ||
		    s[i + 1] + span_size(s[i]) > s[1])
			return false;
	}
	return true;
}

/* readFields(off, gen, span, what) -> [value0, value1, ...]: every field
 * of the object as of one instant. ONE uh_read copies the bytes the fields
 * span, and libuniheap makes that copy one instant (outside a block one
 * optimistic read of the object, inside one the block's snapshot and its
 * own writes); the fields are then decoded from the copy, values as
 * field_value gives them. A string or bytes value replaced (freed) under
 * its copy outside a block makes the whole read start again
 * (uh_copy_values): its field and every other field are then read at the
 * later instant. A bytes field's value that fits the rest of the bytes
 * buffer is copied there, as its length alone (the JS side finds each at
 * the sum of the lengths before it: a number is cheaper to make than
 * [at, length]). span (an Int32Array the JS side keeps per class): lo and
 * hi, the 8-byte aligned bytes [lo, hi) of the payload to read, then each
 * field's type and offset. `what` (the class name) names the object in errors. */
Napi::Value Session::ReadFields(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	if (!info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
		return type_error(env, "readFields: span must be an Int32Array");
	Napi::Int32Array span = info[2].As<Napi::Int32Array>();
	const int32_t *s = span.Data();
	size_t words = span.ElementLength();
	if (!span_ok(s, words))
		return raise_msg(env, UH_EINVAL, "readFields: not a field span");
	std::string what = "the fields of " + what_of(info, 3);
	uint32_t lo = (uint32_t)s[0], len = (uint32_t)(s[1] - s[0]);
	uint8_t stack[2048];
	std::vector<uint8_t> heap_buf(len > sizeof(stack) ? len : 0);
	uint8_t *buf = len > sizeof(stack) ? heap_buf.data() : stack;

	uint32_t n = (uint32_t)(words / 2 - 1);
	std::vector<uh_value> vals(n);
	std::vector<Napi::Value> copies(n);
	Copier c(env, Copier::IN_BUF, copies.data());

	c.span = s;
	int rc = copy_values(h, [&](uh_value *vs, uint32_t *got) {
		int rc2 = uh_read(h, ref, lo, buf, len);
		for (uint32_t i = 0; i < n && !rc2; i++) {	/* bound: the fields */
			uint32_t t = span_type(s[2 + 2 * i]);
			if (is_inline(t)) {	/* decoded from buf below: no value to copy */
				vs[i] = uh_value{};
				continue;
			}
			vs[i] = field_at(buf + (s[2 + 2 * i + 1] - s[0]), t);
			rc2 = ref_as_copied(h, &vs[i]);
		}
		*got = n;
		return rc2;
	}, &c, vals.data(), n);
	if (rc)
		return raise(env, rc, what);
	Napi::Array out = Napi::Array::New(env, n);
	for (uint32_t i = 0; i < n; i++) {	/* bound: the fields */
		Napi::Value v = copies[i];
		uint32_t t = span_type(s[2 + 2 * i]);
		if (is_inline(t)) {	/* inside the one copy of the object */
			v = inline_value(env, buf + (s[2 + 2 * i + 1] - s[0]), t, span_cap(s[2 + 2 * i]));
			if (env.IsExceptionPending())
				return env.Undefined();
			out.Set(i, v);
			continue;
		}
		if ((vals[i].type != UH_T_STRING && vals[i].type != UH_T_BYTES) || !vals[i].u.ref) {
			/* No string or bytes value: nothing to copy, nothing changes. */
			if (field_value(env, h, vals[i], &v) != COPIED)
				return env.Undefined();
		}
		out.Set(i, v);
	}
	return out;
}

/* stringAt(off, gen, type, viaBuf) -> the string or Buffer value of a
 * string or bytes object (viaBuf: bytes may come through the bytes buffer) */
Napi::Value Session::StringAt(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	return string_at(env, h, ref, info[2].As<Napi::Number>().Uint32Value(),
			 info[3].ToBoolean());
}

}  // namespace uhn
