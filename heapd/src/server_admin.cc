/*
 * server_admin.cc -- the admin RPCs: Status, Stats, ListRoots, Gc, and the
 * not-yet-built Check.
 */
#include <string.h>
#include <unistd.h>

#include "server_service.h"

namespace pb = uniheap::v1;

namespace heapd {

namespace {

/* Upper bound on roots listed: the root map can't hold more entries than
 * the heap has 16-byte units, so this only stops a damaged map looping. */
constexpr uint64_t kMaxRoots = 1ull << 26;

std::string version_string()
{
	return std::to_string(UH_VERSION_MAJOR) + "." + std::to_string(UH_VERSION_MINOR) + "." +
	       std::to_string(UH_VERSION_PATCH);
}

void recovery_report(const struct hd_recovery &r, pb::RecoveryReport *out)
{
	out->set_logs_replayed(r.logs_replayed);
	out->set_logs_discarded(r.logs_discarded);
	out->set_live_objects(r.live_objects);
	out->set_freed_objects(r.freed_objects);
	out->set_nulled_refs(r.nulled_refs);
	out->set_locks_cleared(r.locks_cleared);
	out->set_duration_us(r.duration_us);
	out->set_gc_deferred(r.gc_deferred != 0);
	out->set_gc_mode(r.gc_online ? "online" : "full");
	out->set_gc_pending(r.gc_pending != 0);
	out->set_gc_us(r.gc_us);
}

void gc_cycle(const struct hd_gc_cycle &c, pb::GcCycle *out)
{
	out->set_cycle(c.cycle);
	out->set_phase(hd_gc_phase_name(c.phase));
	out->set_outcome(c.outcome);
	out->set_marked(c.marked);
	out->set_freed(c.freed);
	out->set_bytes_freed(c.bytes_freed);
	out->set_rescued(c.rescued);
	out->set_mark_ns(c.mark_ns);
	out->set_sweep_ns(c.sweep_ns);
	out->set_max_handshake_ns(c.max_handshake_ns);
	out->set_started_ns(c.started_ns);
	out->set_trigger(c.trigger);
}

void gc_recent(struct hd *hd, google::protobuf::RepeatedPtrField<pb::GcCycle> *out)
{
	struct hd_gc_cycle v[HD_GC_RECENT];
	uint32_t n = hd_gc_recent(hd, v, HD_GC_RECENT);
	for (uint32_t i = 0; i < n; i++)
		gc_cycle(v[i], out->Add());
}

} /* namespace */

grpc::Status Service::Status(grpc::ServerContext *ctx, const pb::StatusRequest *req,
			     pb::StatusResponse *resp)
{
	return guard("Status", [&] {
		const struct uh_hdr *hdr = hd_header(hd_);
		struct hd_status st;
		memset(&st, 0, sizeof(st));
		hd_status_get(hd_, &st);
		const char *path = hd_heap_path(hd_);
		resp->set_heap_path(utf8_clean(path, strlen(path)));
		resp->set_heap_name(utf8_clean(hdr->name, strnlen(hdr->name, sizeof(hdr->name))));
		resp->set_heap_size(uh_hdr_cur_size(hdr));
		resp->set_pool_size(hdr->heap_size);
		resp->set_max_size(uh_hdr_max_size(hdr));
		resp->set_format_version(hdr->format_version);
		resp->set_protocol_version(1);
		resp->set_durability(static_cast<pb::Durability>(hdr->durability));
		resp->set_pid((uint32_t)getpid());
		resp->set_uptime_ms(st.uptime_ms);
		resp->set_sessions(st.sessions);
		resp->set_classes(st.classes);
		resp->set_arenas(st.arenas);
		resp->set_arena_bytes(st.arena_bytes);
		resp->set_roots(st.roots);
		recovery_report(st.last_recovery, resp->mutable_last_recovery());
		resp->set_version(version_string());
		gc_recent(hd_, resp->mutable_gc_cycles());
		resp->set_gc_session(hdr->gc_session);
		resp->set_heapd_starts(st.heapd_starts);
		return grpc::Status::OK;
	});
}

grpc::Status Service::Stats(grpc::ServerContext *ctx, const pb::StatsRequest *req,
			    pb::StatsResponse *resp)
{
	return guard("Stats", [&] {
		struct hd_stats st;
		memset(&st, 0, sizeof(st));
		hd_stats_get(hd_, &st);
		resp->set_attaches(st.attaches);
		resp->set_detaches(st.detaches);
		resp->set_sessions_reaped(st.sessions_reaped);
		resp->set_logs_replayed(st.logs_replayed);
		resp->set_logs_rolled_back(st.logs_rolled_back);
		resp->set_locks_released(st.locks_released);
		resp->set_arenas_leased(st.arenas_leased);
		resp->set_arenas_returned(st.arenas_returned);
		resp->set_classes_registered(st.classes_registered);
		resp->set_log_extents_leased(st.log_extents_leased);
		resp->set_log_trims(st.log_trims);
		resp->set_reattaches(st.reattaches);
		resp->set_commits(st.commits);
		resp->set_conflicts(st.conflicts);
		struct hd_gc_totals gt;
		hd_gc_totals_get(hd_, &gt);
		resp->set_gc_cycles(gt.cycles);
		resp->set_gc_cycles_given_up(gt.given_up);
		resp->set_gc_objects_freed(gt.freed);
		resp->set_gc_bytes_freed(gt.bytes_freed);
		resp->set_rpc_errors(rpc_errors_.load());
		return grpc::Status::OK;
	});
}

/* Class of the object reference ref names, read from its header; 0 when
 * it is null, misaligned, not inside the heap or of another generation
 * (the root map lives in client-written memory, so nothing in it is
 * trusted). */
static uint32_t object_class(struct hd *hd, uint64_t ref, uint64_t heap_size)
{
	uint64_t off = UH_REF_OFFSET(ref);
	if (off < UH_OBJHDR_SIZE || off % 8 != 0 || off > heap_size - UH_OBJHDR_SIZE)
		return 0;
	struct uh_objhdr oh;
	memcpy(&oh, hd_base(hd) + off, sizeof(oh));
	uint32_t cls = uh_word_class(oh.class_word);
	if (uh_word_gen(oh.class_word) != UH_REF_GEN(ref))
		return 0;
	return cls < UH_CLASS_CAP ? cls : 0;
}

grpc::Status Service::ListRoots(grpc::ServerContext *ctx, const pb::ListRootsRequest *req,
				pb::ListRootsResponse *resp)
{
	return guard("ListRoots", [&] {
		uint64_t size = heap_size();
		uint64_t cursor = 0;
		for (uint64_t n = 0; n < kMaxRoots; n++) {
			const char *name = nullptr;
			size_t name_len = 0;
			uint64_t value = 0, before = cursor;
			int rc = hd_roots_next(hd_, &cursor, &name, &name_len, &value);
			if (rc == UH_ENOTFOUND)
				break;
			if (rc)
				return uh_to_status(rc, "cannot read the root map");
			if (cursor <= before)
				return grpc::Status(grpc::StatusCode::INTERNAL,
						    "root map cursor did not advance");
			pb::RootInfo *ri = resp->add_roots();
			ri->set_name(name ? utf8_clean(name, name_len) : std::string());
			ri->set_offset(value);
			uint32_t cls = object_class(hd_, value, size);
			ri->set_class_id(cls);
			const struct uh_class_desc *d = cls ? hd_class_get(hd_, cls) : nullptr;
			if (d)
				ri->set_class_name(utf8_clean(d->name, strnlen(d->name, sizeof(d->name))));
		}
		return grpc::Status::OK;
	});
}

grpc::Status Service::Gc(grpc::ServerContext *ctx, const pb::GcRequest *req, pb::GcResponse *resp)
{
	return guard("Gc", [&] {
		struct hd_gc_cycle c;
		char err[256] = "";
		memset(&c, 0, sizeof(c));
		int rc = hd_gc_run(hd_, "command", req->wait() ? 1 : 0, &c, err, sizeof(err));
		if (rc)
			return uh_to_status(rc, err);
		gc_cycle(c, resp->mutable_cycle());
		gc_recent(hd_, resp->mutable_recent());
		return grpc::Status::OK;
	});
}

grpc::Status Service::Grow(grpc::ServerContext *ctx, const pb::GrowRequest *req,
			   pb::GrowResponse *resp)
{
	return guard("Grow", [&] {
		char err[512] = "";
		uint64_t size = 0, us = 0;
		int rc = hd_grow(hd_, req->size(), &size, &us, err, sizeof(err));
		if (rc)
			return uh_to_status(rc, err);
		const struct uh_hdr *hdr = hd_header(hd_);
		resp->set_heap_size(size);
		resp->set_max_size(uh_hdr_max_size(hdr));
		resp->set_grow_us(us);
		return grpc::Status::OK;
	});
}

grpc::Status Service::Check(grpc::ServerContext *ctx, const pb::CheckRequest *req,
			    pb::CheckResponse *resp)
{
	return guard("Check", [] {
		return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "Check is not implemented yet");
	});
}

} /* namespace heapd */
