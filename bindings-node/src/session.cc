/*
 * session.cc -- Session life cycle, the mapping as an ArrayBuffer, blocks,
 * classes, roots and introspection.
 */
#include "session.h"

#include "registry.h"
#include "wait.h"

#include <vector>

namespace uhn {

#define M(name, fn) InstanceMethod(name, &Session::fn)

Napi::Function Session::Define(Napi::Env env)
{
	return DefineClass(env, "Session", {
		M("close", Close), M("buffer", Buffer), M("info", Info), M("mapped", Mapped),
		M("stats", Stats), M("pin", Pin),
		M("sweepPins", SweepPins),
		M("heapCheck", HeapCheck), M("begin", Begin), M("commit", Commit),
		M("abort", Abort), M("inBlock", InBlock), M("retryWait", RetryWait),
		M("registerClass", RegisterClass), M("classFind", ClassFind),
		M("classInfo", ClassInfo), M("classIds", ClassIds),
		M("rootGet", RootGet), M("rootSet", RootSet), M("rootDel", RootDel),
		M("rootNames", RootNames), M("rootCount", RootCount),
		M("alloc", Alloc), M("allocInline", AllocInline), M("free", Free), M("objClass", ObjClass),
		M("getI64", GetI64), M("setI64", SetI64), M("getF64", GetF64),
		M("setF64", SetF64), M("getRef", GetRef), M("setRef", SetRef),
		M("getStr", GetStr), M("setStr", SetStr), M("stringAt", StringAt),
		M("getInline", GetInline), M("setInline", SetInline),
		M("readFields", ReadFields),
		M("mapNew", MapNew), M("mapKeyKind", MapKeyKind), M("mapLen", MapLen),
		M("mapGet", MapGet), M("mapView", MapView), M("mapPut", MapPut),
		M("mapRemove", MapRemove),
		M("mapCheck", MapCheck), M("mapIter", MapIter), M("iterNext", IterNext),
		M("iterNextN", IterNextN),
		M("listNew", ListNew), M("seqLen", SeqLen), M("seqGet", SeqGet),
		M("seqSet", SeqSet), M("listInsert", ListInsert), M("listPop", ListPop),
		M("arrayNew", ArrayNew), M("arrayElemType", ArrayElemType),
		M("mapGetRecord", MapGetRecord), M("mapSetField", MapSetField),
		M("rangeRecords", RangeRecords), M("mapPutRecord", MapPutRecord),
		M("mapPutRecordPacked", MapPutRecordPacked),
		M("token", Token), M("waitStart", WaitStart), M("waitCancel", WaitCancel),
		M("waitSync", WaitSync),
	});
}

#undef M

/* new Session(socket | null, readonly, timeoutMs | null): attach (an
 * RPC; synchronous, waiting for heapd up to timeoutMs). */
Session::Session(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Session>(info)
{
	Napi::Env env = info.Env();
	std::string sock;
	bool has_sock = info[0].IsString();
	bool readonly = info[1].ToBoolean();
	/* lib/heap.js checked it: an integer 0..2^31-1, or null. */
	int timeout_ms = info[2].IsNumber() ? info[2].As<Napi::Number>().Int32Value()
					   : UH_CONNECT_DEFAULT;
	uh_info in;

	if (has_sock)
		sock = info[0].As<Napi::String>().Utf8Value();
	int rc = registry_open(has_sock ? sock.c_str() : nullptr, readonly, timeout_ms, &h);
	if (rc) {
		h = nullptr;
		raise(env, rc, "connect");
		return;
	}
	uh_heap_info(h, &in);
	size = in.max_size > in.heap_size ? in.max_size : in.heap_size;
}

/* Collected without close(): nothing can reach the mapping any more. */
Session::~Session()
{
	pins.clear(Env());
	close_waits();
	registry_close(h);
	h = nullptr;
}

uh_heap *Session::open(Napi::Env env)
{
	if (!h)
		raise_msg(env, 0, "the heap is closed");
	return h;
}

void Session::disconnect()
{
	pins.clear(Env());
	for (auto &kv : bufs) {
		Napi::ArrayBuffer b = kv.second.Value();
		if (!b.IsEmpty() && !b.IsDetached())
			b.Detach();
		kv.second.Reset();
	}
	bufs.clear();
	close_waits();
	registry_close(h);
	h = nullptr;
}

/* close(): detach the ArrayBuffer first, then cancel the waits and close
 * the wait sessions, then the session (an open block is rolled back).
 * Idempotent. */
Napi::Value Session::Close(const Napi::CallbackInfo &info)
{
	disconnect();
	return info.Env().Undefined();
}

/* buffer(start, len): the window [start, start + len) of the reservation
 * as an external ArrayBuffer (made once per start; lib/views.js picks the
 * windows). One buffer cannot span the reservation: Node refuses an
 * external ArrayBuffer above 4 GiB, and a heap may grow to 15 GiB. Bytes
 * past mapped() are reserved address space, not yet readable. Each
 * buffer keeps its session (a property holds the Session object) and the
 * session holds its buffers weakly: whatever still reaches a buffer (a
 * window, a view of a bytes value, its .buffer) keeps the mapping mapped,
 * and the session is collected (~Session unmaps) only once nothing does.
 * close() detaches them all, so nothing reads the mapping after that. */
Napi::Value Session::Buffer(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();

	if (!open(env))
		return env.Undefined();
	if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber())
		return raise_msg(env, UH_EINVAL, "buffer(start, len): two numbers");
	double start = info[0].As<Napi::Number>().DoubleValue();
	double len = info[1].As<Napi::Number>().DoubleValue();
	if (!(start >= 0 && len > 0 && start + len <= (double)size && len <= 4294967296.0))
		return raise_msg(env, UH_EINVAL, "buffer(start, len): not a window of the mapping");
	auto it = bufs.find((uint64_t)start);
	if (it != bufs.end() && !it->second.Value().IsEmpty())
		return it->second.Value();
	Napi::ArrayBuffer b;
	{
		napi_value v;
		if (napi_create_external_arraybuffer(env, (char *)uh_base(h) + (uint64_t)start, (size_t)len,
						     nullptr, nullptr, &v) != napi_ok) {
			if (env.IsExceptionPending())
				env.GetAndClearPendingException();
			char msg[160];
			snprintf(msg, sizeof(msg), "cannot make an ArrayBuffer of the mapping's "
				 "window at %.0f (%.0f bytes)", start, len);
			return raise_msg(env, UH_ENOMEM, msg);
		}
		b = Napi::ArrayBuffer(env, v);
	}
	b.DefineProperty(Napi::PropertyDescriptor::Value(
		Napi::Symbol::New(env, "uniheap.session"), Value()));
	bufs[(uint64_t)start] = Napi::Weak(b);
	return b;
}

Napi::Value Session::Info(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_info in;

	if (!open(env))
		return env.Undefined();
	uh_heap_info(h, &in);
	Napi::Object o = Napi::Object::New(env);
	o.Set("heapSize", Napi::Number::New(env, (double)in.heap_size));
	o.Set("formatVersion", Napi::Number::New(env, in.format_version));
	o.Set("durability", Napi::String::New(env, uh_durability_name(in.durability)));
	o.Set("session", Napi::Number::New(env, in.session));
	o.Set("readonly", Napi::Boolean::New(env, in.readonly != 0));
	o.Set("name", Napi::String::New(env, in.name));
	o.Set("path", Napi::String::New(env, in.path));
	o.Set("curSize", Napi::Number::New(env, (double)in.cur_size));
	o.Set("maxSize", Napi::Number::New(env, (double)in.max_size));
	o.Set("usedSize", Napi::Number::New(env, (double)in.used_size));
	return o;
}

/* mapped(off, gen) -> the bytes of the heap mapped from base once the
 * reference (off, gen) has been checked: the check maps what a grown heap
 * added, when the reference lies there (its error is the caller's to find
 * again: it reads the header next). */
Napi::Value Session::Mapped(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off ref;
	uint32_t cls;
	uh_info in;

	if (!open(env) || !arg_ref(info, 0, &ref))
		return env.Undefined();
	(void)uh_obj_class(h, ref, &cls);
	uh_heap_info(h, &in);
	return Napi::Number::New(env, (double)in.heap_size);
}

Napi::Value Session::Stats(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_stats s;

	if (!open(env))
		return env.Undefined();
	uh_stats_get(h, &s);
	Napi::Object o = Napi::Object::New(env);
#define K(js, f) o.Set(js, Napi::Number::New(env, (double)s.f))
	K("allocs", allocs); K("frees", frees); K("commits", commits);
	K("emptyCommits", empty_commits); K("aborts", aborts); K("conflicts", conflicts);
	K("barriers", barriers); K("flushes", flushes); K("logBytes", log_bytes);
	K("arenaLeases", arena_leases); K("lockWaits", lock_waits);
	K("abortsLocked", aborts_locked); K("abortsStale", aborts_stale);
	K("abortsLogfull", aborts_logfull); K("abortsUser", aborts_user);
	K("retries", retries); K("readWaits", read_waits);
	K("reattaches", reattaches); K("reattachNs", reattach_ns);
	K("optReads", opt_reads); K("optRetries", opt_retries);
	K("optFallbacks", opt_fallbacks);
	K("pins", pins); K("gcCycles", gc_cycles); K("gcGreys", gc_greys);
	K("gcBusyWaits", gc_busy_waits);
#undef K
	return o;
}

/* pin(proxy, offset, generation) -> the count of proxies pinned (those
 * V8 may have collected since the last sweep included), or -1 when the
 * object was already freed (nothing pinned: the proxy's reads raise
 * FreedObjectError). A proxy pins its object for the online GC while it
 * lives (lib/identity.js); the pin goes once V8 has collected the proxy
 * (pins.h). */
Napi::Value Session::Pin(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	bool pinned = false;
	int rc;

	if (!open(env))
		return env.Undefined();
	uh_off ref = (uh_off)info[1].As<Napi::Number>().Int64Value() |
		(uh_off)info[2].As<Napi::Number>().Uint32Value() << 48;
	if ((rc = pins.track(env, h, info[0], ref, &pinned)) != 0)
		return raise(env, rc, "pin");
	return Napi::Number::New(env, pinned ? (double)pins.size() : -1.0);
}

/* sweepPins() -> proxies still pinned: unpin those V8 has collected (after
 * close: 0, nothing to release, no throw). */
Napi::Value Session::SweepPins(const Napi::CallbackInfo &info)
{
	size_t left = h != nullptr ? pins.sweep(info.Env(), h) : 0;
	return Napi::Number::New(info.Env(), (double)left);
}

Napi::Value Session::HeapCheck(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint64_t n = 0;
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_heap_check(h, &n)) != 0)
		return raise(env, rc, "heap check");
	return Napi::Number::New(env, (double)n);
}

/* ---- blocks ---- */

Napi::Value Session::Begin(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_begin(h)) != 0)
		return raise(env, rc, "begin");
	return env.Undefined();
}

Napi::Value Session::Commit(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_commit(h)) != 0)
		return raise(env, rc, "commit");
	return env.Undefined();
}

Napi::Value Session::Abort(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();

	if (open(env) && uh_in_block(h))
		uh_abort(h);
	return env.Undefined();
}

Napi::Value Session::InBlock(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();

	if (!open(env))
		return env.Undefined();
	return Napi::Number::New(env, uh_in_block(h));
}

Napi::Value Session::RetryWait(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();

	if (!open(env))
		return env.Undefined();
	uh_retry_wait(h, info[0].As<Napi::Number>().Uint32Value());
	return env.Undefined();
}

/* ---- classes ---- */

/* registerClass(name, [[field, type, refClass], ...]) -> class id */
Napi::Value Session::RegisterClass(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	std::string name = info[0].As<Napi::String>().Utf8Value();
	Napi::Array spec = info[1].As<Napi::Array>();
	std::vector<std::string> names(spec.Length());
	std::vector<uh_field_spec> fields(spec.Length());
	uint32_t id;
	int rc;

	if (!open(env))
		return env.Undefined();
	for (uint32_t i = 0; i < spec.Length(); i++) {
		Napi::Array f = spec.Get(i).As<Napi::Array>();
		names[i] = f.Get(0u).As<Napi::String>().Utf8Value();
		fields[i].name = names[i].c_str();
		fields[i].type = f.Get(1u).As<Napi::Number>().Uint32Value();
		fields[i].ref_class = f.Get(2u).As<Napi::Number>().Uint32Value();
	}
	rc = uh_class_register(h, name.c_str(), fields.data(), (uint32_t)fields.size(), &id);
	if (rc)
		return raise(env, rc, name);
	return Napi::Number::New(env, id);
}

/* classFind(name) -> class id, or -1 when the heap has no such class */
Napi::Value Session::ClassFind(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	std::string name = info[0].As<Napi::String>().Utf8Value();
	uint32_t id;

	if (!open(env))
		return env.Undefined();
	if (uh_class_find(h, name.c_str(), &id) != 0)
		return Napi::Number::New(env, -1);
	return Napi::Number::New(env, id);
}

/* classInfo(id) -> [id, name, kind, payload, [[field, type, offset,
 * refClass], ...]], or null for an unused id */
Napi::Value Session::ClassInfo(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t id = info[0].As<Napi::Number>().Uint32Value();
	uh_class_info ci;
	uh_field_info fi;
	int rc;

	if (!open(env))
		return env.Undefined();
	if (uh_class_info_get(h, id, &ci) != 0)
		return env.Null();
	Napi::Array fields = Napi::Array::New(env, ci.nfields);
	for (uint32_t i = 0; i < ci.nfields; i++) {
		if ((rc = uh_field_info_get(h, id, i, &fi)) != 0)
			return raise(env, rc, "field info");
		Napi::Array f = Napi::Array::New(env, 4);
		f.Set(0u, Napi::String::New(env, fi.name));
		f.Set(1u, Napi::Number::New(env, fi.type));
		f.Set(2u, Napi::Number::New(env, fi.offset));
		/* an inline field's capacity in the ref_class word, as declared */
		f.Set(3u, Napi::Number::New(env, fi.capacity ? fi.capacity : fi.ref_class));
		fields.Set(i, f);
	}
	Napi::Array out = Napi::Array::New(env, 5);
	out.Set(0u, Napi::Number::New(env, id));
	out.Set(1u, Napi::String::New(env, ci.name));
	out.Set(2u, Napi::Number::New(env, ci.kind));
	out.Set(3u, Napi::Number::New(env, ci.payload_size));
	out.Set(4u, fields);
	return out;
}

/* classIds() -> the ids of every class in the heap's class table */
Napi::Value Session::ClassIds(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_class_info ci;
	uint32_t n = 0;

	if (!open(env))
		return env.Undefined();
	Napi::Array out = Napi::Array::New(env);
	for (uint32_t id = 1; id < 65536; id++)
		if (uh_class_info_get(h, id, &ci) == 0)
			out.Set(n++, Napi::Number::New(env, id));
	return out;
}

/* ---- roots ---- */

/* rootGet(name) -> the object (a reference: offset + scratch), a string,
 * or undefined when there is no such root */
Napi::Value Session::RootGet(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	std::string name = info[0].As<Napi::String>().Utf8Value();

	if (!open(env))
		return env.Undefined();
	return read_again(env, h, "root " + name, false, [&](uh_value *v, Napi::Value *out) {
		int rc;

		v->type = UH_T_REF;
		if ((rc = uh_root_get(h, name.c_str(), &v->u.ref)) == 0)
			return FOUND;
		*out = rc == UH_ENOTFOUND ? env.Undefined() : raise(env, rc, "root " + name);
		return DONE;
	});
}

/* rootSet(name, off, gen) */
Napi::Value Session::RootSet(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	std::string name = info[0].As<Napi::String>().Utf8Value();
	uh_off ref;
	int rc;

	if (!open(env) || !arg_ref(info, 1, &ref))
		return env.Undefined();
	if ((rc = uh_root_set(h, name.c_str(), ref)) != 0)
		return raise(env, rc, "root " + name);
	return env.Undefined();
}

/* rootDel(name) -> false when there was no such root */
Napi::Value Session::RootDel(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	std::string name = info[0].As<Napi::String>().Utf8Value();
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_root_del(h, name.c_str())) == UH_ENOTFOUND)
		return Napi::Boolean::New(env, false);
	if (rc)
		return raise(env, rc, "root " + name);
	return Napi::Boolean::New(env, true);
}

/* rootNames() -> the root names, a snapshot */
Napi::Value Session::RootNames(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint64_t cur = 0;
	const char *name;
	size_t len;
	uh_off v;
	uint32_t n = 0;

	if (!open(env))
		return env.Undefined();
	Napi::Array out = Napi::Array::New(env);
	while (uh_root_next(h, &cur, &name, &len, &v) == 0)
		out.Set(n++, Napi::String::New(env, name, len));
	return out;
}

Napi::Value Session::RootCount(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint64_t n = 0;
	int rc;

	if (!open(env))
		return env.Undefined();
	if ((rc = uh_root_count(h, &n)) != 0)
		return raise(env, rc, "roots");
	return Napi::Number::New(env, (double)n);
}

}  // namespace uhn
