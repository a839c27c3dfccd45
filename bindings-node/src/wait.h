/*
 * wait.h -- the wait sessions of one Session (uniheap.h, "Waiting for
 * changes").
 *
 * A wait blocks the libuniheap session it runs on, so a Session never
 * waits on its own: it keeps a pool of wait sessions, opened from its own
 * with uh_session_open() when no idle one is left, each lent to one wait
 * at a time and all closed with the Session. An async wait runs on the
 * wait session's own thread (started at its first async wait), never on
 * the event loop nor on libuv's threadpool, so waits with no timeout
 * cannot starve the pool that fs, dns and zlib share. The result goes
 * back to the event loop through a thread-safe function made for that
 * wait, which keeps the loop alive while the wait runs.
 *
 * Threads: the pool's lists, and each wait session's job, are guarded by
 * the pool's mutex; the event-loop thread takes sessions, starts jobs,
 * cancels them and closes the pool; a wait session's thread runs its job
 * with the mutex released and gives itself back. Closing cancels every
 * running wait, then joins the threads, then disconnects the sessions.
 */
#ifndef UNIHEAP_NODE_WAIT_H
#define UNIHEAP_NODE_WAIT_H

#include "addon.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace uhn {

/* What a wait ended with besides uh_wait()'s 1, 0 and UH_E* codes: it was
 * cancelled (an AbortSignal, or the pool closed). */
enum : int { WAIT_CANCELLED = 2 };

/* One async wait: what to wait for, and how it ended. */
struct WaitJob {
	uint32_t id;
	uh_off obj;
	uint64_t since;
	int64_t timeout_ns;	/* < 0: none */
	std::atomic<bool> cancelled{ false };
	int rc = 0;		/* 1, 0, WAIT_CANCELLED or a UH_E* code */
	uint64_t now = 0;	/* the token when it ended */
	Failure f{ 0, "" };
	napi_threadsafe_function done = nullptr;	/* calls the JS callback (wait.cc) */
};

class WaitPool;

/* A libuniheap session lent to one wait at a time, and its thread. */
struct WaitSession {
	WaitPool *pool;
	uh_heap *h;
	std::thread thread;	/* started at the first async wait */
	std::condition_variable cv;
	WaitJob *job = nullptr;	/* the running async wait, owned until posted */
	bool quit = false;	/* the thread ends once it has no job */
	bool retired = false;	/* surplus: to be joined and closed */

	void run();
};

class WaitPool {
public:
	/* Sessions opened from h, with h's read-only-ness. */
	explicit WaitPool(uh_heap *h) : from(h) {}
	~WaitPool();

	/* An idle wait session, opened when there is none: 0 or a UH_E*
	 * code (f set). The caller owns it until give() or start(). */
	int take(WaitSession **out, Failure *f);
	/* Return a session used by the calling thread (waitSync). */
	void give(WaitSession *ws);
	/* Run job on ws's thread; the thread gives ws back when it ends. */
	void start(WaitSession *ws, WaitJob *job);
	/* Cancel the running wait of that id; false when none runs. */
	bool cancel(uint32_t id);

	std::mutex m;
	/* Called by a session's thread, m held: back to the idle list, or
	 * retired when enough are idle. */
	void returned(WaitSession *ws);

private:
	void reap();	/* join and close retired sessions (event-loop thread) */
	void close_one(WaitSession *ws);

	uh_heap *from;
	std::vector<std::unique_ptr<WaitSession>> all;
	std::vector<WaitSession *> idle;
};

}  // namespace uhn

#endif
