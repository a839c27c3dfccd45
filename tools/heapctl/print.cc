/*
 * print.cc -- heapctl's human-readable output (see print.h).
 */
#include <inttypes.h>

#include <string>
#include <vector>

#include "print.h"

namespace pb = uniheap::v1;

namespace heapctl {

namespace {

typedef std::vector<std::vector<std::string>> Table;

/* Display width of UTF-8 text: code points, not bytes (names may hold
 * non-ASCII characters). */
size_t width(const std::string &s)
{
	size_t n = 0;
	for (unsigned char c : s)
		n += (c & 0xc0) != 0x80;
	return n;
}

/* Rows with columns padded to their widest cell; the last column is not
 * padded, so lines carry no trailing blanks. */
void print_table(FILE *out, const Table &t)
{
	std::vector<size_t> w;
	for (const auto &row : t)
		for (size_t i = 0; i < row.size(); i++) {
			if (w.size() <= i)
				w.push_back(0);
			if (width(row[i]) > w[i])
				w[i] = width(row[i]);
		}
	for (const auto &row : t) {
		std::string line;
		for (size_t i = 0; i < row.size(); i++) {
			line += row[i];
			if (i + 1 < row.size())
				line += std::string(w[i] - width(row[i]) + 2, ' ');
		}
		fprintf(out, "%s\n", line.c_str());
	}
}

std::string num(uint64_t v)
{
	return std::to_string(v);
}

std::string bytes(uint64_t v)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	double d = (double)v;
	int u = 0;
	while (d >= 1024 && u < 5) {
		d /= 1024;
		u++;
	}
	char buf[64];
	if (u == 0)
		snprintf(buf, sizeof(buf), "%" PRIu64 " B", v);
	else
		snprintf(buf, sizeof(buf), "%.1f %s (%" PRIu64 " bytes)", d, unit[u], v);
	return buf;
}

std::string duration_ms(uint64_t ms)
{
	uint64_t s = ms / 1000, d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60;
	char buf[64];
	if (d)
		snprintf(buf, sizeof(buf), "%" PRIu64 "d %" PRIu64 "h %" PRIu64 "m", d, h, m);
	else if (h)
		snprintf(buf, sizeof(buf), "%" PRIu64 "h %" PRIu64 "m %" PRIu64 "s", h, m, s % 60);
	else if (m)
		snprintf(buf, sizeof(buf), "%" PRIu64 "m %" PRIu64 "s", m, s % 60);
	else
		snprintf(buf, sizeof(buf), "%" PRIu64 ".%03" PRIu64 "s", s, ms % 1000);
	return buf;
}

std::string durability(pb::Durability d)
{
	switch (d) {
	case pb::DURABILITY_PMEM: return "pmem (cache-line flush)";
	case pb::DURABILITY_SYNC: return "sync (msync)";
	case pb::DURABILITY_MEMORY: return "memory (no persistence)";
	default: return "unknown (" + std::to_string((int)d) + ")";
	}
}

std::string recovery(const pb::RecoveryReport &r)
{
	std::string s = num(r.duration_us()) + " us: " + num(r.logs_replayed()) + " logs replayed, " +
			num(r.logs_discarded()) + " discarded; " + num(r.live_objects()) + " live, " +
			num(r.freed_objects()) + " freed objects; " + num(r.nulled_refs()) +
			" refs nulled; " + num(r.locks_cleared()) + " locks cleared";
	if (r.gc_deferred())
		s += "; GC deferred (clients of the previous heapd were alive)";
	if (r.gc_mode() == "online")
		s += r.gc_pending() ? "; served at once, its GC cycle is running"
				    : "; served at once, its GC cycle ended after " +
					      num(r.gc_us()) + " us";
	return s;
}

std::string kind(pb::ClassKind k)
{
	switch (k) {
	case pb::CLASS_KIND_RECORD: return "record";
	case pb::CLASS_KIND_STRING: return "string";
	case pb::CLASS_KIND_BYTES: return "bytes";
	case pb::CLASS_KIND_REFTABLE: return "reftable";
	default: return "kind" + std::to_string((int)k);
	}
}

std::string type_name(pb::FieldType t)
{
	static const char *names[] = {"?",   "bool", "i8",  "i16", "i32",    "i64",
				      "f32", "f64",  "ref", "string", "bytes", "istring", "ibytes"};
	int i = (int)t;
	return i > 0 && i <= 12 ? names[i] : "type" + std::to_string(i);
}

/* "x:i64@16 next:ref(32)@24 v:ibytes(100)@32" */
std::string fields(const pb::ClassInfo &c)
{
	std::string s;
	for (const pb::FieldInfo &f : c.fields()) {
		if (!s.empty())
			s += ' ';
		s += f.name() + ":" + type_name(f.type());
		if (f.type() == pb::FIELD_TYPE_REF && f.ref_class())
			s += "(" + num(f.ref_class()) + ")";
		if (f.capacity())
			s += "(" + num(f.capacity()) + ")";
		s += "@" + num(f.offset());
	}
	return s.empty() ? "-" : s;
}

std::string us(uint64_t ns)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.3f ms", (double)ns / 1e6);
	return buf;
}

/* "cycle 7 (heap fill): done; 1200 marked, 3400 freed (212.5 KiB), 2
 * rescued; mark 1.2 ms, sweep 0.4 ms, longest handshake 0.010 ms" */
std::string gc_line(const pb::GcCycle &c)
{
	std::string s = "cycle " + num(c.cycle()) + " (" + c.trigger() + "): " + c.outcome();
	if (c.outcome() == "running")
		return s + ", phase " + c.phase();
	if (c.outcome() == "queued")	/* after the running cycle */
		return s;
	return s + "; " + num(c.marked()) + " marked, " + num(c.freed()) + " freed (" +
	       bytes(c.bytes_freed()) + "), " + num(c.rescued()) + " rescued; mark " +
	       us(c.mark_ns()) + ", sweep " + us(c.sweep_ns()) + ", longest handshake " +
	       us(c.max_handshake_ns());
}

} /* namespace */

void print_gc(FILE *out, const pb::GcResponse &r)
{
	const pb::GcCycle &c = r.cycle();
	if (c.outcome() == "running" || c.outcome() == "queued") {
		fprintf(out, "%s\n", gc_line(c).c_str());
		return;
	}
	print_table(out, {
		{"cycle", num(c.cycle()) + " (" + c.trigger() + ")"},
		{"outcome", c.outcome()},
		{"marked", num(c.marked())},
		{"freed", num(c.freed()) + " objects, " + bytes(c.bytes_freed())},
		{"rescued", num(c.rescued())},
		{"mark", us(c.mark_ns())},
		{"sweep", us(c.sweep_ns())},
		{"longest handshake", us(c.max_handshake_ns())},
	});
}

/* The file's size now; then the pool and the cap when the heap may grow
 * past its pool (FORMAT.md 1.1). A heapd that predates them sends 0. */
static std::string heap_size(const pb::StatusResponse &s)
{
	std::string r = bytes(s.heap_size());
	if (s.max_size() > s.pool_size())
		r += ", pool " + bytes(s.pool_size()) + ", grows to at most " + bytes(s.max_size());
	else if (s.max_size())
		r += ", does not grow";
	return r;
}

void print_status(FILE *out, const pb::StatusResponse &s)
{
	const pb::RecoveryReport &r = s.last_recovery();
	print_table(out, {
		{"heap path", s.heap_path()},
		{"heap name", s.heap_name()},
		{"heap size", heap_size(s)},
		{"durability", durability(s.durability())},
		{"format version", num(s.format_version())},
		{"protocol version", num(s.protocol_version())},
		{"heapd", "pid " + num(s.pid()) + ", version " + s.version()},
		{"uptime", duration_ms(s.uptime_ms())},
		{"sessions", num(s.sessions())},
		{"classes", num(s.classes())},
		{"arenas", num(s.arenas()) + " holding " + bytes(s.arena_bytes())},
		{"roots", num(s.roots())},
		{"last recovery", recovery(r)},
		{"gc session", s.gc_session() ? num(s.gc_session()) : "none"},
	});
	if (s.gc_cycles_size() == 0)
		return;
	fprintf(out, "last GC cycles (newest first):\n");
	for (const pb::GcCycle &c : s.gc_cycles())
		fprintf(out, "  %s\n", gc_line(c).c_str());
}

void print_grow(FILE *out, const pb::GrowResponse &r)
{
	print_table(out, {
		{"heap size", bytes(r.heap_size())},
		{"max size", bytes(r.max_size())},
		{"last growth", us(r.grow_us() * 1000)},
	});
}

void print_classes(FILE *out, const pb::ListClassesResponse &r)
{
	Table t = {{"ID", "KIND", "PAYLOAD", "NAME", "FIELDS"}};
	for (const pb::ClassInfo &c : r.classes())
		t.push_back({num(c.class_id()), kind(c.kind()), num(c.payload_size()), c.name(),
			     fields(c)});
	print_table(out, t);
}

void print_roots(FILE *out, const pb::ListRootsResponse &r)
{
	if (r.roots_size() == 0) {
		fprintf(out, "no roots\n");
		return;
	}
	Table t = {{"NAME", "OFFSET", "CLASS"}};
	for (const pb::RootInfo &x : r.roots()) {
		std::string cls = x.offset() == 0 ? "null"
				: x.class_id() == 0 ? "?"
				: (x.class_name().empty() ? "?" : x.class_name()) + " (" +
					  num(x.class_id()) + ")";
		t.push_back({x.name(), num(x.offset()), cls});
	}
	print_table(out, t);
}

void print_stats(FILE *out, const pb::StatsResponse &s)
{
	print_table(out, {
		{"attaches", num(s.attaches())},
		{"detaches", num(s.detaches())},
		{"sessions reaped", num(s.sessions_reaped())},
		{"logs replayed", num(s.logs_replayed())},
		{"logs rolled back", num(s.logs_rolled_back())},
		{"locks released", num(s.locks_released())},
		{"arenas leased", num(s.arenas_leased())},
		{"arenas returned", num(s.arenas_returned())},
		{"classes registered", num(s.classes_registered())},
		{"log extents leased", num(s.log_extents_leased())},
		{"log trims", num(s.log_trims())},
		{"re-attaches", num(s.reattaches())},
		{"commits", num(s.commits())},
		{"conflicts", num(s.conflicts())},
		{"gc cycles", num(s.gc_cycles())},
		{"gc cycles given up", num(s.gc_cycles_given_up())},
		{"gc objects freed", num(s.gc_objects_freed())},
		{"gc bytes freed", num(s.gc_bytes_freed())},
		{"rpc errors", num(s.rpc_errors())},
	});
}

} /* namespace heapctl */
