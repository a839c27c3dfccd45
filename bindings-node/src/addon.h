/*
 * addon.h -- shared declarations of the uniheap Node-API addon.
 *
 * The addon is the thin native half of the binding: one Session object per
 * libuniheap session, whose methods each make one libuniheap call (or one
 * short, fixed sequence of them) and convert arguments and results. The JS
 * layer (lib/) reads primitive fields straight from the mapping and runs
 * the retry loop of blocks; everything that writes, allocates, validates or
 * touches a data type comes here.
 *
 * References cross the boundary as two numbers, never one: the object's
 * offset (bits 0..47 of a uh_off, exact in a double) and its generation
 * (bits 48..63). A reference returned to JS is returned as its offset, with
 * its generation and class id left in the scratch words (Scratch below).
 *
 * Ownership: a Session owns its uh_heap (NULL once closed) and the external
 * ArrayBuffer over the mapping, which it detaches before disconnecting, so
 * JS never touches an unmapped page. The buffer keeps its Session alive
 * (the Session holds it weakly), so one not closed is collected, and
 * unmapped, only once no typed array over the mapping is reachable. The
 * mapping itself belongs to libuniheap and goes away with the process's
 * last session (registry.cc).
 */
#ifndef UNIHEAP_NODE_ADDON_H
#define UNIHEAP_NODE_ADDON_H

#include <napi.h>
#include <string>

#include <uniheap.h>

namespace uhn {


/* Scratch words (a Uint32Array the JS layer holds) carrying what a call
 * returns besides its value: whether the value is a reference, and then its
 * generation and class id; or that a bytes value waits in the bytes buffer
 * (SCR_IS_REF = SCR_BYTES, the call returned its length). */
enum : uint32_t { SCR_IS_REF = 0, SCR_GEN = 1, SCR_CLASS = 2, SCR_WORDS = 4 };
enum : uint32_t { SCR_BYTES = 2 };

/* The bytes buffer: a bytes value of at most this size is returned through
 * it when the caller asks, since the JS layer copies it into a pooled
 * Buffer several times faster than a Buffer can be made here. */
enum : size_t { BYTES_BUF_SIZE = 64 * 1024 };

/* Per-environment (main thread or worker) state. */
struct AddonData {
	Napi::FunctionReference make_error;	/* JS (code, message) -> Error */
	Napi::FunctionReference session_ctor;
	Napi::FunctionReference iter_ctor;
	Napi::Reference<Napi::ArrayBuffer> scratch_buf;
	uint32_t *scratch = nullptr;
	Napi::Reference<Napi::ArrayBuffer> bytes_buf;
	uint8_t *bytes = nullptr;
};

AddonData *data(Napi::Env env);

/* A failed libuniheap call: its code and uh_errmsg(), captured at once
 * (the message is thread-local and dies with the next call). */
struct Failure {
	int rc;
	std::string msg;
};
Failure failure(int rc);

/* Throw the UniheapError subclass of f.rc with "what: <message>". Returns
 * undefined for `return uhn::raise(...)`. */
Napi::Value raise(Napi::Env env, const Failure &f, const std::string &what);
Napi::Value raise(Napi::Env env, int rc, const std::string &what);
/* Throw a binding-side UniheapError (code 0 and a message). */
Napi::Value raise_msg(Napi::Env env, int rc, const std::string &msg);
Napi::Value type_error(Napi::Env env, const std::string &msg);

/* uh_off <-> (offset, generation). */
static inline uh_off make_ref(double off, uint32_t gen)
{
	return (uh_off)off | (uh_off)(gen & 0xffffu) << 48;
}
Napi::Value ref_value(Napi::Env env, uh_off ref, uint32_t cls);
/* The ref of arguments (off, gen) at index i, i + 1; 0 and a pending
 * exception when they are no reference. */
bool arg_ref(const Napi::CallbackInfo &info, size_t i, uh_off *out);

/* values.cc */
struct Key {
	uh_key k{};
	std::string bytes;	/* owns the key data of string/bytes keys */
};
bool to_key(Napi::Env env, uint32_t kind, Napi::Value v, Key *out);
Napi::Value from_key(Napi::Env env, const uh_key &k);
/* A JS value to store: v, with hint = -1 (any value, by its JS type), a
 * UH_T_* (the value must fit that type: arrays), or -2 (v is the offset of
 * a reference whose generation is `gen`). Returns false with a pending
 * exception when v cannot be stored. needs_alloc tells whether a string or
 * bytes object must be made for it (alloc_value does that). */
struct Stored {
	uh_value v{};
	std::string data;	/* string/bytes contents until allocated */
	bool needs_alloc = false;
};
bool to_value(Napi::Env env, Napi::Value v, int32_t hint, uint32_t gen, Stored *out);
int alloc_value(uh_heap *h, Stored *v);
/*
 * Reading a string or bytes value. Outside a block it is copied in place
 * with no lock, and the session that replaces it (a field, map or list
 * slot given a new value) frees it in the same commit: a copy is good only
 * if the object is still the one the reference named afterwards. When it
 * is not, the read is CHANGED, not failed: the caller reads the slot again
 * (read_again), which then holds the new value. Inside a block libuniheap
 * reports a replaced value as a conflict (UH_ECONFLICT), which stands.
 */
enum Read { COPIED, CHANGED, FAILED };	/* FAILED: an exception is pending */

/* Reads of one value a session gives up after (kept_changing): a writer
 * could replace the value between every two of them. */
enum : int { MAX_READS = 1000 };

/* CHANGED for UH_EFREED outside a block; else FAILED, with the error of rc
 * thrown as "what: ...". */
Read changed_or_raise(Napi::Env env, uh_heap *h, int rc, const std::string &what);

/* The one copy of a string (type UH_T_STRING) or bytes (UH_T_BYTES)
 * object s: *out = make(payload, length), kept only if s still names a
 * live object after the copy (make must only copy). */
template <typename Make>
Read copy_blob(Napi::Env env, uh_heap *h, uh_off s, uint32_t type, Napi::Value *out, Make make)
{
	const void *p;
	size_t len;
	uint32_t cls;
	int rc = type == UH_T_STRING ? uh_string_get(h, s, (const char **)&p, &len)
				     : uh_bytes_get(h, s, &p, &len);

	if (rc)
		return changed_or_raise(env, h, rc, type == UH_T_STRING ? "string" : "bytes");
	Napi::Value v = make(p, len);
	/* uh_obj_class() checks the valid bit and the generation: a slot
	 * freed during the copy, even if reused since, fails it. */
	if ((rc = uh_obj_class(h, s, &cls)) != 0)
		return changed_or_raise(env, h, rc, "string or bytes value freed while it was read");
	*out = v;
	return COPIED;
}

/* A stored value as JS in *out; a reference sets the scratch words. With
 * via_buf, a bytes value that fits goes to the bytes buffer instead of a
 * Buffer (only for callers whose JS side takes it from there). */
Read read_value(Napi::Env env, uh_heap *h, const uh_value &v, bool via_buf, Napi::Value *out);
Read string_at(Napi::Env env, uh_heap *h, uh_off s, uint32_t type, bool via_buf, Napi::Value *out);
/* The same for a value that cannot be read again from where it is stored
 * (a removed value, inside the step that removes it; a reference the
 * caller holds): CHANGED becomes a FreedObjectError. */
Napi::Value from_value(Napi::Env env, uh_heap *h, const uh_value &v, bool via_buf = false);
Napi::Value string_at(Napi::Env env, uh_heap *h, uh_off s, uint32_t type, bool via_buf = false);

/* Values of a batch (several in one call), self-contained since the
 * scratch words describe one value only: a reference to an object as
 * [off, gen, class]; a bytes object s copied into the bytes buffer at *at
 * as [at, length] (*at moves past it), or as a Buffer of its own when it
 * does not fit the rest of the buffer. bytes_in_buf gives the length
 * alone, for a caller whose JS side sums the lengths to find each value. */
Napi::Value ref_triple(Napi::Env env, uh_off ref, uint32_t cls);
Read bytes_batched(Napi::Env env, uh_heap *h, uh_off s, size_t *at, Napi::Value *out);
Read bytes_in_buf(Napi::Env env, uh_heap *h, uh_off s, size_t *at, Napi::Value *out);

/* The ConflictError of a value read MAX_READS times, changed each time. */
Napi::Value kept_changing(Napi::Env env, const std::string &what);

/*
 * The value attempt(&out) reads, tried again, at most MAX_READS times,
 * while it finds a string or bytes value replaced under its copy (CHANGED);
 * `what` names it in the ConflictError after that. The one loop of every
 * read that copies such values outside a block.
 */
template <typename AttemptFn>
Napi::Value read_until_copied(Napi::Env env, const std::string &what, AttemptFn attempt)
{
	for (int i = 0; i < MAX_READS; i++) {	/* bound: MAX_READS */
		Napi::Value out = env.Undefined();
		Read r = attempt(&out);
		if (r == COPIED)
			return out;
		if (r == FAILED)
			return env.Undefined();
	}
	return kept_changing(env, what);
}

/* What fetch() found where a value is stored. */
enum Fetch { FOUND, DONE };	/* DONE: *out is the answer (or an exception pending) */

/*
 * The value fetch(&v, &out) finds, as JS: fetched again, at most
 * MAX_READS times, while the read finds it changed.
 * Returns out as fetch left it when fetch says DONE.
 */
template <typename FetchFn>
Napi::Value read_again(Napi::Env env, uh_heap *h, const std::string &what, bool via_buf,
		       FetchFn fetch)
{
	return read_until_copied(env, what, [&](Napi::Value *out) {
		uh_value v{};
		if (fetch(&v, out) == DONE)
			return env.IsExceptionPending() ? FAILED : COPIED;
		return read_value(env, h, v, via_buf, out);
	});
}
Napi::Value int_value(Napi::Env env, int64_t i);

/* A block around a step that allocates and publishes (joins an open
 * one). end() commits (or leaves one nesting level), or rolls an outermost
 * step back; it returns the step's result, and failure() the first failed
 * call's code and message, captured before the roll back could clear it.
 *   Step st(h); int rc = st.begin(); if (rc == 0) rc = st.end(uh_...(...));
 *   if (rc) return raise(env, st.failure(), what); */
class Step {
public:
	explicit Step(uh_heap *h) : h(h) {}
	int begin();
	int end(int rc);
	const Failure &failure() const { return f; }

private:
	int note(int rc);
	uh_heap *h;
	bool outer = false;
	Failure f{ 0, "" };
};

}  // namespace uhn

#endif
