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
