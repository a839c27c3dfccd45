/*
 * control.cc -- the one gRPC control client of a process (see control.h).
 *
 * Lifetime rules, because libuniheap lives inside runtimes (CPython, Node,
 * the JVM) that may unload or exit under gRPC's threads:
 *  - No static C++ object with a destructor. Channels live in a list of
 *    heap objects that is never freed; gRPC is never shut down.
 *  - One channel per process per socket path, created on first use.
 *  - A uhc remembers the pid that attached it. After fork() every call in
 *    the child on a uhc of the parent fails with UH_EFORK and touches no
 *    gRPC state (gRPC in a forked child hangs it and breaks the parent's
 *    connection). A child forked after gRPC ran here sends every call to
 *    a fresh copy of the library instead (ctlcopy.h), from the
 *    first lines of each extern "C" function below.
 *
 * A session is one Attach stream. A reader thread per session reads the
 * Welcome and then keeps reading, so that the end of the stream (heapd
 * died or was stopped) is noticed at once: uhc_connected() turns 0 and
 * every later call fails fast with UH_EDISCONNECTED.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "uniheap/v1/heapd.grpc.pb.h"

#include "control.h"
#include "ctlcopy.h"
#include "error.h"
#include "utf8.h"

namespace pb = uniheap::v1;

namespace {

constexpr int kConnectTimeoutMs = 5000;	/* channel connect + Welcome */
constexpr int kCallTimeoutMs = 10000;	/* each unary call */
constexpr int kGoodbyeWaitMs = 2000;	/* heapd ending the stream at detach */

/* One channel per socket path, per process. Entries are never freed. */
struct chan_ent {
	std::string path;
	pid_t pid;	/* process that created it; a forked child makes its own */
	std::shared_ptr<grpc::Channel> channel;
	std::unique_ptr<pb::Heapd::Stub> stub;
	chan_ent *next;
};

/* Plain C objects: no destructors run at exit. */
pthread_mutex_t chan_lock = PTHREAD_MUTEX_INITIALIZER;
chan_ent *chan_list;

/* Reconnect quickly after a heapd restart instead of gRPC's default
 * backoff (1 s growing to 2 min), so a new attach (and a re-attach, which
 * waits for the restarted heapd) never waits long. */
grpc::ChannelArguments channel_args()
{
	grpc::ChannelArguments a;
	a.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
	a.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20);
	a.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
	return a;
}

/* The pid that created gRPC state this process inherited through fork(),
 * or 0. gRPC cannot run in such a child: its threads are gone and its
 * pollers and connections are shared with the parent, so a call there
 * hangs the child and breaks the parent's connection. */
pid_t inherited_from()
{
	pid_t me = getpid(), other = 0;
	pthread_mutex_lock(&chan_lock);
	for (chan_ent *e = chan_list; e; e = e->next)
		if (e->pid != me)
			other = e->pid;
	pthread_mutex_unlock(&chan_lock);
	return other;
}

/* The channel for path, created on first use. Throws std::bad_alloc. */
chan_ent *channel_get(const char *path)
{
	pid_t me = getpid();
	pthread_mutex_lock(&chan_lock);
	chan_ent *e;
	for (e = chan_list; e; e = e->next)
		if (e->pid == me && e->path == path)
			break;
	if (!e) {
		try {
			e = new chan_ent();
			e->path = path;
			e->pid = me;
			e->channel = grpc::CreateCustomChannel(
				std::string("unix:") + path,
				grpc::InsecureChannelCredentials(), channel_args());
			e->stub = pb::Heapd::NewStub(e->channel);
			e->next = chan_list;
			chan_list = e;
		} catch (...) {
			pthread_mutex_unlock(&chan_lock);
			throw;
		}
	}
	pthread_mutex_unlock(&chan_lock);
	return e;
}

/* Why a plain connect() to path fails right now, or "" if it succeeds.
 * Used only when gRPC reports a failed connection, to name the reason
 * (no socket file, nobody listening) instead of waiting out the deadline. */
std::string probe_socket(const char *path)
{
	struct sockaddr_un sa;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return strerror(errno);
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	int e = errno;
	close(fd);
	return rc == 0 ? std::string() : std::string(strerror(e));
}

typedef std::chrono::system_clock::time_point deadline_t;

/* Wait until deadline for the channel to be READY. Fails early when the
 * socket is plainly dead (missing file, refused). */
int wait_connected(chan_ent *e, const char *path, deadline_t deadline)
{
	for (;;) {
		grpc_connectivity_state s = e->channel->GetState(true);
		if (s == GRPC_CHANNEL_READY)
			return 0;
		if (s == GRPC_CHANNEL_TRANSIENT_FAILURE) {
			std::string why = probe_socket(path);
			if (!why.empty())
				return uh_err_set(UH_EDISCONNECTED,
						  "cannot reach heapd at %s: %s; is heapd running?",
						  path, why.c_str());
		}
		/* Poll in short steps so a TRANSIENT_FAILURE that persists is
		 * probed again rather than waited out. */
		auto step = std::chrono::system_clock::now() + std::chrono::milliseconds(100);
		if (step > deadline)
			step = deadline;
		if (!e->channel->WaitForStateChange(s, step) &&
		    std::chrono::system_clock::now() >= deadline)
			return uh_err_set(UH_EDISCONNECTED,
					  "cannot reach heapd at %s: no connection within %d s; is heapd running?",
					  path, kConnectTimeoutMs / 1000);
	}
}

/* protobuf refuses strings that are not UTF-8, so names are checked
 * here, where the caller still gets a clear UH_EINVAL. */
bool utf8_valid(const char *s)
{
	return uh_utf8_valid(s, strlen(s), nullptr) != 0;
}

/* s with each invalid byte replaced by '?': the client description is
 * free text for logs and must not make Attach fail. */
std::string utf8_clean(const char *s)
{
	std::string out(strlen(s), '\0');
	uh_utf8_clean(s, out.size(), &out[0]);
	return out;
}

/* control.h's mapping of gRPC status codes to UH_E* codes. */
int status_code_to_uh(grpc::StatusCode c)
{
	switch (c) {
	case grpc::StatusCode::INVALID_ARGUMENT: return UH_EINVAL;
	case grpc::StatusCode::FAILED_PRECONDITION: return UH_ECLASSMISMATCH;
	case grpc::StatusCode::RESOURCE_EXHAUSTED: return UH_ENOSPC;
	case grpc::StatusCode::NOT_FOUND: return UH_ENOTFOUND;
	case grpc::StatusCode::UNAVAILABLE:
	case grpc::StatusCode::DEADLINE_EXCEEDED:
	case grpc::StatusCode::CANCELLED: return UH_EDISCONNECTED;
	default: return UH_EPROTO;
	}
}

/* Set the error for a failed call `what` and return its UH_E* code. */
int status_err(const char *what, const std::string &path, const grpc::Status &s)
{
	int code = status_code_to_uh(s.error_code());
	if (code == UH_EDISCONNECTED)
		return uh_err_set(code, "%s: cannot reach heapd at %s: %s", what,
				  path.c_str(), s.error_message().c_str());
	return uh_err_set(code, "%s: %s", what, s.error_message().c_str());
}

} /* namespace */

typedef grpc::ClientReaderWriter<pb::ClientMessage, pb::ServerMessage> attach_stream;

struct uhc {
	pid_t pid;		/* the process that attached */
	std::string socket;
	chan_ent *chan;		/* shared, never freed */
	uint32_t session;
	uint64_t token;

	/* The Attach stream; ctx has no deadline: it lives as long as the
	 * session. The reader thread is its only reader. */
	grpc::ClientContext ctx;
	std::unique_ptr<attach_stream> stream;
	std::thread reader;

	/* Set by the reader thread under mu. */
	std::mutex mu;
	std::condition_variable cv;
	bool got_first = false;		/* first ServerMessage in `first` */
	bool ended = false;		/* Read() returned false: stream over */
	pb::ServerMessage first;
	/* ended, for lock-free checks on every block (uhc_connected). */
	std::atomic<bool> gone{ false };

	/* Normally the reader is joined already (stream_finish); this only
	 * runs on error paths, where a joinable std::thread would abort. */
	~uhc()
	{
		if (reader.joinable()) {
			ctx.TryCancel();
			reader.join();
		}
	}
};

namespace {

/* Reader thread: take the first message (Welcome or Refused), then read
 * until the stream ends. Nothing else is expected from heapd; the end is
 * the point. */
void reader_main(uhc *c)
{
	pb::ServerMessage m;
	bool ok = c->stream->Read(&m);
	{
		std::lock_guard<std::mutex> g(c->mu);
		if (ok) {
			c->first.Swap(&m);
			c->got_first = true;
		} else {
			c->ended = true;
			c->gone.store(true, std::memory_order_release);
		}
	}
	c->cv.notify_all();
	if (!ok)
		return;
	while (c->stream->Read(&m))
		;
	{
		std::lock_guard<std::mutex> g(c->mu);
		c->ended = true;
		c->gone.store(true, std::memory_order_release);
	}
	c->cv.notify_all();
}

/* Start the reader with every signal blocked, so the host runtime's
 * signal handling (CPython, the JVM, Node) never lands on our thread. */
void start_reader(uhc *c)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	try {
		c->reader = std::thread(reader_main, c);
	} catch (...) {
		pthread_sigmask(SIG_SETMASK, &old, nullptr);
		throw;
	}
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

/* Wait until the reader saw the stream end, at most ms; true if it did. */
bool wait_ended(uhc *c, int ms)
{
	std::unique_lock<std::mutex> g(c->mu);
	return c->cv.wait_for(g, std::chrono::milliseconds(ms), [c] { return c->ended; });
}

/* End the stream from our side (cancelling it if heapd does not close it
 * in time), join the reader and collect the final status. */
grpc::Status stream_finish(uhc *c, int wait_ms)
{
	if (!wait_ended(c, wait_ms)) {
		c->ctx.TryCancel();
		wait_ended(c, 60 * 1000);
	}
	if (c->reader.joinable())
		c->reader.join();
	return c->stream->Finish();
}

/* Common checks of every session-scoped call. */
int call_check(uhc *c, const char *what)
{
	if (!c)
		return uh_err_set(UH_EINVAL, "%s: no session (NULL handle)", what);
	if (getpid() != c->pid)
		return uh_err_set(UH_EFORK,
				  "%s: heap handle used in a forked child (attached in pid %d, this is pid %d); attach anew in the child",
				  what, (int)c->pid, (int)getpid());
	std::lock_guard<std::mutex> g(c->mu);
	if (c->ended)
		return uh_err_set(UH_EDISCONNECTED,
				  "%s: session lost: heapd at %s ended the session (heapd stopped or died); connect again",
				  what, c->socket.c_str());
	return 0;
}

void set_ref(uhc *c, pb::SessionRef *r)
{
	r->set_session(c->session);
	r->set_token(c->token);
}

void set_deadline(grpc::ClientContext *ctx)
{
	ctx->set_deadline(std::chrono::system_clock::now() +
			  std::chrono::milliseconds(kCallTimeoutMs));
}

void copy_str(char *dst, size_t n, const std::string &s)
{
	size_t len = s.size() < n - 1 ? s.size() : n - 1;
	memcpy(dst, s.data(), len);
	dst[len] = '\0';
}

void fill_welcome(uhc *c, const pb::Welcome &wm, struct uhc_welcome *w)
{
	c->session = wm.session();
	c->token = wm.token();
	if (!w)
		return;
	memset(w, 0, sizeof(*w));
	w->session = wm.session();
	w->token = wm.token();
	w->heap_size = wm.heap_size();
	w->header_off = wm.header_off();
	w->format_version = wm.format_version();
	w->durability = (uint32_t)wm.durability();
	w->log_off = wm.log_off();
	w->log_size = wm.log_size();
	copy_str(w->heap_path, sizeof(w->heap_path), wm.heap_path());
	copy_str(w->heap_name, sizeof(w->heap_name), wm.heap_name());
	copy_str(w->gc_path, sizeof(w->gc_path), wm.gc_path());
}

/* Send Hello, wait for the first answer, act on it. On failure the
 * stream is finished and the error set; c is still to be deleted.
 * *retry is set when the stream broke before heapd answered anything
 * (e.g. the channel still held the connection of a heapd that has just
 * been restarted): heapd then has no session for it, so trying again
 * is safe. */
int handshake(uhc *c, int readonly, const char *client_desc, uint32_t prev_session,
	      uint64_t prev_token, struct uhc_welcome *w, bool *retry)
{
	*retry = false;
	pb::ClientMessage hello;
	pb::Hello *h = hello.mutable_hello();
	h->set_protocol_version(UH_PROTOCOL_VERSION);
	h->set_pid((uint32_t)c->pid);
	h->set_client(utf8_clean(client_desc ? client_desc : ""));
	h->set_readonly(readonly != 0);
	h->set_previous_session(prev_session);
	h->set_previous_token(prev_token);

	c->stream = c->chan->stub->Attach(&c->ctx);
	start_reader(c);
	c->stream->Write(hello);	/* a failure shows as the stream ending */

	bool answered;
	{
		std::unique_lock<std::mutex> g(c->mu);
		answered = c->cv.wait_for(g, std::chrono::milliseconds(kConnectTimeoutMs),
					  [c] { return c->got_first || c->ended; });
	}
	if (!answered) {
		stream_finish(c, 0);
		return uh_err_set(UH_EDISCONNECTED,
				  "cannot reach heapd at %s: no answer to Hello within %d s",
				  c->socket.c_str(), kConnectTimeoutMs / 1000);
	}
	if (!c->got_first) {
		grpc::Status s = stream_finish(c, 0);
		*retry = s.error_code() == grpc::StatusCode::UNAVAILABLE;
		if (s.ok())
			s = grpc::Status(grpc::StatusCode::UNAVAILABLE,
					 "heapd ended the session stream without answering Hello");
		return status_err("Attach", c->socket, s);
	}
	if (c->first.has_refused()) {
		std::string why = c->first.refused().reason();
		c->stream->WritesDone();
		stream_finish(c, kGoodbyeWaitMs);
		return uh_err_set(UH_EPROTO, "Attach: heapd at %s refused the session: %s",
				  c->socket.c_str(), why.c_str());
	}
	if (!c->first.has_welcome()) {
		c->stream->WritesDone();
		stream_finish(c, 0);
		return uh_err_set(UH_EPROTO, "Attach: heapd answered Hello with neither Welcome nor Refused");
	}
	const pb::Welcome &wm = c->first.welcome();
	if (wm.heap_path().empty() || wm.heap_path().size() >= sizeof(w->heap_path) ||
	    wm.heap_path().find('\0') != std::string::npos) {
		c->stream->WritesDone();
		stream_finish(c, 0);
		return uh_err_set(UH_EPROTO, "Attach: heapd sent an unusable heap path (%zu bytes)",
				  wm.heap_path().size());
	}
	fill_welcome(c, wm, w);
	return 0;
}

int do_attach(const char *socket, int readonly, const char *client_desc, uint32_t prev_session,
	      uint64_t prev_token, uhc **out, struct uhc_welcome *w)
{
	if (!socket || !*socket)
		return uh_err_set(UH_EINVAL, "uhc_attach: no socket path");
	if (!out)
		return uh_err_set(UH_EINVAL, "uhc_attach: out is NULL");
	if (strlen(socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return uh_err_set(UH_EINVAL, "socket path too long (at most %zu bytes): %s",
				  sizeof(((struct sockaddr_un *)0)->sun_path) - 1, socket);

	uhc_fork_watch();	/* gRPC runs here from now on */
	pid_t parent = inherited_from();
	if (parent)
		return uh_err_set(UH_EFORK,
				  "uhc_attach: this process (pid %d) was forked from pid %d after that one had used heapd, and gRPC cannot run in such a child; connect from a process started with exec (e.g. multiprocessing's 'spawn') or forked before connecting",
				  (int)getpid(), (int)parent);
	chan_ent *e = channel_get(socket);
	deadline_t deadline = std::chrono::system_clock::now() +
			      std::chrono::milliseconds(kConnectTimeoutMs);
	for (;;) {
		int rc = wait_connected(e, socket, deadline);
		if (rc)
			return rc;
		std::unique_ptr<uhc> c(new uhc());
		c->pid = getpid();
		c->socket = socket;
		c->chan = e;
		bool retry;
		rc = handshake(c.get(), readonly, client_desc, prev_session, prev_token, w, &retry);
		if (rc == 0) {
			*out = c.release();
			return 0;
		}
		if (!retry || std::chrono::system_clock::now() >= deadline)
			return rc;
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	}
}

} /* namespace */

extern "C" int uhc_attach(const char *socket, int readonly, const char *client_desc,
			  uint32_t prev_session, uint64_t prev_token, uhc **out,
			  struct uhc_welcome *w)
{
	int rc;
	if (const struct uhc_ops *f = uhc_fork_ops_load(&rc)) {
		rc = f->attach(socket, readonly, client_desc, prev_session, prev_token, out, w);
		return rc ? uhc_fork_err(f, rc) : 0;
	}
	if (rc)
		return rc;
	try {
		return do_attach(socket, readonly, client_desc, prev_session, prev_token, out, w);
	} catch (const std::bad_alloc &) {
		return uh_err_set(UH_ENOMEM, "uhc_attach: out of memory");
	} catch (const std::exception &ex) {
		return uh_err_set(UH_EPROTO, "uhc_attach: %s", ex.what());
	}
}

extern "C" void uhc_detach(uhc *c)
{
	if (!c)
		return;
	if (const struct uhc_ops *f = uhc_fork_ops()) {
		f->detach(c);
		return;
	}
	/* In a forked child the stream and thread belong to the parent's
	 * gRPC state: touching them could hang the child or break the
	 * parent's connection. Leak the handle instead. */
	if (getpid() != c->pid)
		return;
	try {
		bool ended;
		{
			std::lock_guard<std::mutex> g(c->mu);
			ended = c->ended;
		}
		if (!ended) {
			pb::ClientMessage bye;
			bye.mutable_goodbye();
			c->stream->Write(bye);
			c->stream->WritesDone();
		}
		stream_finish(c, kGoodbyeWaitMs);
	} catch (...) {
		/* Can't fail: heapd reaps the session when the stream dies. */
	}
	delete c;
}

extern "C" int uhc_wait_ended(uhc *c, int ms)
{
	if (const struct uhc_ops *f = uhc_fork_ops())
		return f->wait_ended(c, ms);
	if (!c || getpid() != c->pid)
		return 0;
	try {
		return wait_ended(c, ms) ? 1 : 0;
	} catch (...) {
		return 0;
	}
}

extern "C" int uhc_connected(uhc *c)
{
	/* No getpid() here: it is a system call, and this runs at every
	 * block. In a forked child gone stays false, and every call that
	 * would use the stream checks the pid (call_check). */
	if (const struct uhc_ops *f = uhc_fork_ops())
		return f->connected(c);
	return c && !c->gone.load(std::memory_order_acquire);
}

namespace {

int do_register_class(uhc *c, const char *name, const uh_field_spec *fields,
		      uint32_t nfields, uint32_t *class_id)
{
	if (!name)
		return uh_err_set(UH_EINVAL, "RegisterClass: class name is NULL");
	if (!utf8_valid(name))
		return uh_err_set(UH_EINVAL, "RegisterClass: class name is not valid UTF-8");
	if (nfields && !fields)
		return uh_err_set(UH_EINVAL, "RegisterClass %s: %u fields but fields is NULL",
				  name, nfields);
	pb::RegisterClassRequest req;
	set_ref(c, req.mutable_session());
	req.set_name(name);
	for (uint32_t i = 0; i < nfields; i++) {
		if (!fields[i].name)
			return uh_err_set(UH_EINVAL, "RegisterClass %s: field %u has no name",
					  name, i);
		if (!utf8_valid(fields[i].name))
			return uh_err_set(UH_EINVAL,
					  "RegisterClass %s: field %u name is not valid UTF-8", name, i);
		pb::FieldSpec *f = req.add_fields();
		f->set_name(fields[i].name);
		/* Unknown values pass through: heapd names them in its error. */
		f->set_type(static_cast<pb::FieldType>(fields[i].type));
		if (fields[i].type == UH_T_ISTRING || fields[i].type == UH_T_IBYTES)
			f->set_capacity(fields[i].ref_class);	/* the capacity */
		else
			f->set_ref_class(fields[i].ref_class);
	}
	pb::RegisterClassResponse resp;
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	grpc::Status s = c->chan->stub->RegisterClass(&ctx, req, &resp);
	if (!s.ok())
		return status_err("RegisterClass", c->socket, s);
	if (class_id)
		*class_id = resp.class_id();
	return 0;
}

void fill_arena(const pb::LeaseArenaResponse &r, struct uhc_arena *out)
{
	if (!out)
		return;
	out->arena_off = r.arena_off();
	out->slot_size = r.slot_size();
	out->nslots = r.nslots();
	out->first_slot = r.first_slot();
}

int do_lease_arena(uhc *c, uint32_t slot_size, struct uhc_arena *out)
{
	pb::LeaseArenaRequest req;
	set_ref(c, req.mutable_session());
	req.set_slot_size(slot_size);
	pb::LeaseArenaResponse resp;
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	grpc::Status s = c->chan->stub->LeaseArena(&ctx, req, &resp);
	if (!s.ok())
		return status_err("LeaseArena", c->socket, s);
	fill_arena(resp, out);
	return 0;
}

int do_lease_large(uhc *c, uint64_t size, struct uhc_arena *out)
{
	pb::LeaseLargeRequest req;
	set_ref(c, req.mutable_session());
	req.set_size(size);
	pb::LeaseArenaResponse resp;
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	grpc::Status s = c->chan->stub->LeaseLarge(&ctx, req, &resp);
	if (!s.ok())
		return status_err("LeaseLarge", c->socket, s);
	fill_arena(resp, out);
	return 0;
}

int do_return_arena(uhc *c, uint64_t arena_off)
{
	pb::ReturnArenaRequest req;
	set_ref(c, req.mutable_session());
	req.set_arena_off(arena_off);
	pb::ReturnArenaResponse resp;
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	grpc::Status s = c->chan->stub->ReturnArena(&ctx, req, &resp);
	if (!s.ok())
		return status_err("ReturnArena", c->socket, s);
	return 0;
}

int do_lease_log_extent(uhc *c, uint64_t size, uint64_t *off, uint64_t *got)
{
	pb::LeaseLogExtentRequest req;
	set_ref(c, req.mutable_session());
	req.set_size(size);
	pb::LeaseLogExtentResponse resp;
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	grpc::Status s = c->chan->stub->LeaseLogExtent(&ctx, req, &resp);
	if (!s.ok())
		return status_err("LeaseLogExtent", c->socket, s);
	*off = resp.extent_off();
	*got = resp.size();
	return 0;
}

int do_trim_log(uhc *c)
{
	pb::TrimLogRequest req;
	set_ref(c, req.mutable_session());
	pb::TrimLogResponse resp;
	grpc::ClientContext ctx;
	set_deadline(&ctx);
	grpc::Status s = c->chan->stub->TrimLog(&ctx, req, &resp);
	if (!s.ok())
		return status_err("TrimLog", c->socket, s);
	return 0;
}

/* Run a unary call body after the common checks; no exception leaves.
 * In a child that uses a copy of the library, fwd makes the call there. */
template <typename F, typename G> int guarded(uhc *c, const char *what, G fwd, F body)
{
	if (const struct uhc_ops *f = uhc_fork_ops()) {
		int rc = fwd(f);
		return rc ? uhc_fork_err(f, rc) : 0;
	}
	int rc = call_check(c, what);
	if (rc)
		return rc;
	try {
		return body();
	} catch (const std::bad_alloc &) {
		return uh_err_set(UH_ENOMEM, "%s: out of memory", what);
	} catch (const std::exception &ex) {
		return uh_err_set(UH_EPROTO, "%s: %s", what, ex.what());
	}
}

} /* namespace */

extern "C" int uhc_register_class(uhc *c, const char *name, const uh_field_spec *fields,
				  uint32_t nfields, uint32_t *class_id)
{
	return guarded(c, "RegisterClass", [&](const struct uhc_ops *f) {
		return f->register_class(c, name, fields, nfields, class_id);
	}, [&] {
		return do_register_class(c, name, fields, nfields, class_id);
	});
}

extern "C" int uhc_lease_arena(uhc *c, uint32_t slot_size, struct uhc_arena *out)
{
	return guarded(c, "LeaseArena",
		       [&](const struct uhc_ops *f) { return f->lease_arena(c, slot_size, out); },
		       [&] { return do_lease_arena(c, slot_size, out); });
}

extern "C" int uhc_lease_large(uhc *c, uint64_t size, struct uhc_arena *out)
{
	return guarded(c, "LeaseLarge",
		       [&](const struct uhc_ops *f) { return f->lease_large(c, size, out); },
		       [&] { return do_lease_large(c, size, out); });
}

extern "C" int uhc_return_arena(uhc *c, uint64_t arena_off)
{
	return guarded(c, "ReturnArena",
		       [&](const struct uhc_ops *f) { return f->return_arena(c, arena_off); },
		       [&] { return do_return_arena(c, arena_off); });
}

extern "C" int uhc_lease_log_extent(uhc *c, uint64_t size, uint64_t *off, uint64_t *got)
{
	return guarded(c, "LeaseLogExtent",
		       [&](const struct uhc_ops *f) { return f->lease_log_extent(c, size, off, got); },
		       [&] { return do_lease_log_extent(c, size, off, got); });
}

extern "C" int uhc_trim_log(uhc *c)
{
	return guarded(c, "TrimLog", [&](const struct uhc_ops *f) { return f->trim_log(c); },
		       [&] { return do_trim_log(c); });
}

/* This library's control client, for the library's parent copy in a
 * forked child (ctlcopy.h). */
extern "C" const struct uhc_ops uh_control_ops = {
	UHC_OPS_VERSION, sizeof(struct uhc_ops), uhc_attach, uhc_detach, uhc_connected,
	uhc_wait_ended, uhc_register_class, uhc_lease_arena, uhc_lease_large, uhc_return_arena,
	uhc_lease_log_extent, uhc_trim_log, uh_errmsg,
};
