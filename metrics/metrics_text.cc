/*
 * metrics_text.cc -- heapd's Status and Stats answers as Prometheus text
 * (see metrics_text.h). Names follow Prometheus' conventions: a uniheap_ prefix,
 * base units (bytes, seconds), counters end in _total. Counters count
 * since heapd started (they restart at 0 with it, which Prometheus'
 * rate() handles); gauges are the value now, or of the recovery heapd ran
 * when it opened the heap.
 * Invariant: every family has its # HELP and # TYPE lines once, before its
 * samples, and every sample the same heap label.
 */
#include <inttypes.h>
#include <stdio.h>

#include "metrics_text.h"

namespace pb = uniheap::v1;

namespace uhmetrics {

namespace {

/* A label value with \, " and newline escaped, as the format requires. */
std::string escape(const std::string &v)
{
	std::string out;
	for (char c : v) {
		if (c == '\\' || c == '"')
			out += '\\';
		if (c == '\n') {
			out += "\\n";
			continue;
		}
		out += c;
	}
	return out;
}

class Writer {
public:
	explicit Writer(const std::string &heap) : labels_("heap=\"" + escape(heap) + "\"") {}

	void gauge(const char *name, const char *help, double v)
	{
		family(name, "gauge", help);
		sample(name, "", v);
	}

	void counter(const char *name, const char *help, uint64_t v)
	{
		family(name, "counter", help);
		sample(name, "", (double)v);
	}

	/* A gauge of value 1 whose labels carry text (version, names). */
	void info(const char *name, const char *help, const std::string &extra)
	{
		family(name, "gauge", help);
		sample(name, extra, 1);
	}

	const std::string &text() const { return out_; }

private:
	void family(const char *name, const char *type, const char *help)
	{
		out_ += std::string("# HELP ") + name + " " + help + "\n";
		out_ += std::string("# TYPE ") + name + " " + type + "\n";
	}

	void sample(const char *name, const std::string &extra, double v)
	{
		char num[64];
		/* %.17g: a uint64 count up to 2^53 prints exactly, without
		 * an exponent below 1e17. */
		snprintf(num, sizeof(num), "%.17g", v);
		out_ += std::string(name) + "{" + labels_ + extra + "} " + num + "\n";
	}

	std::string labels_;
	std::string out_;
};

const char *durability_name(pb::Durability d)
{
	switch (d) {
	case pb::DURABILITY_PMEM:
		return "pmem";
	case pb::DURABILITY_SYNC:
		return "sync";
	case pb::DURABILITY_MEMORY:
		return "memory";
	default:
		return "unknown";
	}
}

void state(Writer &w, const pb::StatusResponse &s)
{
	w.gauge("uniheap_up", "1 when heapd answered this scrape, else 0.", 1);
	w.info("uniheap_info", "heapd's version, the heap's durability and format (value 1).",
	       ",version=\"" + escape(s.version()) + "\",durability=\"" +
	       durability_name(s.durability()) + "\",format_version=\"" +
	       std::to_string(s.format_version()) + "\"");
	w.gauge("uniheap_uptime_seconds", "Time since heapd started.", s.uptime_ms() / 1000.0);
	w.gauge("uniheap_heap_size_bytes", "Size of the heap file.", (double)s.heap_size());
	w.gauge("uniheap_arena_bytes", "Heap bytes held by arenas (the heap in use by objects).",
		(double)s.arena_bytes());
	w.gauge("uniheap_arenas", "Arena directory entries in use.", s.arenas());
	w.gauge("uniheap_sessions", "Client sessions attached now.", s.sessions());
	w.gauge("uniheap_classes", "Classes in the heap's class table.", s.classes());
	w.gauge("uniheap_roots", "Named durable roots.", (double)s.roots());
	w.gauge("uniheap_heapd_starts",
		"heapds that opened this heap, this one too (each ran a recovery).",
		(double)s.heapd_starts());
}

void recovery(Writer &w, const pb::RecoveryReport &r)
{
	w.gauge("uniheap_recovery_logs_replayed",
		"Committed redo logs rolled forward by the recovery at heapd's start.",
		(double)r.logs_replayed());
	w.gauge("uniheap_recovery_logs_discarded",
		"Uncommitted redo logs rolled back by the recovery at heapd's start.",
		(double)r.logs_discarded());
	w.gauge("uniheap_recovery_objects_live", "Objects reachable from the roots at that recovery.",
		(double)r.live_objects());
	w.gauge("uniheap_recovery_objects_freed",
		"Unreachable or invalid objects freed by that recovery.", (double)r.freed_objects());
	w.gauge("uniheap_recovery_refs_nulled",
		"References to invalid objects nulled by that recovery.", (double)r.nulled_refs());
	w.gauge("uniheap_recovery_locks_cleared", "Object locks cleared by that recovery.",
		(double)r.locks_cleared());
	w.gauge("uniheap_recovery_duration_seconds", "How long that recovery took.",
		r.duration_us() / 1e6);
	w.gauge("uniheap_recovery_gc_deferred",
		"1 when that recovery left its collection for later (clients of a previous heapd "
		"were alive).", r.gc_deferred() ? 1 : 0);
}

void counters(Writer &w, const pb::StatsResponse &s)
{
	w.counter("uniheap_attaches_total", "Sessions attached.", s.attaches());
	w.counter("uniheap_detaches_total", "Sessions ended by their client.", s.detaches());
	w.counter("uniheap_reattaches_total", "Sessions that named their previous one.",
		  s.reattaches());
	w.counter("uniheap_sessions_reaped_total",
		  "Sessions ended without a goodbye (their client died), recovered by heapd.",
		  s.sessions_reaped());
	w.counter("uniheap_reap_logs_replayed_total",
		  "Committed redo logs of reaped sessions rolled forward.", s.logs_replayed());
	w.counter("uniheap_reap_logs_rolled_back_total",
		  "Uncommitted redo logs of reaped sessions rolled back.", s.logs_rolled_back());
	w.counter("uniheap_reap_locks_released_total", "Object locks of reaped sessions released.",
		  s.locks_released());
	w.counter("uniheap_arenas_leased_total", "Arenas leased to sessions.", s.arenas_leased());
	w.counter("uniheap_arenas_returned_total", "Arenas given back by sessions.",
		  s.arenas_returned());
	w.counter("uniheap_classes_registered_total", "Classes added to the class table.",
		  s.classes_registered());
	w.counter("uniheap_log_extents_leased_total", "Redo log extents leased (logs grown).",
		  s.log_extents_leased());
	w.counter("uniheap_log_trims_total", "Sessions that gave their log extents back.",
		  s.log_trims());
	w.counter("uniheap_rpc_errors_total", "Control requests heapd answered with an error.",
		  s.rpc_errors());
}

/* Clients commit without heapd: these come from the counters every
 * session keeps in the GC file (FORMAT.md 9.3). */
void clients(Writer &w, const pb::StatsResponse &s)
{
	w.counter("uniheap_commits_total", "Blocks clients committed that wrote.", s.commits());
	w.counter("uniheap_conflicts_total",
		  "Blocks of clients rolled back by a conflict (to be run again).", s.conflicts());
}

void gc(Writer &w, const pb::StatsResponse &s)
{
	w.counter("uniheap_gc_cycles_total", "Online GC cycles ended, done or given up.",
		  s.gc_cycles());
	w.counter("uniheap_gc_cycles_given_up_total",
		  "Online GC cycles given up (nothing freed; tried again later).",
		  s.gc_cycles_given_up());
	w.counter("uniheap_gc_objects_freed_total", "Objects the online GC freed.",
		  s.gc_objects_freed());
	w.counter("uniheap_gc_freed_bytes_total", "Slot bytes the online GC freed.",
		  s.gc_bytes_freed());
}

} /* namespace */

std::string metrics_text(const pb::StatusResponse &status, const pb::StatsResponse &stats)
{
	Writer w(status.heap_name());
	state(w, status);
	recovery(w, status.last_recovery());
	counters(w, stats);
	clients(w, stats);
	gc(w, stats);
	return w.text();
}

std::string metrics_down_text()
{
	return "# HELP uniheap_up 1 when heapd answered this scrape, else 0.\n"
	       "# TYPE uniheap_up gauge\n"
	       "uniheap_up 0\n";
}

} /* namespace uhmetrics */
