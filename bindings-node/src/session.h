/*
 * session.h -- Session: one libuniheap session, as a JS object.
 *
 * Methods are grouped by file: session.cc (life cycle, blocks, classes,
 * roots, introspection), fields.cc (objects and their fields),
 * collections.cc (maps, sorted maps, lists, arrays and their iterators),
 * records.cc (a record under a map key, read or written in one call),
 * wait.cc (waiting for changes, on the wait sessions of wait.h).
 * Every method first checks that the session is open (HeapClosedError).
 */
#ifndef UNIHEAP_NODE_SESSION_H
#define UNIHEAP_NODE_SESSION_H

#include <map>

#include "addon.h"
#include "pins.h"

namespace uhn {

class WaitPool;

class Session : public Napi::ObjectWrap<Session> {
public:
	static Napi::Function Define(Napi::Env env);
	explicit Session(const Napi::CallbackInfo &info);
	~Session() override;

	uh_heap *h = nullptr;	/* owned; NULL once closed */

private:
	/* nullptr, and HeapClosedError pending, once closed. */
	uh_heap *open(Napi::Env env);
	void disconnect();

	/* The wait sessions (wait.h), made at the first wait; closed, their
	 * waits cancelled, before the session is. */
	WaitPool *waits = nullptr;
	uint32_t wait_ids = 0;
	WaitPool *wait_pool();
	void close_waits();

	/* Pins of this session's live proxies (pins.h). */
	ProxyPins pins;

	/* The mapping's windows (session.cc, buffer()): an external
	 * ArrayBuffer per window start, each held weakly (it holds the
	 * session), detached at close. */
	std::map<uint64_t, Napi::Reference<Napi::ArrayBuffer>> bufs;
	uint64_t size = 0;	/* bytes of the reservation: the most the heap may grow to */

	/* session.cc */
	Napi::Value Close(const Napi::CallbackInfo &info);
	Napi::Value Buffer(const Napi::CallbackInfo &info);
	Napi::Value Info(const Napi::CallbackInfo &info);
	Napi::Value Mapped(const Napi::CallbackInfo &info);
	Napi::Value Stats(const Napi::CallbackInfo &info);
	Napi::Value Pin(const Napi::CallbackInfo &info);
	Napi::Value SweepPins(const Napi::CallbackInfo &info);
	Napi::Value HeapCheck(const Napi::CallbackInfo &info);
	Napi::Value Begin(const Napi::CallbackInfo &info);
	Napi::Value Commit(const Napi::CallbackInfo &info);
	Napi::Value Abort(const Napi::CallbackInfo &info);
	Napi::Value InBlock(const Napi::CallbackInfo &info);
	Napi::Value RetryWait(const Napi::CallbackInfo &info);
	Napi::Value RegisterClass(const Napi::CallbackInfo &info);
	Napi::Value ClassFind(const Napi::CallbackInfo &info);
	Napi::Value ClassInfo(const Napi::CallbackInfo &info);
	Napi::Value ClassIds(const Napi::CallbackInfo &info);
	Napi::Value RootGet(const Napi::CallbackInfo &info);
	Napi::Value RootSet(const Napi::CallbackInfo &info);
	Napi::Value RootDel(const Napi::CallbackInfo &info);
	Napi::Value RootNames(const Napi::CallbackInfo &info);
	Napi::Value RootCount(const Napi::CallbackInfo &info);

	/* fields.cc */
	Napi::Value Alloc(const Napi::CallbackInfo &info);
	Napi::Value AllocInline(const Napi::CallbackInfo &info);
	Napi::Value Free(const Napi::CallbackInfo &info);
	Napi::Value ObjClass(const Napi::CallbackInfo &info);
	Napi::Value GetI64(const Napi::CallbackInfo &info);
	Napi::Value SetI64(const Napi::CallbackInfo &info);
	Napi::Value GetF64(const Napi::CallbackInfo &info);
	Napi::Value SetF64(const Napi::CallbackInfo &info);
	Napi::Value GetRef(const Napi::CallbackInfo &info);
	Napi::Value SetRef(const Napi::CallbackInfo &info);
	Napi::Value GetStr(const Napi::CallbackInfo &info);
	Napi::Value SetStr(const Napi::CallbackInfo &info);
	Napi::Value GetInline(const Napi::CallbackInfo &info);
	Napi::Value SetInline(const Napi::CallbackInfo &info);
	Napi::Value StringAt(const Napi::CallbackInfo &info);
	Napi::Value ReadFields(const Napi::CallbackInfo &info);

	/* collections.cc */
	Napi::Value MapNew(const Napi::CallbackInfo &info);
	Napi::Value MapKeyKind(const Napi::CallbackInfo &info);
	Napi::Value MapLen(const Napi::CallbackInfo &info);
	Napi::Value MapGet(const Napi::CallbackInfo &info);
	Napi::Value MapView(const Napi::CallbackInfo &info);
	Napi::Value MapPut(const Napi::CallbackInfo &info);
	Napi::Value MapRemove(const Napi::CallbackInfo &info);
	Napi::Value MapCheck(const Napi::CallbackInfo &info);
	Napi::Value MapIter(const Napi::CallbackInfo &info);
	Napi::Value IterNext(const Napi::CallbackInfo &info);
	Napi::Value IterNextN(const Napi::CallbackInfo &info);
	Napi::Value ListNew(const Napi::CallbackInfo &info);
	Napi::Value SeqLen(const Napi::CallbackInfo &info);
	Napi::Value SeqGet(const Napi::CallbackInfo &info);
	Napi::Value SeqSet(const Napi::CallbackInfo &info);
	Napi::Value ListInsert(const Napi::CallbackInfo &info);
	Napi::Value ListPop(const Napi::CallbackInfo &info);
	Napi::Value ArrayNew(const Napi::CallbackInfo &info);
	Napi::Value ArrayElemType(const Napi::CallbackInfo &info);

	/* records.cc */
	Napi::Value MapGetRecord(const Napi::CallbackInfo &info);
	Napi::Value MapSetField(const Napi::CallbackInfo &info);
	Napi::Value RangeRecords(const Napi::CallbackInfo &info);
	Napi::Value MapPutRecord(const Napi::CallbackInfo &info);
	Napi::Value MapPutRecordPacked(const Napi::CallbackInfo &info);

	/* wait.cc */
	Napi::Value Token(const Napi::CallbackInfo &info);
	Napi::Value WaitStart(const Napi::CallbackInfo &info);
	Napi::Value WaitCancel(const Napi::CallbackInfo &info);
	Napi::Value WaitSync(const Napi::CallbackInfo &info);
};

}  // namespace uhn

#endif
