/*
 * wait.cc -- waiting for changes: the pool of wait sessions (wait.h) and
 * the Session methods over it: token, waitStart (async, its result handed
 * to a callback on the event loop), waitCancel and waitSync.
 *
 * Cancelling: uh_wait_cancel() ends the wait in progress on a session, but
 * not one that starts after it, and a wait session's thread cannot start
 * its uh_wait() and read the cancel flag in one step. So the thread waits
 * in slices of at most SLICE_NS and reads the job's flag before each: a
 * cancel that lands just before a slice starts is seen at the end of that
 * slice at the latest; any other ends the wait at once. A slice compares
 * the tokens with the same since, so no change is lost between slices.
 */
#include "wait.h"

#include "session.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace uhn {

namespace {

constexpr int64_t SLICE_NS = 200000000;		/* 200 ms */
/* Idle wait sessions kept open; more are closed once their wait ends. */
constexpr size_t IDLE_MAX = 4;

int64_t mono_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(
		std::chrono::steady_clock::now().time_since_epoch()).count();
}

/* The wait of job j on h, in slices (see the top of the file). */
void run_job(uh_heap *h, WaitJob *j)
{
	int64_t deadline = j->timeout_ns < 0 ? INT64_MAX : mono_ns() + j->timeout_ns;

	for (;;) {	/* bound: the deadline, or a cancel seen at a slice's start */
		if (j->cancelled.load()) {
			j->rc = WAIT_CANCELLED;
			return;
		}
		int64_t left = deadline == INT64_MAX ? SLICE_NS : deadline - mono_ns();
		j->rc = uh_wait(h, j->obj, j->since, left < 0 ? 0 : std::min(left, SLICE_NS),
				&j->now);
		if (j->rc < 0)
			j->f = failure(j->rc);
		if (j->rc != 0 || mono_ns() >= deadline)
			return;
	}
}

/* On the event loop: callback(error | null, token | null | undefined):
 * a token when the thing changed, null on timeout, undefined when the
 * wait was cancelled. Frees the job. */
void deliver(Napi::Env env, Napi::Function cb, std::nullptr_t *, WaitJob *j)
{
	std::unique_ptr<WaitJob> own(j);

	if ((napi_env)env == nullptr || cb.IsEmpty())
		return;	/* the environment is being torn down */
	Napi::Value err = env.Null();
	Napi::Value val = env.Undefined();
	if (j->rc == 1)
		val = Napi::BigInt::New(env, j->now);
	else if (j->rc == 0)
		val = env.Null();
	else if (j->rc < 0)
		err = data(env)->make_error.Call({ Napi::Number::New(env, j->rc),
						   Napi::String::New(env, "wait: " + j->f.msg) });
	if (!env.IsExceptionPending())
		cb.Call({ err, val });
}

using Done = Napi::TypedThreadSafeFunction<std::nullptr_t, WaitJob, deliver>;

/* Hand j's result to the event loop; j is freed there (or here when the
 * environment is already gone). */
void post(WaitJob *j)
{
	Done done = Done(j->done);

	if (done.BlockingCall(j) != napi_ok)
		delete j;
	done.Release();
}

}  // namespace

/* ---- the pool ---- */

void WaitSession::run()
{
	std::unique_lock<std::mutex> g(pool->m);

	for (;;) {	/* bound: one turn per job, until quit */
		cv.wait(g, [this] { return job != nullptr || quit; });
		if (!job)
			return;
		WaitJob *j = job;
		g.unlock();
		run_job(h, j);
		g.lock();
		job = nullptr;
		pool->returned(this);
		g.unlock();
		post(j);
		g.lock();
	}
}

void WaitPool::returned(WaitSession *ws)
{
	if (idle.size() < IDLE_MAX) {
		idle.push_back(ws);
	} else {
		ws->retired = true;
		ws->quit = true;
	}
}

void WaitPool::close_one(WaitSession *ws)
{
	if (ws->thread.joinable())
		ws->thread.join();
	uh_disconnect(ws->h);
	ws->h = nullptr;
}

void WaitPool::reap()
{
	std::vector<WaitSession *> gone;
	{
		std::lock_guard<std::mutex> g(m);
		for (auto &ws : all)
			if (ws->retired)
				gone.push_back(ws.get());
	}
	for (WaitSession *ws : gone)	/* bound: the sessions */
		close_one(ws);
	/* Only those joined: others may have retired meanwhile. */
	std::lock_guard<std::mutex> g(m);
	for (size_t i = all.size(); i-- > 0;) {	/* bound: the sessions */
		if (std::find(gone.begin(), gone.end(), all[i].get()) != gone.end())
			all.erase(all.begin() + (long)i);
	}
}

int WaitPool::take(WaitSession **out, Failure *f)
{
	reap();
	{
		std::lock_guard<std::mutex> g(m);
		if (!idle.empty()) {
			*out = idle.back();
			idle.pop_back();
			return 0;
		}
	}
	auto ws = std::make_unique<WaitSession>();
	/* Read-only: a wait writes nothing, and heapd then gives the session
	 * no log (a writing session's costs 1 MiB of heap). */
	int rc = uh_session_open(from, UH_READONLY, &ws->h);
	if (rc) {
		*f = failure(rc);
		return rc;
	}
	ws->pool = this;
	*out = ws.get();
	std::lock_guard<std::mutex> g(m);
	all.push_back(std::move(ws));
	return 0;
}

void WaitPool::give(WaitSession *ws)
{
	std::lock_guard<std::mutex> g(m);
	returned(ws);
}

void WaitPool::start(WaitSession *ws, WaitJob *job)
{
	std::lock_guard<std::mutex> g(m);
	ws->job = job;
	if (!ws->thread.joinable())
		ws->thread = std::thread([ws] { ws->run(); });
	else
		ws->cv.notify_one();
}

bool WaitPool::cancel(uint32_t id)
{
	std::lock_guard<std::mutex> g(m);

	for (auto &ws : all) {
		if (ws->job && ws->job->id == id) {
			ws->job->cancelled.store(true);
			uh_wait_cancel(ws->h);
			return true;
		}
	}
	return false;
}

/* Cancel every running wait, end the threads (each hands its result to
 * the event loop first), close the sessions. */
WaitPool::~WaitPool()
{
	{
		std::lock_guard<std::mutex> g(m);
		for (auto &ws : all) {
			ws->quit = true;
			if (ws->job) {
				ws->job->cancelled.store(true);
				uh_wait_cancel(ws->h);
			}
			ws->cv.notify_one();
		}
	}
	for (auto &ws : all)	/* bound: the sessions */
		close_one(ws.get());
}

/* ---- Session methods ---- */

namespace {

bool arg_token(Napi::Env env, Napi::Value v, uint64_t *out)
{
	bool lossless = false;

	if (v.IsBigInt())
		*out = v.As<Napi::BigInt>().Uint64Value(&lossless);
	if (!lossless) {
		raise_msg(env, UH_EINVAL, "since: a token (a bigint from token() or changed())");
		return false;
	}
	return true;
}

/* A timeout in ms (a number; < 0: none) as ns. */
int64_t timeout_ns(Napi::Value v)
{
	double ms = v.As<Napi::Number>().DoubleValue();

	if (!(ms >= 0))
		return -1;
	return ms >= 9e12 ? INT64_MAX / 2 : (int64_t)std::llround(ms * 1e6);
}

}  // namespace

WaitPool *Session::wait_pool()
{
	if (!waits)
		waits = new WaitPool(h);
	return waits;
}

void Session::close_waits()
{
	delete waits;
	waits = nullptr;
}

/* token(off, gen) -> the change token of the object (off 1: the roots) */
Napi::Value Session::Token(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off obj;
	uint64_t tok;
	int rc;

	if (!open(env) || !arg_ref(info, 0, &obj))
		return env.Undefined();
	if ((rc = uh_change_token(h, obj, &tok)) != 0)
		return raise(env, rc, "token");
	return Napi::BigInt::New(env, tok);
}

/* waitStart(off, gen, since, timeoutMs, callback) -> the wait's id:
 * runs the wait on a wait session's thread; callback(error, result) on the
 * event loop (deliver above). */
Napi::Value Session::WaitStart(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off obj;
	uint64_t since;
	WaitSession *ws;
	Failure f{ 0, "" };

	if (!open(env) || !arg_ref(info, 0, &obj) || !arg_token(env, info[2], &since))
		return env.Undefined();
	if (!info[4].IsFunction())
		return type_error(env, "waitStart: callback must be a function");
	if (uh_in_block(h) > 0)
		return raise_msg(env, UH_ESTATE, "wait: inside a block, which sees one snapshot; "
				 "wait outside blocks");
	if (wait_pool()->take(&ws, &f) != 0)
		return raise(env, f, "wait session");
	auto *j = new WaitJob();
	j->id = ++wait_ids;
	j->obj = obj;
	j->since = since;
	j->timeout_ns = timeout_ns(info[3]);
	j->done = Done::New(env, info[4].As<Napi::Function>(), "uniheap.wait", 0, 1);
	waits->start(ws, j);
	return Napi::Number::New(env, j->id);
}

/* waitCancel(id): end that wait (its callback gets undefined); false
 * when it has ended already. */
Napi::Value Session::WaitCancel(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uint32_t id = info[0].As<Napi::Number>().Uint32Value();

	return Napi::Boolean::New(env, waits && waits->cancel(id));
}

/* waitSync(off, gen, since, timeoutMs) -> the new token, or null on
 * timeout: blocks this thread on a wait session. */
Napi::Value Session::WaitSync(const Napi::CallbackInfo &info)
{
	Napi::Env env = info.Env();
	uh_off obj;
	uint64_t since, now = 0;
	WaitSession *ws;
	Failure f{ 0, "" };

	if (!open(env) || !arg_ref(info, 0, &obj) || !arg_token(env, info[2], &since))
		return env.Undefined();
	if (uh_in_block(h) > 0)
		return raise_msg(env, UH_ESTATE, "wait: inside a block, which sees one snapshot; "
				 "wait outside blocks");
	if (wait_pool()->take(&ws, &f) != 0)
		return raise(env, f, "wait session");
	int rc = uh_wait(ws->h, obj, since, timeout_ns(info[3]), &now);
	if (rc < 0)
		f = failure(rc);
	waits->give(ws);
	if (rc < 0)
		return raise(env, f, "wait");
	return rc == 1 ? (Napi::Value)Napi::BigInt::New(env, now) : env.Null();
}

}  // namespace uhn
