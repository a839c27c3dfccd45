// test_bad_rpc.cc -- malformed control requests, sent with raw gRPC calls
// (no libuniheap in between), must get the documented status codes, and
// heapd must go on serving: after every request it still answers Status
// and its process is still alive.
//
// Why no generated stubs: this program links the harness, hence
// libuniheap.so, which carries its own copy of the generated heapd.proto
// code; a second copy here would register "uniheap/v1/heapd.proto" twice
// and libprotobuf aborts the process at load. So requests are encoded by
// hand (a dozen lines of protobuf wire format, field numbers from
// schemas/uniheap/v1/heapd.proto) and sent through grpc::GenericStub.

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "harness.h"

using grpc::StatusCode;

static struct th_heapd d;
static std::unique_ptr<grpc::GenericStub> stub;

// ---- protobuf wire format, just what these messages need ----

// FieldType values (heapd.proto).
enum { FT_I32 = 4, FT_I64 = 5, FT_REF = 8 };

struct Pb {
	std::string b;

	void varint(uint64_t v)
	{
		while (v >= 0x80) {
			b.push_back((char)(v | 0x80));
			v >>= 7;
		}
		b.push_back((char)v);
	}
	Pb &u(int field, uint64_t v)	// varint field (uint32/uint64/enum/bool)
	{
		varint((uint64_t)field << 3);
		varint(v);
		return *this;
	}
	Pb &f64(int field, uint64_t v)	// fixed64 field
	{
		varint((uint64_t)field << 3 | 1);
		for (int i = 0; i < 8; i++)
			b.push_back((char)(v >> (8 * i)));
		return *this;
	}
	Pb &s(int field, const std::string &v)	// string, bytes or message
	{
		varint((uint64_t)field << 3 | 2);
		varint(v.size());
		b += v;
		return *this;
	}
	Pb &m(int field, const Pb &v) { return s(field, v.b); }
};

// One decoded field: varints and fixed64 in v, length-delimited in bytes.
struct PbField {
	int field = 0, wire = 0;
	uint64_t v = 0;
	std::string bytes;
};

static bool pb_varint(const std::string &b, size_t *p, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *p < b.size() && shift < 64; shift += 7) {
		uint8_t c = (uint8_t)b[(*p)++];
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

static std::vector<PbField> pb_parse(const std::string &b)
{
	std::vector<PbField> out;
	size_t p = 0;

	while (p < b.size()) {
		PbField f;
		uint64_t key, len;
		if (!pb_varint(b, &p, &key))
			break;
		f.field = (int)(key >> 3);
		f.wire = (int)(key & 7);
		if (f.wire == 0) {
			if (!pb_varint(b, &p, &f.v))
				break;
		} else if (f.wire == 1) {
			if (p + 8 > b.size())
				break;
			for (int i = 0; i < 8; i++)
				f.v |= (uint64_t)(uint8_t)b[p + i] << (8 * i);
			p += 8;
		} else if (f.wire == 2) {
			if (!pb_varint(b, &p, &len) || len > b.size() - p)
				break;
			f.bytes = b.substr(p, len);
			p += len;
		} else {
			break;
		}
		out.push_back(f);
	}
	return out;
}

static const PbField *pb_get(const std::vector<PbField> &fs, int field)
{
	for (const PbField &f : fs)
		if (f.field == field)
			return &f;
	return nullptr;
}

static grpc::ByteBuffer to_bb(const std::string &s)
{
	grpc::Slice slice(s.data(), s.size());
	return grpc::ByteBuffer(&slice, 1);
}

static std::string from_bb(const grpc::ByteBuffer &bb)
{
	std::vector<grpc::Slice> slices;
	std::string out;

	if (bb.Dump(&slices).ok())
		for (const grpc::Slice &s : slices)
			out.append((const char *)s.begin(), s.size());
	return out;
}

static void deadline(grpc::ClientContext *c)
{
	c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

// Unary call of /uniheap.v1.Heapd/<method>; the reply bytes go to *resp.
static grpc::Status call(const std::string &method, const Pb &req, std::string *resp = nullptr)
{
	grpc::ClientContext c;
	grpc::CompletionQueue cq;
	grpc::ByteBuffer in = to_bb(req.b), out;
	grpc::Status st;
	void *tag;
	bool ok;

	deadline(&c);
	auto r = stub->PrepareUnaryCall(&c, "/uniheap.v1.Heapd/" + method, in, &cq);
	r->StartCall();
	r->Finish(&out, &st, (void *)1);
	cq.Next(&tag, &ok);
	cq.Shutdown();
	while (cq.Next(&tag, &ok))
		;
	if (resp && st.ok())
		*resp = from_bb(out);
	return st;
}

// A bidi Attach stream driven step by step on its own completion queue.
struct Stream {
	grpc::ClientContext c;
	grpc::CompletionQueue cq;
	std::unique_ptr<grpc::GenericClientAsyncReaderWriter> rw;

	bool wait()
	{
		void *tag;
		bool ok = false;
		return cq.Next(&tag, &ok) && ok;
	}
	bool start()
	{
		rw = stub->PrepareCall(&c, "/uniheap.v1.Heapd/Attach", &cq);
		if (!rw)
			return false;
		rw->StartCall((void *)1);
		return wait();
	}
	bool write(const Pb &m)
	{
		grpc::ByteBuffer bb = to_bb(m.b);
		rw->Write(bb, (void *)2);
		return wait();
	}
	bool read(std::string *out)
	{
		grpc::ByteBuffer bb;
		rw->Read(&bb, (void *)3);
		if (!wait())
			return false;
		*out = from_bb(bb);
		return true;
	}
	void writes_done()
	{
		rw->WritesDone((void *)4);
		wait();
	}
	grpc::Status finish()
	{
		grpc::Status st;
		rw->Finish(&st, (void *)5);
		wait();
		return st;
	}
	~Stream()
	{
		void *tag;
		bool ok;
		c.TryCancel();
		cq.Shutdown();
		while (cq.Next(&tag, &ok))
			;
	}
};

static Pb hello(uint32_t version, uint32_t pid, const std::string &client)
{
	Pb h;
	h.u(1, version).u(2, pid).s(3, client);
	return Pb().m(1, h);	// ClientMessage.hello
}

static Pb goodbye() { return Pb().m(2, Pb()); }

static const char *code_name(StatusCode c)
{
	switch (c) {
	case StatusCode::OK: return "OK";
	case StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
	case StatusCode::NOT_FOUND: return "NOT_FOUND";
	case StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
	case StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
	case StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
	case StatusCode::UNAVAILABLE: return "UNAVAILABLE";
	case StatusCode::INTERNAL: return "INTERNAL";
	case StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
	default: return "other";
	}
}

// heapd is alive (not exited) and answers Status.
static void expect_alive(const std::string &after)
{
	int st;
	pid_t r = waitpid(d.pid, &st, WNOHANG);
	std::string resp;
	grpc::Status s = call("Status", Pb(), &resp);

	if (r != 0)
		th_fail(__FILE__, __LINE__, "heapd died after %s", after.c_str());
	else if (!s.ok())
		th_fail(__FILE__, __LINE__, "Status after %s: %s %s", after.c_str(),
			code_name(s.error_code()), s.error_message().c_str());
	else if (!pb_get(pb_parse(resp), 1))	// StatusResponse.heap_path
		th_fail(__FILE__, __LINE__, "Status after %s: no heap_path", after.c_str());
	else
		th_passed++;
}

// s must have code want and, when heapd (not the gRPC framework) made the
// error, a non-empty message.
static void expect_code(const std::string &what, const grpc::Status &s, StatusCode want,
			bool need_msg = true)
{
	printf("%-34s -> %s: %s\n", what.c_str(), code_name(s.error_code()),
	       s.error_message().c_str());
	if (s.error_code() != want)
		th_fail(__FILE__, __LINE__, "%s: got %s (%s), want %s", what.c_str(),
			code_name(s.error_code()), s.error_message().c_str(), code_name(want));
	else if (want != StatusCode::OK && need_msg && s.error_message().empty())
		th_fail(__FILE__, __LINE__, "%s: %s without a message", what.c_str(),
			code_name(want));
	else
		th_passed++;
	expect_alive(what);
}

// A real session: the Attach stream stays open while the test runs.
struct Session {
	Stream st;
	uint32_t id = 0;
	uint64_t token = 0;
};

static bool attach(Session *se)
{
	std::string r;

	if (!se->st.start() || !se->st.write(hello(1, (uint32_t)getpid(), "test_bad_rpc")) ||
	    !se->st.read(&r)) {
		fprintf(stderr, "attach: stream failed: %s\n",
			se->st.finish().error_message().c_str());
		return false;
	}
	std::vector<PbField> top = pb_parse(r);
	const PbField *w = pb_get(top, 1);	// ServerMessage.welcome
	if (!w) {
		const PbField *rf = pb_get(top, 2);
		fprintf(stderr, "attach: no Welcome (%zu bytes)%s%s\n", r.size(),
			rf ? ", Refused: " : "", rf ? rf->bytes.c_str() : "");
		return false;
	}
	std::vector<PbField> wf = pb_parse(w->bytes);
	const PbField *sid = pb_get(wf, 2), *tok = pb_get(wf, 3);
	if (!sid || !tok)
		return false;
	se->id = (uint32_t)sid->v;
	se->token = tok->v;
	return true;
}

static Pb session_ref(uint32_t id, uint64_t token)
{
	return Pb().u(1, id).f64(2, token);
}

static Pb field(const std::string &name, int type, uint32_t ref_class = 0)
{
	Pb f;
	f.s(1, name).u(2, (uint64_t)type);
	if (ref_class)
		f.u(3, ref_class);
	return f;
}

static grpc::Status reg(uint32_t id, uint64_t token, const std::string &name, int nfields,
			int type, uint32_t ref_class = 0)
{
	Pb rq;

	rq.m(1, session_ref(id, token)).s(2, name);
	for (int i = 0; i < nfields; i++)
		rq.m(3, field("f" + std::to_string(i), type, ref_class));
	return call("RegisterClass", rq);
}

static void bad_register(const Session &se)
{
	const uint32_t id = se.id;
	const uint64_t tok = se.token;

	expect_code("RegisterClass wrong token",
		    reg(id, tok ^ 0x5a5a5a5a5a5a5a5aull, "Ok", 1, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass unknown session", reg(1000, tok, "Ok", 1, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass session 0", reg(0, 0, "Ok", 1, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass session 1<<31", reg(1u << 31, tok, "Ok", 1, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass no session", call("RegisterClass", Pb().s(2, "Ok")),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass empty name", reg(id, tok, "", 1, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass 300-byte name", reg(id, tok, std::string(300, 'n'), 1, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass name with NUL",
		    reg(id, tok, std::string("Bad\0Name", 8), 1, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass 2000 fields", reg(id, tok, "Wide", 2000, FT_I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass field type 0", reg(id, tok, "T0", 1, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass field type 99", reg(id, tok, "T99", 1, 99),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass unknown ref_class", reg(id, tok, "Dangling", 1, FT_REF, 4000),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass ref_class on an i64",
		    call("RegisterClass", Pb().m(1, session_ref(id, tok)).s(2, "RefI64")
					      .m(3, field("x", FT_I64, 3))),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass duplicate field",
		    call("RegisterClass", Pb().m(1, session_ref(id, tok)).s(2, "Dup")
					      .m(3, field("same", FT_I32)).m(3, field("same", FT_I32))),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass bad field name",
		    call("RegisterClass", Pb().m(1, session_ref(id, tok)).s(2, "BadField")
					      .m(3, field("9lives", FT_I32))),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass 64-byte field name",
		    call("RegisterClass", Pb().m(1, session_ref(id, tok)).s(2, "LongField")
					      .m(3, field(std::string(64, 'f'), FT_I32))),
		    StatusCode::INVALID_ARGUMENT);
	// Unparsable bytes: gRPC itself answers INTERNAL before heapd sees it.
	expect_code("RegisterClass garbage bytes", call("RegisterClass", Pb{ "\xff\xff\xff" }),
		    StatusCode::INTERNAL, false);

	// A good one works, and the same name with another layout is refused.
	expect_code("RegisterClass good", reg(id, tok, "GoodClass", 3, FT_I64), StatusCode::OK);
	expect_code("RegisterClass ClassMismatch", reg(id, tok, "GoodClass", 2, FT_I64),
		    StatusCode::FAILED_PRECONDITION);
}

static void bad_leases(const Session &se)
{
	const uint32_t slots[] = { 0, 17, 1u << 30 };
	Pb ref = session_ref(se.id, se.token);

	for (uint32_t slot : slots)
		expect_code("LeaseArena slot " + std::to_string(slot),
			    call("LeaseArena", Pb().m(1, ref).u(2, slot)),
			    StatusCode::INVALID_ARGUMENT);
	expect_code("LeaseArena wrong token",
		    call("LeaseArena", Pb().m(1, session_ref(se.id, se.token + 1)).u(2, 64)),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("LeaseLarge size 0", call("LeaseLarge", Pb().m(1, ref).u(2, 0)),
		    StatusCode::INVALID_ARGUMENT);
	// Beyond what an object header can describe: malformed, not "full".
	expect_code("LeaseLarge size 1<<62", call("LeaseLarge", Pb().m(1, ref).u(2, 1ull << 62)),
		    StatusCode::INVALID_ARGUMENT);
	// Bigger than the whole heap: never satisfiable, so malformed.
	expect_code("LeaseLarge 1 GiB in a 64M heap",
		    call("LeaseLarge", Pb().m(1, ref).u(2, 1ull << 30)),
		    StatusCode::INVALID_ARGUMENT);
	// Smaller than the heap but more than is free: the heap is full.
	expect_code("LeaseLarge 60 MiB in a 64M heap",
		    call("LeaseLarge", Pb().m(1, ref).u(2, 60ull << 20)),
		    StatusCode::RESOURCE_EXHAUSTED);
	expect_code("ReturnArena unknown arena", call("ReturnArena", Pb().m(1, ref).u(2, 12345)),
		    StatusCode::INVALID_ARGUMENT);
}

static void bad_lookups()
{
	expect_code("GetClass unknown id", call("GetClass", Pb().u(1, 4000)),
		    StatusCode::NOT_FOUND);
	// Outside the class table altogether: malformed rather than missing.
	expect_code("GetClass id 1<<31", call("GetClass", Pb().u(1, 1u << 31)),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("GetClass unknown name", call("GetClass", Pb().s(2, "NoSuchClass")),
		    StatusCode::NOT_FOUND);
	expect_code("Gc", call("Gc", Pb()), StatusCode::UNIMPLEMENTED);
	expect_code("Check", call("Check", Pb()), StatusCode::UNIMPLEMENTED);
	expect_code("NoSuchMethod", call("NoSuchMethod", Pb()), StatusCode::UNIMPLEMENTED, false);
}

// An Attach whose first message is m must be refused (Refused message or
// an error status), never welcomed.
static void bad_attach(const std::string &what, const Pb &m)
{
	std::string reason, r;
	bool welcomed = false;
	grpc::Status st;
	{
		Stream s;
		deadline(&s.c);
		if (s.start()) {
			s.write(m);
			s.writes_done();
			while (s.read(&r)) {
				std::vector<PbField> f = pb_parse(r);
				if (pb_get(f, 1))
					welcomed = true;
				if (const PbField *rf = pb_get(f, 2)) {
					std::vector<PbField> rr = pb_parse(rf->bytes);
					const PbField *why = pb_get(rr, 1);
					reason = why ? why->bytes : "(empty)";
				}
			}
			st = s.finish();
		}
	}
	printf("%-34s -> %s%s %s\n", what.c_str(), reason.empty() ? "" : "Refused: ",
	       reason.c_str(), st.ok() ? "" : st.error_message().c_str());
	if (welcomed)
		th_fail(__FILE__, __LINE__, "%s: heapd welcomed it", what.c_str());
	else if (reason.empty() && st.ok())
		th_fail(__FILE__, __LINE__, "%s: neither Refused nor an error status", what.c_str());
	else
		th_passed++;
	expect_alive(what);
}

static void bad_attaches()
{
	uint32_t me = (uint32_t)getpid();

	bad_attach("Attach protocol version 2", hello(2, me, "t"));
	bad_attach("Attach protocol version 0", hello(0, me, "t"));
	bad_attach("Attach with a foreign pid", hello(1, 1, "t"));
	bad_attach("Attach 1000-byte client text", hello(1, me, std::string(1000, 'c')));
	bad_attach("Attach starting with Goodbye", goodbye());
	bad_attach("Attach with an empty message", Pb());
	{
		// A stream that ends before any message: heapd just forgets it.
		Stream s;
		deadline(&s.c);
		if (s.start()) {
			s.writes_done();
			s.finish();
		}
	}
	expect_alive("Attach closed without Hello");
}

int main()
{
	if (th_heapd_start(&d, nullptr) != 0) {
		th_fail(__FILE__, __LINE__, "heapd did not start");
		return th_summary("test_bad_rpc");
	}
	stub = std::make_unique<grpc::GenericStub>(
		grpc::CreateChannel(std::string("unix:") + d.sock, grpc::InsecureChannelCredentials()));
	{
		Session se;
		if (!attach(&se)) {
			th_fail(__FILE__, __LINE__, "could not attach a session");
		} else {
			bad_register(se);
			bad_leases(se);
			bad_lookups();
			bad_attaches();
			// The session still works after all that.
			expect_code("LeaseArena 64 (valid)",
				    call("LeaseArena", Pb().m(1, session_ref(se.id, se.token)).u(2, 64)),
				    StatusCode::OK);
			se.st.write(goodbye());
			se.st.writes_done();
			se.st.finish();
		}
	}
	expect_alive("Goodbye");
	th_heapd_cleanup(&d);
	return th_summary("test_bad_rpc");
}
