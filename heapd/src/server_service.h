/*
 * server_service.h -- the uniheap.v1.Heapd gRPC service: translates each
 * RPC into hd_* core calls (heapd.h) after validating every input.
 *
 * Nothing a client sends may crash heapd: each handler checks sizes,
 * strings (no NUL bytes, length limits), enum ranges and offsets before
 * the core sees them, and catches every exception at its boundary.
 */
#ifndef HEAPD_SERVER_SERVICE_H
#define HEAPD_SERVER_SERVICE_H

#include <atomic>
#include <exception>
#include <mutex>
#include <new>
#include <set>
#include <string>

#include "uniheap/v1/heapd.grpc.pb.h"

#include "heapd.h"
#include "server_socket.h"
#include "server_util.h"

namespace heapd {

class Service final : public uniheap::v1::Heapd::Service {
public:
	Service(struct hd *hd, PeerTable *peers) : hd_(hd), peers_(peers) {}

	/* heapd is stopping: streams that end from now on are NOT reaped
	 * (their clients live on; the next heapd recovers their state), and
	 * every open session stream is cancelled so shutdown is prompt. */
	void begin_shutdown();

	grpc::Status Attach(grpc::ServerContext *ctx,
			    grpc::ServerReaderWriter<uniheap::v1::ServerMessage,
						     uniheap::v1::ClientMessage> *stream) override;
	grpc::Status RegisterClass(grpc::ServerContext *ctx,
				   const uniheap::v1::RegisterClassRequest *req,
				   uniheap::v1::RegisterClassResponse *resp) override;
	grpc::Status GetClass(grpc::ServerContext *ctx, const uniheap::v1::GetClassRequest *req,
			      uniheap::v1::ClassInfo *resp) override;
	grpc::Status ListClasses(grpc::ServerContext *ctx,
				 const uniheap::v1::ListClassesRequest *req,
				 uniheap::v1::ListClassesResponse *resp) override;
	grpc::Status LeaseArena(grpc::ServerContext *ctx, const uniheap::v1::LeaseArenaRequest *req,
				uniheap::v1::LeaseArenaResponse *resp) override;
	grpc::Status LeaseLarge(grpc::ServerContext *ctx, const uniheap::v1::LeaseLargeRequest *req,
				uniheap::v1::LeaseArenaResponse *resp) override;
	grpc::Status ReturnArena(grpc::ServerContext *ctx,
				 const uniheap::v1::ReturnArenaRequest *req,
				 uniheap::v1::ReturnArenaResponse *resp) override;
	grpc::Status LeaseLogExtent(grpc::ServerContext *ctx,
				    const uniheap::v1::LeaseLogExtentRequest *req,
				    uniheap::v1::LeaseLogExtentResponse *resp) override;
	grpc::Status TrimLog(grpc::ServerContext *ctx, const uniheap::v1::TrimLogRequest *req,
			     uniheap::v1::TrimLogResponse *resp) override;
	grpc::Status Status(grpc::ServerContext *ctx, const uniheap::v1::StatusRequest *req,
			    uniheap::v1::StatusResponse *resp) override;
	grpc::Status Stats(grpc::ServerContext *ctx, const uniheap::v1::StatsRequest *req,
			   uniheap::v1::StatsResponse *resp) override;
	grpc::Status ListRoots(grpc::ServerContext *ctx, const uniheap::v1::ListRootsRequest *req,
			       uniheap::v1::ListRootsResponse *resp) override;
	grpc::Status Gc(grpc::ServerContext *ctx, const uniheap::v1::GcRequest *req,
			uniheap::v1::GcResponse *resp) override;
	grpc::Status Check(grpc::ServerContext *ctx, const uniheap::v1::CheckRequest *req,
			   uniheap::v1::CheckResponse *resp) override;
	grpc::Status Grow(grpc::ServerContext *ctx, const uniheap::v1::GrowRequest *req,
			  uniheap::v1::GrowResponse *resp) override;

private:
	typedef grpc::ServerReaderWriter<uniheap::v1::ServerMessage, uniheap::v1::ClientMessage>
		AttachStream;

	/* Run body, turn exceptions into INTERNAL, count failed calls. */
	template <typename F> grpc::Status guard(const char *rpc, F body);
	grpc::Status attach(grpc::ServerContext *ctx, AttachStream *stream);
	grpc::Status refuse(AttachStream *stream, const std::string &peer, const std::string &why);
	grpc::Status check_hello(grpc::ServerContext *ctx, AttachStream *stream,
				 const uniheap::v1::ClientMessage &m, bool *refused);
	void serve_session(AttachStream *stream, const struct hd_session_info &si,
			   const uniheap::v1::Hello &h);
	void welcome(const struct hd_session_info &si, uniheap::v1::Welcome *w);
	grpc::Status check_ref(const uniheap::v1::SessionRef &ref, bool present);
	bool class_info(uint32_t id, uniheap::v1::ClassInfo *ci);
	uint64_t heap_size();

	struct hd *hd_;
	PeerTable *peers_;
	std::atomic<bool> stopping_{false};
	std::atomic<uint64_t> rpc_errors_{0};

	/* Open Attach calls, so begin_shutdown() can cancel them. */
	std::mutex live_mu_;
	std::set<grpc::ServerContext *> live_;
};

template <typename F> grpc::Status Service::guard(const char *rpc, F body)
{
	grpc::Status s;
	try {
		s = body();
	} catch (const std::bad_alloc &) {
		s = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
				 std::string(rpc) + ": heapd is out of memory");
	} catch (const std::exception &ex) {
		s = grpc::Status(grpc::StatusCode::INTERNAL,
				 std::string(rpc) + ": internal error: " + ex.what());
	} catch (...) {
		s = grpc::Status(grpc::StatusCode::INTERNAL, std::string(rpc) + ": internal error");
	}
	if (!s.ok()) {
		rpc_errors_++;
		hd_log("info", "rpc_error", "rpc=%s code=%d msg=%s", rpc, (int)s.error_code(),
		       log_quote(s.error_message()).c_str());
	}
	return s;
}

} /* namespace heapd */

#endif /* HEAPD_SERVER_SERVICE_H */
