/*
 * server_attach.cc -- the Attach stream: one session per stream.
 *
 * Hello -> checks -> hd_session_attach -> Welcome; then the handler waits
 * for Goodbye or the end of the stream and reaps the session with
 * hd_session_detach. Exception: when heapd itself is stopping, a stream
 * that ends without Goodbye is left alone, because its client is still
 * alive and the next heapd start recovers the session's state.
 */
#include <string.h>

#include "server_service.h"

namespace pb = uniheap::v1;

namespace heapd {

void Service::begin_shutdown()
{
	std::lock_guard<std::mutex> g(live_mu_);
	stopping_ = true;
	for (grpc::ServerContext *ctx : live_)
		ctx->TryCancel();
}

grpc::Status Service::Attach(grpc::ServerContext *ctx, AttachStream *stream)
{
	{
		std::lock_guard<std::mutex> g(live_mu_);
		if (stopping_)
			return grpc::Status(grpc::StatusCode::UNAVAILABLE, "heapd is shutting down");
		live_.insert(ctx);
	}
	grpc::Status s = guard("Attach", [&] { return attach(ctx, stream); });
	std::lock_guard<std::mutex> g(live_mu_);
	live_.erase(ctx);
	return s;
}

grpc::Status Service::refuse(AttachStream *stream, const std::string &peer, const std::string &why)
{
	rpc_errors_++;
	hd_log("warn", "refused", "peer=%s reason=%s", log_quote(peer).c_str(),
	       log_quote(why, 512).c_str());
	pb::ServerMessage m;
	m.mutable_refused()->set_reason(why);
	stream->Write(m);
	return grpc::Status::OK;
}

/* Everything about Hello that can be wrong, in the order a client would
 * want to hear it. Sets *refused when a Refused was sent. */
grpc::Status Service::check_hello(grpc::ServerContext *ctx, AttachStream *stream,
				  const pb::ClientMessage &m, bool *refused)
{
	std::string peer = ctx->peer();
	*refused = true;
	if (!m.has_hello())
		return refuse(stream, peer, "first message must be Hello");
	const pb::Hello &h = m.hello();
	if (h.protocol_version() != 1)
		return refuse(stream, peer,
			      "protocol version " + std::to_string(h.protocol_version()) +
				      " not supported: this heapd speaks protocol version 1");
	if (h.client().size() > 256)
		return refuse(stream, peer,
			      "client description is " + std::to_string(h.client().size()) +
				      " bytes, at most 256 allowed");
	if (memchr(h.client().data(), '\0', h.client().size()))
		return refuse(stream, peer, "client description contains a NUL byte");
	PeerCred pc;
	if (!peers_->get(peer, &pc))
		return refuse(stream, peer, "cannot verify the peer credentials of " + peer);
	if ((pid_t)h.pid() != pc.pid)
		return refuse(stream, peer,
			      "Hello.pid " + std::to_string(h.pid()) +
				      " does not match the connecting process (pid " +
				      std::to_string(pc.pid) + ")");
	*refused = false;
	return grpc::Status::OK;
}

void Service::welcome(const struct hd_session_info &si, pb::Welcome *w)
{
	const struct uh_hdr *hdr = hd_header(hd_);
	w->set_protocol_version(1);
	w->set_session(si.session);
	w->set_token(si.token);
	w->set_heap_path(utf8_clean(hd_heap_path(hd_), strlen(hd_heap_path(hd_))));
	w->set_heap_size(uh_hdr_cur_size(hdr));
	w->set_max_size(uh_hdr_max_size(hdr));
	w->set_header_off(hd_header_off(hd_));
	w->set_format_version(hdr->format_version);
	w->set_durability(static_cast<pb::Durability>(hdr->durability));
	w->set_log_off(si.log_off);
	w->set_log_size(si.log_size);
	w->set_heap_name(utf8_clean(hdr->name, strnlen(hdr->name, sizeof(hdr->name))));
	w->set_gc_path(utf8_clean(hd_gc_path(hd_), strlen(hd_gc_path(hd_))));
}

/* Welcome the session, wait for Goodbye or the stream's end, reap. The
 * session is reaped whatever happens here, unless heapd is stopping and
 * the client did not say Goodbye. The core logs the attach, detach and
 * reap events themselves; only the kept case is logged here. */
void Service::serve_session(AttachStream *stream, const struct hd_session_info &si,
			    const pb::Hello &h)
{
	bool graceful = false;
	try {
		pb::ServerMessage m;
		welcome(si, m.mutable_welcome());
		if (stream->Write(m)) {
			pb::ClientMessage in;
			while (!graceful && stream->Read(&in))
				graceful = in.has_goodbye();
		}
	} catch (...) {
		/* Fall through: the session must not outlive its stream. */
	}
	if (!graceful && stopping_) {
		hd_log("info", "session_kept",
		       "session=%u pid=%u client=%s reason=\"heapd stopping; the next heapd recovers it\"",
		       si.session, h.pid(), log_quote(h.client(), 256).c_str());
		return;
	}
	hd_session_detach(hd_, si.session, graceful);
}

grpc::Status Service::attach(grpc::ServerContext *ctx, AttachStream *stream)
{
	pb::ClientMessage m;
	if (!stream->Read(&m))
		return grpc::Status::OK;	/* left before saying Hello */
	bool refused;
	grpc::Status s = check_hello(ctx, stream, m, &refused);
	if (refused || !s.ok())
		return s;
	const pb::Hello &h = m.hello();

	struct hd_session_info si;
	char err[kErrLen] = "";
	int rc = hd_session_attach(hd_, h.pid(), h.readonly(), h.client().c_str(),
				   h.previous_session(), h.previous_token(), &si, err, sizeof(err));
	if (rc)
		return uh_to_status(rc, err);
	serve_session(stream, si, h);
	return grpc::Status::OK;
}

} /* namespace heapd */
