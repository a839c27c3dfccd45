/*
 * addon.cc -- module entry: per-environment state (each worker thread has
 * its own), and init(), through which the JS layer hands over its error
 * factory and receives the Session class and the scratch words.
 */
#include "session.h"

namespace uhn {

AddonData *data(Napi::Env env)
{
	return env.GetInstanceData<AddonData>();
}

/* The built-in class ids the JS layer names (uniheap.h's UH_CLASS_*), so
 * that lib/ keeps no copy of its own. */
static Napi::Object class_ids(Napi::Env env)
{
	Napi::Object ids = Napi::Object::New(env);
	ids.Set("string", Napi::Number::New(env, UH_CLASS_STRING));
	ids.Set("bytes", Napi::Number::New(env, UH_CLASS_BYTES));
	ids.Set("array", Napi::Number::New(env, UH_CLASS_ARRAY));
	ids.Set("list", Napi::Number::New(env, UH_CLASS_LIST));
	ids.Set("map", Napi::Number::New(env, UH_CLASS_MAP));
	ids.Set("sortedMap", Napi::Number::New(env, UH_CLASS_SMAP));
	return ids;
}

/* init(makeError) -> { Session, scratch, bytes, formatVersion, libVersion,
 * classIds } */
static Napi::Value Init(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	AddonData *d = data(env);

	if (!info[0].IsFunction())
		return type_error(env, "init(makeError): makeError must be a function");
	d->make_error = Napi::Persistent(info[0].As<Napi::Function>());
	Napi::ArrayBuffer scratch = Napi::ArrayBuffer::New(env, SCR_WORDS * sizeof(uint32_t));
	d->scratch = (uint32_t *)scratch.Data();
	d->scratch_buf = Napi::Persistent(scratch);
	Napi::ArrayBuffer bytes = Napi::ArrayBuffer::New(env, BYTES_BUF_SIZE);
	d->bytes = (uint8_t *)bytes.Data();
	d->bytes_buf = Napi::Persistent(bytes);
	Napi::Object out = Napi::Object::New(env);
	out.Set("Session", d->session_ctor.Value());
	out.Set("scratch", scratch);
	out.Set("bytes", bytes);
	out.Set("formatVersion", Napi::Number::New(env, uh_format_version()));
	out.Set("libVersion", Napi::String::New(env, uh_version()));
	out.Set("classIds", class_ids(env));
	return out;
}

static Napi::Value DefaultSocket(const Napi::CallbackInfo &info)
{
	char buf[4096];

	if (uh_default_socket(buf, sizeof(buf)) != 0)
		return raise(info.Env(), UH_ERANGE, "default socket");
	return Napi::String::New(info.Env(), buf);
}

static Napi::Object Module(Napi::Env env, Napi::Object exports)
{
	AddonData *d = new AddonData();

	env.SetInstanceData(d);
	d->session_ctor = Napi::Persistent(Session::Define(env));
	exports.Set("init", Napi::Function::New(env, Init, "init"));
	exports.Set("defaultSocket", Napi::Function::New(env, DefaultSocket, "defaultSocket"));
	return exports;
}

}  // namespace uhn

static Napi::Object InitModule(Napi::Env env, Napi::Object exports)
{
	return uhn::Module(env, exports);
}

NODE_API_MODULE(uniheap, InitModule)
