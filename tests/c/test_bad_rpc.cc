// test_bad_rpc.cc -- malformed control requests, sent with raw gRPC stubs
// (no libuniheap in between), must get the documented status codes, and
// heapd must go on serving: after every request it still answers Status
// and its process is still alive.
//
// Linked with uhtest_raw (the harness without libuniheap): libuniheap.so
// carries its own copy of the generated heapd.proto code, and libprotobuf
// aborts a process that registers the same .proto file twice.

#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "harness.h"
#include "uniheap/v1/heapd.grpc.pb.h"

namespace pb = uniheap::v1;
using grpc::StatusCode;

static struct th_heapd d;
static std::unique_ptr<pb::Heapd::Stub> stub;

static void deadline(grpc::ClientContext *c)
{
	c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
}

// Unary call through the generated stub: call(&Stub::Method, request).
template <class Req, class Resp>
static grpc::Status call(grpc::Status (pb::Heapd::Stub::*m)(grpc::ClientContext *, const Req &,
							      Resp *),
			 const Req &rq, Resp *rs = nullptr)
{
	grpc::ClientContext c;
	Resp tmp;

	deadline(&c);
	return ((*stub).*m)(&c, rq, rs ? rs : &tmp);
}

static pb::ClientMessage hello(uint32_t version, uint32_t pid, const std::string &client)
{
	pb::ClientMessage m;
	m.mutable_hello()->set_protocol_version(version);
	m.mutable_hello()->set_pid(pid);
	m.mutable_hello()->set_client(client);
	return m;
}

static pb::ClientMessage goodbye()
{
	pb::ClientMessage m;
	m.mutable_goodbye();
	return m;
}

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
	pb::StatusResponse rs;
	grpc::Status s = call(&pb::Heapd::Stub::Status, pb::StatusRequest(), &rs);

	if (r != 0)
		th_fail(__FILE__, __LINE__, "heapd died after %s", after.c_str());
	else if (!s.ok())
		th_fail(__FILE__, __LINE__, "Status after %s: %s %s", after.c_str(),
			code_name(s.error_code()), s.error_message().c_str());
	else if (rs.heap_path().empty())
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
	grpc::ClientContext c;
	std::unique_ptr<grpc::ClientReaderWriter<pb::ClientMessage, pb::ServerMessage>> st;
	uint32_t id = 0;
	uint64_t token = 0;
};

static bool attach(Session *se)
{
	pb::ServerMessage r;

	se->st = stub->Attach(&se->c);
	if (!se->st->Write(hello(1, (uint32_t)getpid(), "test_bad_rpc")) || !se->st->Read(&r)) {
		fprintf(stderr, "attach: stream failed: %s\n",
			se->st->Finish().error_message().c_str());
		return false;
	}
	if (!r.has_welcome()) {
		fprintf(stderr, "attach: no Welcome%s%s\n", r.has_refused() ? ", Refused: " : "",
			r.refused().reason().c_str());
		return false;
	}
	se->id = r.welcome().session();
	se->token = r.welcome().token();
	return true;
}

static pb::SessionRef session_ref(uint32_t id, uint64_t token)
{
	pb::SessionRef ref;
	ref.set_session(id);
	ref.set_token(token);
	return ref;
}

static void add_field(pb::RegisterClassRequest *rq, const std::string &name, int type,
		      uint32_t ref_class = 0)
{
	pb::FieldSpec *f = rq->add_fields();
	f->set_name(name);
	f->set_type(static_cast<pb::FieldType>(type));
	f->set_ref_class(ref_class);
}

static pb::RegisterClassRequest reg_req(uint32_t id, uint64_t token, const std::string &name)
{
	pb::RegisterClassRequest rq;
	*rq.mutable_session() = session_ref(id, token);
	rq.set_name(name);
	return rq;
}

static grpc::Status reg(uint32_t id, uint64_t token, const std::string &name, int nfields,
			int type, uint32_t ref_class = 0)
{
	pb::RegisterClassRequest rq = reg_req(id, token, name);

	for (int i = 0; i < nfields; i++)
		add_field(&rq, "f" + std::to_string(i), type, ref_class);
	return call(&pb::Heapd::Stub::RegisterClass, rq);
}

static grpc::Status reg2(const pb::RegisterClassRequest &rq)
{
	return call(&pb::Heapd::Stub::RegisterClass, rq);
}

static void bad_register(const Session &se)
{
	const uint32_t id = se.id;
	const uint64_t tok = se.token;
	const int I32 = pb::FIELD_TYPE_I32, I64 = pb::FIELD_TYPE_I64, REF = pb::FIELD_TYPE_REF;
	pb::RegisterClassRequest rq;

	expect_code("RegisterClass wrong token", reg(id, tok ^ 0x5a5a5a5a5a5a5a5aull, "Ok", 1, I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass unknown session", reg(1000, tok, "Ok", 1, I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass session 0", reg(0, 0, "Ok", 1, I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass session 1<<31", reg(1u << 31, tok, "Ok", 1, I64),
		    StatusCode::INVALID_ARGUMENT);
	rq.set_name("Ok");
	expect_code("RegisterClass no session", reg2(rq), StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass empty name", reg(id, tok, "", 1, I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass 300-byte name", reg(id, tok, std::string(300, 'n'), 1, I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass name with NUL",
		    reg(id, tok, std::string("Bad\0Name", 8), 1, I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass 2000 fields", reg(id, tok, "Wide", 2000, I64),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass field type 0", reg(id, tok, "T0", 1, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass field type 99", reg(id, tok, "T99", 1, 99),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass unknown ref_class", reg(id, tok, "Dangling", 1, REF, 4000),
		    StatusCode::INVALID_ARGUMENT);
	rq = reg_req(id, tok, "RefI64");
	add_field(&rq, "x", I64, 3);
	expect_code("RegisterClass ref_class on an i64", reg2(rq), StatusCode::INVALID_ARGUMENT);
	rq = reg_req(id, tok, "Dup");
	add_field(&rq, "same", I32);
	add_field(&rq, "same", I32);
	expect_code("RegisterClass duplicate field", reg2(rq), StatusCode::INVALID_ARGUMENT);
	rq = reg_req(id, tok, "BadField");
	add_field(&rq, "9lives", I32);
	expect_code("RegisterClass bad field name", reg2(rq), StatusCode::INVALID_ARGUMENT);
	rq = reg_req(id, tok, "LongField");
	add_field(&rq, std::string(64, 'f'), I32);
	expect_code("RegisterClass 64-byte field name", reg2(rq), StatusCode::INVALID_ARGUMENT);

	// A good one works, and the same name with another layout is refused.
	expect_code("RegisterClass good", reg(id, tok, "GoodClass", 3, I64), StatusCode::OK);
	expect_code("RegisterClass ClassMismatch", reg(id, tok, "GoodClass", 2, I64),
		    StatusCode::FAILED_PRECONDITION);
}

static pb::LeaseArenaRequest lease(const pb::SessionRef &ref, uint32_t slot)
{
	pb::LeaseArenaRequest rq;
	*rq.mutable_session() = ref;
	rq.set_slot_size(slot);
	return rq;
}

static grpc::Status large(const pb::SessionRef &ref, uint64_t size)
{
	pb::LeaseLargeRequest rq;
	*rq.mutable_session() = ref;
	rq.set_size(size);
	return call(&pb::Heapd::Stub::LeaseLarge, rq);
}

static void bad_leases(const Session &se)
{
	const uint32_t slots[] = { 0, 17, 1u << 30 };
	pb::SessionRef ref = session_ref(se.id, se.token);

	for (uint32_t slot : slots)
		expect_code("LeaseArena slot " + std::to_string(slot),
			    call(&pb::Heapd::Stub::LeaseArena, lease(ref, slot)),
			    StatusCode::INVALID_ARGUMENT);
	expect_code("LeaseArena wrong token",
		    call(&pb::Heapd::Stub::LeaseArena,
			 lease(session_ref(se.id, se.token + 1), 64)),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("LeaseLarge size 0", large(ref, 0), StatusCode::INVALID_ARGUMENT);
	// Beyond what an object header can describe: malformed, not "full".
	expect_code("LeaseLarge size 1<<62", large(ref, 1ull << 62), StatusCode::INVALID_ARGUMENT);
	// Bigger than the whole heap: never satisfiable, so malformed.
	expect_code("LeaseLarge 1 GiB in a 64M heap", large(ref, 1ull << 30),
		    StatusCode::INVALID_ARGUMENT);
	// Smaller than the heap but more than is free: the heap is full.
	expect_code("LeaseLarge 60 MiB in a 64M heap", large(ref, 60ull << 20),
		    StatusCode::RESOURCE_EXHAUSTED);
	pb::ReturnArenaRequest rr;
	*rr.mutable_session() = ref;
	rr.set_arena_off(12345);
	expect_code("ReturnArena unknown arena", call(&pb::Heapd::Stub::ReturnArena, rr),
		    StatusCode::INVALID_ARGUMENT);
}

static void bad_lookups()
{
	pb::GetClassRequest rq;

	rq.set_class_id(4000);
	expect_code("GetClass unknown id", call(&pb::Heapd::Stub::GetClass, rq),
		    StatusCode::NOT_FOUND);
	// Outside the class table altogether: malformed rather than missing.
	rq.set_class_id(1u << 31);
	expect_code("GetClass id 1<<31", call(&pb::Heapd::Stub::GetClass, rq),
		    StatusCode::INVALID_ARGUMENT);
	rq.set_name("NoSuchClass");
	expect_code("GetClass unknown name", call(&pb::Heapd::Stub::GetClass, rq),
		    StatusCode::NOT_FOUND);
	expect_code("Gc", call(&pb::Heapd::Stub::Gc, pb::GcRequest()), StatusCode::OK);
	expect_code("Check", call(&pb::Heapd::Stub::Check, pb::CheckRequest()),
		    StatusCode::UNIMPLEMENTED);
}

// An Attach whose first message is m must be refused (Refused message or
// an error status), never welcomed.
static void bad_attach(const std::string &what, const pb::ClientMessage &m)
{
	std::string reason;
	bool welcomed = false;
	grpc::Status st;
	{
		grpc::ClientContext c;
		deadline(&c);
		auto s = stub->Attach(&c);
		pb::ServerMessage r;
		s->Write(m);
		s->WritesDone();
		while (s->Read(&r)) {
			welcomed |= r.has_welcome();
			if (r.has_refused())
				reason = r.refused().reason().empty() ? "(empty)" : r.refused().reason();
		}
		st = s->Finish();
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
	bad_attach("Attach with an empty message", pb::ClientMessage());
	{
		// A stream that ends before any message: heapd just forgets it.
		grpc::ClientContext c;
		deadline(&c);
		auto s = stub->Attach(&c);
		s->WritesDone();
		s->Finish();
	}
	expect_alive("Attach closed without Hello");
}

int main()
{
	if (th_heapd_start(&d, nullptr) != 0) {
		th_fail(__FILE__, __LINE__, "heapd did not start");
		return th_summary("test_bad_rpc");
	}
	stub = pb::Heapd::NewStub(
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
				    call(&pb::Heapd::Stub::LeaseArena,
					 lease(session_ref(se.id, se.token), 64)),
				    StatusCode::OK);
			se.st->Write(goodbye());
			se.st->WritesDone();
			se.st->Finish();
		}
	}
	expect_alive("Goodbye");
	th_heapd_cleanup(&d);
	return th_summary("test_bad_rpc");
}
