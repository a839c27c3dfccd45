/*
 * errors.cc -- libuniheap failures as JS exceptions. The JS layer gives the
 * addon one function, makeError(code, message), that picks the
 * UniheapError subclass of a code (lib/errors.js holds the one table);
 * everything here only captures the message and throws what it returns.
 */
#include "addon.h"

namespace uhn {

Failure failure(int rc)
{
	const char *m = uh_errmsg();

	return Failure{ rc, m && *m ? m : uh_strerror(rc) };
}

Napi::Value raise_msg(Napi::Env env, int rc, const std::string &msg)
{
	Napi::Value err = data(env)->make_error.Call({ Napi::Number::New(env, rc),
						       Napi::String::New(env, msg) });
	if (!env.IsExceptionPending())
		Napi::Error(env, err).ThrowAsJavaScriptException();
	return env.Undefined();
}

Napi::Value raise(Napi::Env env, const Failure &f, const std::string &what)
{
	return raise_msg(env, f.rc, what.empty() ? f.msg : what + ": " + f.msg);
}

Napi::Value raise(Napi::Env env, int rc, const std::string &what)
{
	return raise(env, failure(rc), what);
}

Napi::Value type_error(Napi::Env env, const std::string &msg)
{
	Napi::TypeError::New(env, msg).ThrowAsJavaScriptException();
	return env.Undefined();
}

}  // namespace uhn
