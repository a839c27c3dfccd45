/*
 * collections.cc -- hash maps, sorted maps, lists and arrays. Each method
 * is one libuniheap data-type call, atomic on its own or joining the
 * caller's block; a value that needs a new string/bytes object is made
 * inside the same step, so a failure leaves nothing behind.
 *
 * String and bytes values belong to the slot holding them: a put, set,
 * remove or pop that replaces one frees it (UH_FREE_OLD_VALUE). A hash
 * map keeps one of up to UH_MAP_INLINE_MAX bytes in the key's entry,
 * which such a put or remove frees instead.
 *
 * Arguments: (off, gen) name the collection; `sorted` picks the sorted-map
 * call over the hash-map one, `isArray` the array call over the list one;
 * a value is (value, hint, gen) as values.cc's to_value() takes it.
 */
#include "session.h"

#include <cstring>

namespace uhn {

#define OWNED UH_FREE_OLD_VALUE

/* One data-type call of a value: made in a step when the value must be
 * allocated first. Returns 0 or a pending exception's code. */
template <typename Fn>
static int store(Napi::Env env, uh_heap *h, Stored &val, const char *what, Fn fn)
{
	int rc;

	if (!val.needs_alloc) {
		if ((rc = fn(&val.v)) != 0)
			raise(env, rc, what);
		return rc;
	}
	Step st(h);
	rc = st.begin();
	if (rc == 0)
		rc = alloc_value(h, &val);
	if (rc == 0)
		rc = fn(&val.v);
	if ((rc = st.end(rc)) != 0)
		raise(env, st.failure(), what);
	return rc;
}

static bool arg_value(const Napi::CallbackInfo &info, size_t i, Stored *out)
{
	return to_value(info.Env(), info[i], info[i + 1].As<Napi::Number>().Int32Value(),
			info[i + 2].As<Napi::Number>().Uint32Value(), out);
}

/* ---- maps ---- */

/* mapNew(keyKind, sorted) -> offset (generation and class in scratch) */
Napi::Value Session::MapNew(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t kind = info[0].As<Napi::Number>().Uint32Value();
	bool sorted = info[1].ToBoolean();
	uh_off off;
	int rc;

	if (!open(env))
		return env.Undefined();
	rc = sorted ? uh_smap_new(h, kind, &off) : uh_map_new(h, kind, &off);
	if (rc)
		return raise(env, rc, sorted ? "new sorted map" : "new map");
	return ref_value(env, off, sorted ? UH_CLASS_SMAP : UH_CLASS_MAP);
}

/* mapKeyKind(off, gen, sorted) -> UH_KEY_* */
Napi::Value Session::MapKeyKind(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off m;
	uint32_t kind;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &m))
		return env.Undefined();
	rc = info[2].ToBoolean() ? uh_smap_key_kind(h, m, &kind) : uh_map_key_kind(h, m, &kind);
	if (rc)
		return raise(env, rc, "map");
	return Napi::Number::New(env, kind);
}

Napi::Value Session::MapLen(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off m;
	uint64_t n;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &m))
		return env.Undefined();
	rc = info[2].ToBoolean() ? uh_smap_len(h, m, &n) : uh_map_len(h, m, &n);
	if (rc)
		return raise(env, rc, "map size");
	return Napi::Number::New(env, (double)n);
}

/* Look the key up (arguments off, gen, sorted, kind, key) with
 * uh_map_get() or uh_smap_get() on heap h (NULL: not open, an exception
 * is pending). True with *v when the key is there; else false and *out
 * the answer: undefined for a missing key, or with an exception pending
 * (bad arguments, a failed call named by what). */
static bool map_lookup(const Napi::CallbackInfo &info, uh_heap *h, const char *what, uh_value *v,
		       Napi::Value *out)
{
	Napi::Env env = info.Env();
	uh_off m;
	Key k;
	int rc;

	*out = env.Undefined();
	if (!h || !arg_ref(info, 0, &m) ||
	    !to_key(env, info[3].As<Napi::Number>().Uint32Value(), info[4], &k))
		return false;
	rc = info[2].ToBoolean() ? uh_smap_get(h, m, &k.k, v) : uh_map_get(h, m, &k.k, v);
	if (rc && rc != UH_ENOTFOUND)
		*out = raise(env, rc, what);
	return rc == 0;
}

/* The value of key k in map m as JS, looked up again while a string or
 * bytes value found changes under the copy (read_again); undefined when
 * the key is missing. */
static Napi::Value map_get(Napi::Env env, uh_heap *h, uh_off m, bool sorted, const uh_key &k,
			   bool via_buf)
{
	return read_again(env, h, "map get", via_buf, [&](uh_value *v, Napi::Value *out) {
		int rc = sorted ? uh_smap_get(h, m, &k, v) : uh_map_get(h, m, &k, v);

		if (rc == 0)
			return FOUND;
		*out = rc == UH_ENOTFOUND ? env.Undefined() : raise(env, rc, "map get");
		return DONE;
	});
}

/* mapGet(off, gen, sorted, kind, key, viaBuf) -> the value, or undefined
 * (viaBuf: a bytes value may come through the bytes buffer) */
Napi::Value Session::MapGet(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off m;
	Key k;

	if (!open(env) || !arg_ref(info, 0, &m) ||
	    !to_key(env, info[3].As<Napi::Number>().Uint32Value(), info[4], &k))
		return env.Undefined();
	return map_get(env, h, m, info[2].ToBoolean(), k.k, info[5].ToBoolean());
}

/* The value of an entry a scan gave, as JS, in *out: a value read(out)
 * finds changed (another session replaced it since the scan read the
 * entry) is looked up again by its key, as a get would, and the entry
 * skipped (false) if the key has been removed since. False with an
 * exception pending when the read fails. */
template <typename ReadFn>
static bool entry_value(Napi::Env env, uh_heap *h, uh_off m, bool sorted, const uh_key &key,
			Napi::Value *out, ReadFn read)
{
	Read r = read(out);

	if (r == COPIED)
		return true;
	if (r == FAILED)
		return false;
	/* The key's bytes may lie in the mapping, under a node the writer
	 * may change: the lookup takes a copy of its own. */
	Key k;
	if (key.data)
		k.bytes.assign((const char *)key.data, key.len);
	k.k = key;
	k.k.data = k.bytes.data();
	*out = map_get(env, h, m, sorted, k.k, false);
	return !env.IsExceptionPending() && !out->IsUndefined();
}

/* The type of a value that is not bytes, for an error message. */
static std::string value_type_name(uh_heap *h, const uh_value &v, uint32_t cls)
{
	uh_class_info ci;

	if (v.type >= UH_T_REF && v.u.ref == 0)
		return "null";
	if (is_string_type(v.type))	/* a string, wherever it is kept */
		return "string";
	if (v.type != UH_T_REF)
		return uh_type_name(v.type);
	if (cls == UH_CLASS_STRING)
		return "string";
	if (uh_class_info_get(h, cls, &ci) == 0)
		return std::string("an object of class ") + ci.name;
	return "ref";
}

/* mapView(off, gen, sorted, kind, key) -> [payload offset, length, object
 * offset, generation, class]: where the bytes of a bytes value lie in the
 * mapping (uh_value_bytes(); lib/views.js makes the view of them), and the
 * object holding them: a bytes object, or the entry in which a hash map
 * keeps a short value (its class, for the view's liveness check).
 * undefined when the key is missing. A TypeError names the value's type
 * when it is not bytes (a reference to a bytes object counts as bytes, as
 * in get). */
Napi::Value Session::MapView(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	Napi::Value out;
	uh_value v;
	uint32_t cls = 0, holder;
	const void *p;
	size_t len;
	int rc;

	if (!map_lookup(info, open(env), "map view", &v, &out))
		return out;
	if (v.type == UH_T_REF && v.u.ref && (rc = uh_obj_class(h, v.u.ref, &cls)) != 0)
		return raise(env, rc, "map view");
	if (v.type == UH_T_REF && cls == UH_CLASS_BYTES)
		v.type = UH_T_BYTES;
	if (!((v.type == UH_T_BYTES && v.u.ref) || v.type == UH_T_IBYTES))
		return type_error(env, "view(): the value is not bytes but " +
					       value_type_name(h, v, cls));
	if ((rc = uh_value_bytes(h, &v, &p, &len)) != 0 ||
	    (rc = uh_obj_class(h, v.u.ref, &holder)) != 0)
		return raise(env, rc, "map view");
	Napi::Array where = Napi::Array::New(env, 5);
	where.Set(0u, Napi::Number::New(env, (double)((const char *)p - (const char *)uh_base(h))));
	where.Set(1u, Napi::Number::New(env, (double)len));
	where.Set(2u, Napi::Number::New(env, (double)UH_REF_OFFSET(v.u.ref)));
	where.Set(3u, Napi::Number::New(env, UH_REF_GEN(v.u.ref)));
	where.Set(4u, Napi::Number::New(env, holder));
	return where;
}

/* mapPut(off, gen, sorted, kind, key, value, hint, valueGen). A string
 * or bytes value goes to a hash map as its bytes, in one uh_map_put_bytes:
 * libuniheap keeps a short one in the key's entry and makes the object of
 * a longer one itself, in the same step. Sorted maps take an object. */
Napi::Value Session::MapPut(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	bool sorted = info[2].ToBoolean();
	uh_off m;
	Key k;
	Stored val;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &m) ||
	    !to_key(env, info[3].As<Napi::Number>().Uint32Value(), info[4], &k) ||
	    !arg_value(info, 5, &val))
		return env.Undefined();
	if (!sorted && val.needs_alloc) {
		rc = uh_map_put_bytes(h, m, &k.k, val.v.type, val.data.data(), val.data.size(), OWNED);
		return rc ? raise(env, rc, "map set") : env.Undefined();
	}
	store(env, h, val, "map set", [&](const uh_value *v) {
		return sorted ? uh_smap_put(h, m, &k.k, v, OWNED) : uh_map_put(h, m, &k.k, v, OWNED);
	});
	return env.Undefined();
}

/* mapRemove(off, gen, sorted, kind, key, wantOld) -> whether key was
 * there; with wantOld, the removed value (read before the step frees it),
 * or undefined when absent */
Napi::Value Session::MapRemove(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	bool sorted = info[2].ToBoolean(), want = info[5].ToBoolean();
	uh_off m;
	uh_value old;
	Key k;

	if (!open(env) || !arg_ref(info, 0, &m) ||
	    !to_key(env, info[3].As<Napi::Number>().Uint32Value(), info[4], &k))
		return env.Undefined();
	Step st(h);
	Napi::Value r = Napi::Boolean::New(env, true);
	int rc = st.begin();
	if (rc == 0)
		rc = sorted ? uh_smap_remove(h, m, &k.k, &old, OWNED)
			    : uh_map_remove(h, m, &k.k, &old, OWNED);
	if (rc == 0 && want) {
		r = from_value(env, h, old);
		if (env.IsExceptionPending())
			rc = UH_EINVAL;
	}
	rc = st.end(rc);
	if (env.IsExceptionPending())
		return env.Undefined();
	if (rc == UH_ENOTFOUND)
		return want ? env.Undefined() : Napi::Boolean::New(env, false);
	if (rc)
		return raise(env, st.failure(), "map delete");
	return r;
}

Napi::Value Session::MapCheck(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off m;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &m))
		return env.Undefined();
	rc = info[2].ToBoolean() ? uh_smap_check(h, m) : uh_map_check(h, m);
	if (rc)
		return raise(env, rc, "map check");
	return env.Undefined();
}

/* mapIter(off, gen, sorted, kind, from, reverse) -> an iteration state
 * (an ArrayBuffer holding a uh_iter). A hash map starts from a zeroed
 * state; a sorted map from a scan at `from` (undefined: from the first or,
 * reverse, the last key). */
Napi::Value Session::MapIter(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	bool sorted = info[2].ToBoolean();
	uh_off m;
	Key k;
	bool from = !info[4].IsUndefined();

	if (!open(env) || !arg_ref(info, 0, &m))
		return env.Undefined();
	if (from && !to_key(env, info[3].As<Napi::Number>().Uint32Value(), info[4], &k))
		return env.Undefined();
	Napi::ArrayBuffer state = Napi::ArrayBuffer::New(env, sizeof(uh_iter));
	uh_iter *it = (uh_iter *)state.Data();
	memset(it, 0, sizeof(*it));
	if (sorted) {
		int rc = uh_smap_scan(h, m, from ? &k.k : nullptr,
				      info[5].ToBoolean() ? UH_SCAN_REVERSE : 0, it);
		if (rc)
			return raise(env, rc, "scan");
	}
	return state;
}

/* The uh_iter of an iteration state mapIter made, or NULL with a
 * TypeError pending. */
static uh_iter *iter_state(Napi::Env env, Napi::Value v)
{
	if (!v.IsArrayBuffer() || v.As<Napi::ArrayBuffer>().ByteLength() != sizeof(uh_iter)) {
		type_error(env, "not an iteration state");
		return nullptr;
	}
	return (uh_iter *)v.As<Napi::ArrayBuffer>().Data();
}

/* The value v of an entry a step read, as JS in *out. CHANGED (outside
 * a block) when a string or bytes value, or a reference's target, was
 * freed since the step read it: a reference's target replaced and freed
 * by another session, or dangling; the lookup of its key (entry_value)
 * tells which, raising for a dangling one. */
static Read entry_read(Napi::Env env, uh_heap *h, const uh_value &v, Napi::Value *out)
{
	uint32_t cls;
	int rc;

	if (v.type == UH_T_REF && v.u.ref && (rc = uh_obj_class(h, v.u.ref, &cls)) != 0)
		return changed_or_raise(env, h, rc, "reference");
	return read_value(env, h, v, false, out);
}

static Napi::Value entry_pair(Napi::Env env, Napi::Value key, Napi::Value val)
{
	Napi::Array kv = Napi::Array::New(env, 2);

	kv.Set(0u, key);
	kv.Set(1u, val);
	return kv;
}

/* The next entry of an iteration (one step) as [key, value], or null at
 * the end; a value changed under its copy is looked up by its key
 * (entry_value), the entry skipped when the key is gone. The key the step
 * gave is still good for that lookup on a hash map too, although a
 * remove, and a put that stores or replaces an inline value, free the
 * key's whole entry: uh_map_next hands out a copy of the key, in a buffer
 * of this thread kept until its next call. The step after neither
 * repeats a key whose value was replaced nor skips the entry after a
 * removed one: uh_map_next finds its place again by itself. */
static Napi::Value map_next(Napi::Env env, uh_heap *h, uh_off m, bool sorted, uh_iter *it)
{
	uh_key k;
	uh_value v;
	int rc;

	for (;;) {	/* bound: the map's entries (each skipped one was removed) */
		rc = sorted ? uh_smap_next(h, m, it, &k, &v) : uh_map_next(h, m, it, &k, &v);
		if (rc == UH_ENOTFOUND)
			return env.Null();
		if (rc)
			return raise(env, rc, "map iteration");
		Napi::Value key = from_key(env, k), val;
		if (entry_value(env, h, m, sorted, k, &val, [&](Napi::Value *out) {
			    return entry_read(env, h, v, out);
		    }))
			return entry_pair(env, key, val);
		if (env.IsExceptionPending())
			return env.Undefined();
	}
}

/* iterNext(off, gen, sorted, state) -> [key, value], or null at the end */
Napi::Value Session::IterNext(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off m;
	uh_iter *it;

	if (!open(env) || !arg_ref(info, 0, &m) || !(it = iter_state(env, info[3])))
		return env.Undefined();
	return map_next(env, h, m, info[2].ToBoolean(), it);
}

/* Entries a sorted-map batch gives at most (lib/collections.js asks for
 * 4 first, then twice as many each call up to this). */
static const uint32_t ITER_BATCH_MAX = 32;

/* Value v of a batch entry (IterNextN) in *out, self-contained since the
 * scratch words describe one value only: a reference to an object and a
 * bytes value as ref_triple and bytes_batched give them; any other value
 * as read_value gives it. CHANGED as read_value. */
static Read batch_value(Napi::Env env, uh_heap *h, const uh_value &v, size_t *at, Napi::Value *out)
{
	uh_off ref = v.u.ref;
	uint32_t type = v.type, cls;
	int rc;

	if ((type != UH_T_REF && type != UH_T_BYTES) || ref == 0)
		return read_value(env, h, v, false, out);
	/* Freed since the scan read the entry: the entry's own bytes value
	 * replaced, or a reference's target replaced and freed by another
	 * session, or a dangling reference; the lookup of the key tells. */
	if ((rc = uh_obj_class(h, ref, &cls)) != 0)
		return changed_or_raise(env, h, rc, type == UH_T_BYTES ? "bytes" : "reference");
	if (type == UH_T_REF && cls != UH_CLASS_STRING && cls != UH_CLASS_BYTES) {
		*out = ref_triple(env, ref, cls);
		return COPIED;
	}
	if (cls != UH_CLASS_BYTES)
		return read_value(env, h, v, false, out);	/* a string */
	return bytes_batched(env, h, ref, at, out);
}

/* iterNextN(off, gen, state, max, kind, to) -> [key0, value0, key1,
 * value1, ...] of a sorted-map scan (uh_smap_next_n: at most max entries,
 * from one leaf read at one instant; keys copied out during the call;
 * values as batch_value gives them), or null at the end. to (a key of
 * kind, optional): the exclusive end of the scan, which libuniheap
 * applies (uh_smap_next_until), so keys are never compared here. */
Napi::Value Session::IterNextN(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_key keys[ITER_BATCH_MAX];
	uh_value vals[ITER_BATCH_MAX];
	uint32_t max = info[3].As<Napi::Number>().Uint32Value(), n = 0;
	bool bounded = info.Length() > 5 && !info[5].IsUndefined();
	uh_off m;
	uh_iter *it;
	Key to;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &m) || !(it = iter_state(env, info[2])))
		return env.Undefined();
	if (max < 1 || max > ITER_BATCH_MAX)
		return type_error(env, "a batch is 1 to 32 entries");
	if (bounded && !to_key(env, info[4].As<Napi::Number>().Uint32Value(), info[5], &to))
		return env.Undefined();
	rc = uh_smap_next_until(h, m, it, bounded ? &to.k : nullptr, 0, keys, vals, max, &n);
	if (rc == UH_ENOTFOUND)
		return env.Null();
	if (rc)
		return raise(env, rc, "map iteration");
	Napi::Array kv = Napi::Array::New(env, 0);
	size_t at = 0;
	uint32_t j = 0;
	for (uint32_t i = 0; i < n; i++) {	/* bound: ITER_BATCH_MAX */
		Napi::Value val;
		if (!entry_value(env, h, m, true, keys[i], &val, [&](Napi::Value *out) {
			    return batch_value(env, h, vals[i], &at, out);
		    })) {
			if (env.IsExceptionPending())
				return env.Undefined();
			continue;	/* removed since the batch was read */
		}
		kv.Set(j++, from_key(env, keys[i]));
		kv.Set(j++, val);
	}
	return kv;
}

/* ---- lists and arrays ---- */

Napi::Value Session::ListNew(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off off;
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_list_new(h, &off)) != 0)
		return raise(env, rc, "new list");
	return ref_value(env, off, UH_CLASS_LIST);
}

/* seqLen(off, gen, isArray) */
Napi::Value Session::SeqLen(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off s;
	uint64_t n;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &s))
		return env.Undefined();
	rc = info[2].ToBoolean() ? uh_array_len(h, s, &n) : uh_list_len(h, s, &n);
	if (rc)
		return raise(env, rc, "length");
	return Napi::Number::New(env, (double)n);
}

/* seqGet(off, gen, isArray, index) -> the value; undefined past the end */
Napi::Value Session::SeqGet(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint64_t i = (uint64_t)info[3].As<Napi::Number>().Int64Value();
	uh_off s;

	if (!open(env) || !arg_ref(info, 0, &s))
		return env.Undefined();
	bool array = info[2].ToBoolean();
	return read_again(env, h, "get", false, [&](uh_value *v, Napi::Value *out) {
		int rc = array ? uh_array_get(h, s, i, v) : uh_list_get(h, s, i, v);

		if (rc == 0)
			return FOUND;
		*out = rc == UH_ERANGE ? env.Undefined() : raise(env, rc, "get");
		return DONE;
	});
}

/* seqSet(off, gen, isArray, index, value, hint, valueGen) */
Napi::Value Session::SeqSet(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	bool array = info[2].ToBoolean();
	uint64_t i = (uint64_t)info[3].As<Napi::Number>().Int64Value();
	uh_off s;
	Stored val;

	if (!open(env) || !arg_ref(info, 0, &s) || !arg_value(info, 4, &val))
		return env.Undefined();
	store(env, h, val, "set", [&](const uh_value *v) {
		return array ? uh_array_set(h, s, i, v, OWNED) : uh_list_set(h, s, i, v, OWNED);
	});
	return env.Undefined();
}

/* listInsert(off, gen, index, value, hint, valueGen): index -1 appends */
Napi::Value Session::ListInsert(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	int64_t i = info[2].As<Napi::Number>().Int64Value();
	uh_off l;
	Stored val;

	if (!open(env) || !arg_ref(info, 0, &l) || !arg_value(info, 3, &val))
		return env.Undefined();
	store(env, h, val, i < 0 ? "push" : "insert", [&](const uh_value *v) {
		return i < 0 ? uh_list_append(h, l, v) : uh_list_insert(h, l, (uint64_t)i, v);
	});
	return env.Undefined();
}

/* listPop(off, gen, index) -> the removed value (read before the step
 * frees a string/bytes value) */
Napi::Value Session::ListPop(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint64_t i = (uint64_t)info[2].As<Napi::Number>().Int64Value();
	uh_off l;
	uh_value old;

	if (!open(env) || !arg_ref(info, 0, &l))
		return env.Undefined();
	Step st(h);
	Napi::Value r = env.Undefined();
	int rc = st.begin();
	if (rc == 0)
		rc = uh_list_pop(h, l, i, &old, OWNED);
	if (rc == 0) {
		r = from_value(env, h, old);
		if (env.IsExceptionPending())
			rc = UH_EINVAL;
	}
	rc = st.end(rc);
	if (env.IsExceptionPending())
		return env.Undefined();
	if (rc)
		return raise(env, st.failure(), "pop");
	return r;
}

/* arrayNew(elemType, length) -> offset */
Napi::Value Session::ArrayNew(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t type = info[0].As<Napi::Number>().Uint32Value();
	uint64_t len = (uint64_t)info[1].As<Napi::Number>().Int64Value();
	uh_off off;
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_array_new(h, type, len, &off)) != 0)
		return raise(env, rc, "new array");
	return ref_value(env, off, UH_CLASS_ARRAY);
}

Napi::Value Session::ArrayElemType(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off a;
	uint32_t t;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &a))
		return env.Undefined();
	if ((rc = uh_array_elem_type(h, a, &t)) != 0)
		return raise(env, rc, "array");
	return Napi::Number::New(env, t);
}

}  // namespace uhn
