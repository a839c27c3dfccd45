/*
 * records.cc -- a record stored under a map key, in one call each: its
 * whole payload read (uh_map_get_record / uh_smap_get_record), one inline
 * field of it written (uh_map_set_inline / uh_smap_set_inline), and the
 * records of a sorted-map range read (uh_smap_next_n, then one copy per
 * record). No proxy of the record is made and no JS value per field here:
 * payloads go to the bytes buffer, and lib/records.js decodes them with
 * the class's field offsets (the payload is laid out as FORMAT.md 3.2
 * says, the same in every language). And a new record stored under a key
 * (uh_smap_put_record / uh_map_put_record).
 *
 * Arguments: (off, gen) name the map, `sorted` picks the sorted-map call,
 * kind and key are the key as to_key() takes it.
 */
#include "session.h"

#include <cstring>

namespace uhn {

/* The key (kind info[ki], value info[ki + 1]) and the map (info[0..1]);
 * false with an exception pending. */
static bool map_and_key(const Napi::CallbackInfo &info, size_t ki, uh_off *m, Key *k)
{
	return arg_ref(info, 0, m) &&
	       to_key(info.Env(), info[ki].As<Napi::Number>().Uint32Value(), info[ki + 1], k);
}

/* mapGetRecord(off, gen, sorted, kind, key[, dst, at]) -> the length of
 * the record's payload, copied to the start of the bytes buffer, or with
 * dst (an ArrayBuffer) to dst at byte at, with the record's class id in
 * scratch[SCR_CLASS]; undefined when the key is missing; -1 when the
 * payload is larger than the room there (the JS side reads such a record
 * through its proxy). TypeMismatchError when the value is not a record.
 * dst lets lib/records.js copy a record straight into the memory its
 * values are returned in, rather than into the bytes buffer and then
 * again into a new Buffer. */
Napi::Value Session::MapGetRecord(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	AddonData *ad = data(env);
	uint8_t *dst = ad->bytes;
	size_t cap = BYTES_BUF_SIZE;
	uh_off m;
	Key k;
	size_t len = 0;
	uint32_t cls = 0;

	if (!open(env) || !map_and_key(info, 3, &m, &k))
		return env.Undefined();
	if (info.Length() > 6 && info[5].IsArrayBuffer()) {
		Napi::ArrayBuffer b = info[5].As<Napi::ArrayBuffer>();
		double at = info[6].As<Napi::Number>().DoubleValue();
		if (!(at >= 0 && at <= (double)b.ByteLength()))
			return type_error(env, "mapGetRecord: the offset is outside the buffer");
		dst = (uint8_t *)b.Data() + (size_t)at;
		cap = b.ByteLength() - (size_t)at;
	}
	int rc = info[2].ToBoolean()
		? uh_smap_get_record(h, m, &k.k, dst, cap, &len, &cls)
		: uh_map_get_record(h, m, &k.k, dst, cap, &len, &cls);
	if (rc == UH_ENOTFOUND)
		return env.Undefined();
	if (rc == UH_ERANGE)
		return Napi::Number::New(env, -1);
	if (rc)
		return raise(env, rc, "map get fields");
	ad->scratch[SCR_CLASS] = cls;
	return Napi::Number::New(env, (double)len);
}

/* A field name argument as a C string in buf (names are at most 63 bytes
 * of [A-Za-z0-9_]; a longer one is cut, and then matches no field). */
static bool field_name(Napi::Env env, Napi::Value v, char *buf, size_t size)
{
	size_t n;

	if (!v.IsString()) {
		type_error(env, "setField: the field name must be a string");
		return false;
	}
	napi_get_value_string_utf8(env, v, buf, size, &n);
	return true;
}

/* mapSetField(off, gen, sorted, kind, key, field, value) -> true, or
 * false when the key is missing (nothing written). value: a string or a
 * Uint8Array, as the inline field's type wants (libuniheap checks it and
 * the capacity). In the caller's block, else atomic and durable alone. */
Napi::Value Session::MapSetField(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	char name[128];
	std::string s;
	const void *p;
	size_t len;
	uh_off m;
	Key k;

	if (!open(env) || !map_and_key(info, 3, &m, &k) || !field_name(env, info[5], name, sizeof name))
		return env.Undefined();
	if (info[6].IsString()) {
		s = info[6].As<Napi::String>().Utf8Value();
		p = s.data();
		len = s.size();
	} else if (info[6].IsTypedArray() &&
		   info[6].As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
		Napi::Uint8Array a = info[6].As<Napi::Uint8Array>();
		p = a.Data();
		len = a.ByteLength();
	} else {
		return type_error(env, std::string("setField: the value of '") + name +
				       "' must be a string or a Buffer/Uint8Array");
	}
	int rc = info[2].ToBoolean() ? uh_smap_set_inline(h, m, &k.k, name, p, len)
				     : uh_map_set_inline(h, m, &k.k, name, p, len);
	if (rc == UH_ENOTFOUND)
		return Napi::Boolean::New(env, false);
	if (rc)
		return raise(env, rc, std::string("setField '") + name + "'");
	return Napi::Boolean::New(env, true);
}

/* Records a rangeRecords call returns at most: 32 YCSB records (1 KiB
 * each) fit the bytes buffer many times over. */
static const uint32_t RANGE_MAX = 32;

/* rangeRecords(off, gen, state, max, kind, to) -> [key0, length0, class0,
 * key1, ...]: the next entries of a sorted-map scan that mapIter started
 * (at most max, up to the exclusive bound `to` when given, which
 * libuniheap applies), each record's payload copied into the bytes buffer
 * one after the other at 8-byte aligned offsets, in order; null at the
 * end. A payload that does not fit the rest of the buffer has length -1
 * (the JS side reads that record by its key). Entries come from one leaf
 * at a time (uh_smap_next_records), each record copied at its own instant
 * (in a block: the block's snapshot); outside a block, a record replaced
 * since its entry was read is the key's record now, and one removed since
 * is left out. */
Napi::Value Session::RangeRecords(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	AddonData *ad = data(env);
	uint32_t max = info[3].As<Napi::Number>().Uint32Value();
	bool bounded = info.Length() > 5 && !info[5].IsUndefined();
	uh_scan_record recs[RANGE_MAX];
	uh_off m;
	uh_iter *it;
	Key to;

	if (!open(env) || !arg_ref(info, 0, &m))
		return env.Undefined();
	if (!info[2].IsArrayBuffer() || info[2].As<Napi::ArrayBuffer>().ByteLength() != sizeof(uh_iter))
		return type_error(env, "not an iteration state");
	it = (uh_iter *)info[2].As<Napi::ArrayBuffer>().Data();
	if (max < 1 || max > RANGE_MAX)
		return type_error(env, "rangeRecords: 1 to 32 records");
	if (bounded && !to_key(env, info[4].As<Napi::Number>().Uint32Value(), info[5], &to))
		return env.Undefined();
	Napi::Array out = Napi::Array::New(env, 0);
	uint32_t j = 0, got = 0;
	size_t at = 0;
	while (got < max) {	/* bound: max records (each call returns >= 1 or ends) */
		uint32_t n = 0;
		int rc = uh_smap_next_records(h, m, it, bounded ? &to.k : nullptr, 0, ad->bytes + at,
					      BYTES_BUF_SIZE - at, recs, max - got, &n);
		if (rc == UH_ENOTFOUND)
			break;
		if (rc)
			return raise(env, rc, "range records");
		size_t end = 0;	/* the next call's records go after this one's */
		for (uint32_t i = 0; i < n; i++) {	/* bound: RANGE_MAX */
			const uh_scan_record &r = recs[i];
			out.Set(j++, from_key(env, r.key));
			out.Set(j++, Napi::Number::New(env, r.status ? -1.0 : (double)r.len));
			out.Set(j++, Napi::Number::New(env, r.class_id));
			if (!r.status)
				end = r.at + r.len;
		}
		at += (end + 7) & ~(size_t)7;
		got += n;
	}
	if (j == 0)
		return env.Null();
	return out;
}

bool to_inline_values(Napi::Env env, Napi::Value indexes, Napi::Value values, const char *what,
		      InlineValues *out)
{
	if (!indexes.IsArray() || !values.IsArray()) {
		type_error(env, std::string(what) + ": indexes and values must be arrays");
		return false;
	}
	Napi::Array idx = indexes.As<Napi::Array>(), vals = values.As<Napi::Array>();
	uint32_t n = idx.Length();
	if (vals.Length() != n) {
		type_error(env, std::string(what) + ": as many values as indexes");
		return false;
	}
	out->v.resize(n);
	out->strs.reserve(n);	/* no reallocation: v points into the strings */
	for (uint32_t i = 0; i < n; i++) {	/* bound: the fields */
		Napi::Value v = vals.Get(i);
		uh_inline_value &iv = out->v[i];
		iv.field = idx.Get(i).As<Napi::Number>().Uint32Value();
		if (v.IsString()) {
			out->strs.push_back(v.As<Napi::String>().Utf8Value());
			iv.data = out->strs.back().data();
			iv.len = (uint32_t)out->strs.back().size();
		} else if (v.IsTypedArray() &&
			   v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
			Napi::Uint8Array a = v.As<Napi::Uint8Array>();
			iv.data = a.Data();
			iv.len = (uint32_t)a.ByteLength();
		} else {
			type_error(env, std::string(what) +
					": a value is neither a string nor a Uint8Array");
			return false;
		}
	}
	return true;
}

/* The put of mapPutRecord and mapPutRecordPacked: a new record of class
 * cls with the n inline values v, stored under k; the value it replaces is
 * freed when it is a string or bytes value, and with freeOld when it is a
 * record. */
static Napi::Value put_record(Napi::Env env, uh_heap *h, bool sorted, uh_off m, const Key &k,
			      uint32_t cls, const uh_inline_value *v, uint32_t n, bool freeOld)
{
	uint32_t flags = UH_FREE_OLD_VALUE | (freeOld ? UH_FREE_OLD : 0);
	int rc = sorted ? uh_smap_put_record(h, m, &k.k, cls, v, n, flags)
			: uh_map_put_record(h, m, &k.k, cls, v, n, flags);
	if (rc != 0)
		return raise(env, rc, "map put record");
	return env.Undefined();
}

/* mapPutRecord(off, gen, sorted, kind, key, classId, indexes, values,
 * freeOld): a new record of class classId whose inline fields indexes[i]
 * hold values[i] (as allocInline), stored under key, the record key held
 * freed with freeOld (UH_FREE_OLD): one uh_map_put_record /
 * uh_smap_put_record, in the caller's block, else atomic and durable on
 * its own (re-run by libuniheap after a lost conflict). */
Napi::Value Session::MapPutRecord(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off m;
	Key k;
	InlineValues iv;

	if (!open(env) || !map_and_key(info, 3, &m, &k) ||
	    !to_inline_values(env, info[6], info[7], "putRecord", &iv))
		return env.Undefined();
	return put_record(env, h, info[2].ToBoolean(), m, k, info[5].As<Napi::Number>().Uint32Value(),
			  iv.v.data(), (uint32_t)iv.v.size(), info[8].ToBoolean());
}

/* Most fields a packed record may have: more than a class can declare
 * fits no record anyway; libuniheap checks the indexes themselves. */
static const uint32_t PACKED_MAX = 1024;

/* mapPutRecordPacked(off, gen, sorted, kind, key, classId, n, freeOld):
 * mapPutRecord with the n field values packed by lib/collections.js into
 * the bytes buffer rather than passed as two JS arrays: at 4-byte aligned
 * offsets from 0, per field a u32 index, a u32 length and that many bytes
 * (a string field's are its UTF-8). Reading two arrays element by element
 * took ~8 N-API calls per field, most of an insert's time in the addon;
 * the JS side copies a value into the buffer for a fraction of that. */
Napi::Value Session::MapPutRecordPacked(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	AddonData *ad = data(env);
	uh_inline_value vals[64];
	std::vector<uh_inline_value> more;
	uh_inline_value *v = vals;
	uh_off m;
	Key k;

	if (!open(env) || !map_and_key(info, 3, &m, &k))
		return env.Undefined();
	uint32_t cls = info[5].As<Napi::Number>().Uint32Value();
	uint32_t n = info[6].As<Napi::Number>().Uint32Value();
	if (n > PACKED_MAX)
		return type_error(env, "putRecord: too many packed fields");
	if (n > sizeof vals / sizeof vals[0]) {
		more.resize(n);
		v = more.data();
	}
	size_t at = 0;
	for (uint32_t i = 0; i < n; i++) {	/* bound: n <= PACKED_MAX */
		uint32_t hdr[2];
		if (at + sizeof hdr > BYTES_BUF_SIZE)
			return type_error(env, "putRecord: packed values overrun the buffer");
		memcpy(hdr, ad->bytes + at, sizeof hdr);
		at += sizeof hdr;
		if (hdr[1] > BYTES_BUF_SIZE - at)
			return type_error(env, "putRecord: packed values overrun the buffer");
		v[i].field = hdr[0];
		v[i].data = ad->bytes + at;
		v[i].len = hdr[1];
		at = (at + hdr[1] + 3) & ~(size_t)3;
	}
	return put_record(env, h, info[2].ToBoolean(), m, k, cls, v, n, info[7].ToBoolean());
}

}  // namespace uhn
