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
#include <vector>

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
/* A key for one call: a string key's UTF-8 bytes in `small` when they fit
 * (no allocation for the keys of a hot loop), else in `bytes`; a bytes
 * key's data where the caller's Uint8Array holds it (valid during the
 * call, which runs no JS). */
struct Key {
	uh_key k{};
	std::string bytes;	/* owns the key data of a long string key */
	char small[256];
};
bool to_key(Napi::Env env, uint32_t kind, Napi::Value v, Key *out);
Napi::Value from_key(Napi::Env env, const uh_key &k);
/* The inline field values of a new record (allocInline, mapPutRecord),
 * from JS arrays indexes[i] -> values[i]: a string's UTF-8 (kept in strs)
 * or a Uint8Array's bytes (where the array holds them, valid during the
 * call). False with a TypeError pending (naming what) for arguments of
 * another kind. */
struct InlineValues {
	std::vector<uh_inline_value> v;
	std::vector<std::string> strs;
};
bool to_inline_values(Napi::Env env, Napi::Value indexes, Napi::Value values, const char *what,
		      InlineValues *out);
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
 * is not, the place it was read from is read again, which then holds the
 * new value. A value a hash map keeps inline is read the same way: the
 * put or remove of its key frees the entry that holds it. uh_copy_values
 * (uniheap.h) is that loop, bounded by UH_READ_TRIES; it calls the C++
 * callables below through two C trampolines (copy_values). Inside a block
 * libuniheap reports a replaced value as a conflict (UH_ECONFLICT), which
 * stands.
 */
enum Read { COPIED, CHANGED, FAILED };	/* FAILED: an exception is pending */

/* CHANGED for UH_EFREED outside a block; else FAILED, with the error of rc
 * thrown as "what: ...". */
Read changed_or_raise(Napi::Env env, uh_heap *h, int rc, const std::string &what);

/* Codes of a fetch of our own (uh_copy_values returns them as they are):
 * the fetch gave the answer itself (DONE), or a value that cannot be read
 * again from where it is kept was replaced under its copy (READ_CHANGED). */
enum : int { READ_DONE = 1, READ_CHANGED = 2 };

/* How the copies of a set of values are made as JS values: a string as a
 * string; a bytes value as a Buffer of its own (BUFFER), or through the
 * bytes buffer: a lone value that fits (VIA_BUF: the copy is its length,
 * in_buf tells), or values of a batch at `at` on while they fit, each as
 * its length (IN_BUF; with span, only those of bytes fields). outs[i] is
 * value i's copy. Each try starts again at `from` (restart). */
struct Copier {
	enum Hand { BUFFER, VIA_BUF, IN_BUF };
	Napi::Env env;
	Hand hand;
	Napi::Value *outs;
	size_t from = 0, at = 0;
	bool in_buf = false;
	const int32_t *span = nullptr;	/* readFields' span: field i's type is span[2 + 2i] */

	Copier(Napi::Env e, Hand how, Napi::Value *o) : env(e), hand(how), outs(o) {}
	void restart() { at = from; in_buf = false; }
	int copy(uint32_t i, uint32_t type, const void *p, size_t len);
};

template <typename FetchFn>
struct CopyArgs {
	FetchFn *fetch;
	Copier *copier;
	const uh_value *vals;
};

template <typename FetchFn>
int fetch_trampoline(uh_heap *, void *arg, uh_value *vals, uint32_t *n)
{
	auto *a = static_cast<CopyArgs<FetchFn> *>(arg);
	a->copier->restart();
	return (*a->fetch)(vals, n);
}

template <typename FetchFn>
int copy_trampoline(void *arg, uint32_t i, const void *p, size_t len)
{
	auto *a = static_cast<CopyArgs<FetchFn> *>(arg);
	return a->copier->copy(i, a->vals[i].type, p, len);
}

/* uh_copy_values with fetch(vals, &n) (as uh_values_fetch_fn) and c's
 * copies: 0, or fetch's or libuniheap's code. */
template <typename FetchFn>
int copy_values(uh_heap *h, FetchFn fetch, Copier *c, uh_value *vals, uint32_t cap)
{
	CopyArgs<FetchFn> a{&fetch, c, vals};
	return uh_copy_values(h, fetch_trampoline<FetchFn>, copy_trampoline<FetchFn>, &a, vals, cap);
}

/* Whether uh_copy_values copies v out: the value of a string or bytes
 * object (reference not 0), or an inline value, whose bytes a hash map
 * keeps in the key's entry (UH_T_ISTRING, UH_T_IBYTES; u.ref names the
 * entry). A binding gives either kind as the same JS value. */
static inline bool is_copied(const uh_value &v)
{
	return ((v.type == UH_T_STRING || v.type == UH_T_BYTES) && v.u.ref) ||
	       v.type == UH_T_ISTRING || v.type == UH_T_IBYTES;
}

/* Whether a copied value of this type is a string (else bytes). */
static inline bool is_string_type(uint32_t type)
{
	return type == UH_T_STRING || type == UH_T_ISTRING;
}

/* A reference to a string or bytes object is read as that value: v is
 * retyped so that uh_copy_values copies it. 0, or the error of a reference
 * to no live object (an error, not a change: it does not own its target). */
int ref_as_copied(uh_heap *h, uh_value *v);

/* A stored value as JS in *out; a reference sets the scratch words. With
 * via_buf, a bytes value that fits goes to the bytes buffer instead of a
 * Buffer (only for callers whose JS side takes it from there). */
Read read_value(Napi::Env env, uh_heap *h, const uh_value &v, bool via_buf, Napi::Value *out);
/* The copy of a string or bytes value v (is_copied), object or inline, as
 * read_value gives it; string_at the same for string/bytes object s. */
Read copy_of(Napi::Env env, uh_heap *h, const uh_value &v, bool via_buf, Napi::Value *out);
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

/* What fetch() found where a value is stored. */
enum Fetch { FOUND, DONE };	/* DONE: *out is the answer (or an exception pending) */

/* read_again's answer from copy_values' code rc, the value v it read
 * and its copy (c). */
Napi::Value read_answer(Napi::Env env, uh_heap *h, const std::string &what, bool via_buf, int rc,
			const uh_value &v, const Copier &c, Napi::Value out);

/*
 * The value fetch(&v, &out) finds, as JS: fetched again (uh_copy_values,
 * at most UH_READ_TRIES times) while a string or bytes value it names is
 * replaced under its copy. Returns out as fetch left it when fetch says
 * DONE.
 */
template <typename FetchFn>
Napi::Value read_again(Napi::Env env, uh_heap *h, const std::string &what, bool via_buf,
		       FetchFn fetch)
{
	Napi::Value out = env.Undefined(), copy;
	Copier c(env, via_buf ? Copier::VIA_BUF : Copier::BUFFER, &copy);
	uh_value v{};
	int rc = copy_values(h, [&](uh_value *vals, uint32_t *n) {
		*n = 1;
		vals[0] = uh_value{};
		if (fetch(vals, &out) == DONE)
			return (int)READ_DONE;
		return ref_as_copied(h, vals);
	}, &c, &v, 1);
	return read_answer(env, h, what, via_buf, rc, v, c, out);
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
