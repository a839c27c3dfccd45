// test_bad_rpc.cc -- malformed control requests, sent with raw gRPC stubs
// (no libuniheap in between), must get the documented status codes, and
// heapd must go on serving: after every request it still answers Status
// and its process is still alive.

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
	default: return "other";
	}
}

static std::unique_ptr<grpc::ClientContext> ctx()
{
	auto c = std::make_unique<grpc::ClientContext>();
	c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
	return c;
}

// heapd is alive (not exited) and answers Status.
static void expect_alive(const std::string &after)
{
	int st;
	pid_t r = waitpid(d.pid, &st, WNOHANG);
	pb::StatusRequest rq;
	pb::StatusResponse rs;
	grpc::Status s = stub->Status(ctx().get(), rq, &rs);

	if (r != 0)
		th_fail(__FILE__, __LINE__, "heapd died after %s", after.c_str());
	else if (!s.ok())
		th_fail(__FILE__, __LINE__, "Status after %s: %s %s", after.c_str(),
			code_name(s.error_code()), s.error_message().c_str());
	else
		th_passed++;
}

// s must have code want and a non-empty message.
static void expect_code(const std::string &what, const grpc::Status &s, StatusCode want)
{
	printf("%-34s -> %s: %s\n", what.c_str(), code_name(s.error_code()),
	       s.error_message().c_str());
	if (s.error_code() != want)
		th_fail(__FILE__, __LINE__, "%s: got %s (%s), want %s", what.c_str(),
			code_name(s.error_code()), s.error_message().c_str(), code_name(want));
	else if (want != StatusCode::OK && s.error_message().empty())
		th_fail(__FILE__, __LINE__, "%s: %s without a message", what.c_str(),
			code_name(want));
	else
		th_passed++;
	expect_alive(what);
}

// A real session: the Attach stream stays open while the test runs.
struct Session {
	grpc::ClientContext c;
	std::unique_ptr<grpc::ClientReaderWriter<pb::ClientMessage, pb::ServerMessage>> s;
	uint32_t id = 0;
	uint64_t token = 0;
};

static bool attach(Session *se)
{
	pb::ClientMessage m;
	pb::ServerMessage r;

	se->s = stub->Attach(&se->c);
	m.mutable_hello()->set_protocol_version(1);
	m.mutable_hello()->set_pid((uint32_t)getpid());
	m.mutable_hello()->set_client("test_bad_rpc");
	if (!se->s->Write(m) || !se->s->Read(&r) || !r.has_welcome())
		return false;
	se->id = r.welcome().session();
	se->token = r.welcome().token();
	return true;
}

static void set_session(pb::SessionRef *ref, const Session &se)
{
	ref->set_session(se.id);
	ref->set_token(se.token);
}

static grpc::Status reg(const Session &se, const std::string &name, int nfields, int type,
			uint32_t ref_class)
{
	pb::RegisterClassRequest rq;
	pb::RegisterClassResponse rs;

	set_session(rq.mutable_session(), se);
	rq.set_name(name);
	for (int i = 0; i < nfields; i++) {
		pb::FieldSpec *f = rq.add_fields();
		f->set_name("f" + std::to_string(i));
		f->set_type(static_cast<pb::FieldType>(type));
		if (type == pb::FIELD_TYPE_REF)
			f->set_ref_class(ref_class);
	}
	return stub->RegisterClass(ctx().get(), rq, &rs);
}

static void bad_register(const Session &se)
{
	Session fake;
	fake.id = se.id;
	fake.token = se.token ^ 0x5a5a5a5a5a5a5a5aull;
	expect_code("RegisterClass wrong token", reg(fake, "Ok", 1, pb::FIELD_TYPE_I64, 0),
		    StatusCode::INVALID_ARGUMENT);
	fake.id = 1000;
	expect_code("RegisterClass unknown session", reg(fake, "Ok", 1, pb::FIELD_TYPE_I64, 0),
		    StatusCode::INVALID_ARGUMENT);
	fake.id = 0;
	fake.token = 0;
	expect_code("RegisterClass session 0", reg(fake, "Ok", 1, pb::FIELD_TYPE_I64, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass empty name", reg(se, "", 1, pb::FIELD_TYPE_I64, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass 300-byte name",
		    reg(se, std::string(300, 'n'), 1, pb::FIELD_TYPE_I64, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass name with NUL",
		    reg(se, std::string("Bad\0Name", 8), 1, pb::FIELD_TYPE_I64, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass 2000 fields", reg(se, "Wide", 2000, pb::FIELD_TYPE_I64, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass field type 0", reg(se, "T0", 1, 0, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass field type 99", reg(se, "T99", 1, 99, 0),
		    StatusCode::INVALID_ARGUMENT);
	expect_code("RegisterClass unknown ref_class",
		    reg(se, "Dangling", 1, pb::FIELD_TYPE_REF, 4000),
		    StatusCode::INVALID_ARGUMENT);

	pb::RegisterClassRequest rq;
	pb::RegisterClassResponse rs;
	set_session(rq.mutable_session(), se);
	rq.set_name("DupFields");
	for (int i = 0; i < 2; i++) {
		pb::FieldSpec *f = rq.add_fields();
		f->set_name("same");
		f->set_type(pb::FIELD_TYPE_I32);
	}
	expect_code("RegisterClass duplicate field",
		    stub->RegisterClass(ctx().get(), rq, &rs), StatusCode::INVALID_ARGUMENT);
	rq.clear_fields();
	pb::FieldSpec *f = rq.add_fields();
	f->set_name("9lives");
	f->set_type(pb::FIELD_TYPE_I32);
	expect_code("RegisterClass bad field name",
		    stub->RegisterClass(ctx().get(), rq, &rs), StatusCode::INVALID_ARGUMENT);

	// And a good one still works, twice, with the same id.
	grpc::Status s1 = reg(se, "GoodClass", 3, pb::FIELD_TYPE_I64, 0);
	expect_code("RegisterClass good", s1, StatusCode::OK);
	expect_code("RegisterClass ClassMismatch", reg(se, "GoodClass", 2, pb::FIELD_TYPE_I64, 0),
		    StatusCode::FAILED_PRECONDITION);
}

static void bad_leases(const Session &se)
{
	const uint32_t slots[] = { 0, 17, 1u << 30 };
	pb::LeaseArenaResponse rs;

	for (uint32_t slot : slots) {
		pb::LeaseArenaRequest rq;
		set_session(rq.mutable_session(), se);
		rq.set_slot_size(slot);
		expect_code("LeaseArena slot " + std::to_string(slot),
			    stub->LeaseArena(ctx().get(), rq, &rs), StatusCode::INVALID_ARGUMENT);
	}
	{
		pb::LeaseLargeRequest rq;
		set_session(rq.mutable_session(), se);
		rq.set_size(0);
		expect_code("LeaseLarge size 0", stub->LeaseLarge(ctx().get(), rq, &rs),
			    StatusCode::INVALID_ARGUMENT);
		rq.set_size(1ull << 62);
		// Beyond what an object header can describe: malformed, not "full".
		expect_code("LeaseLarge size 1<<62", stub->LeaseLarge(ctx().get(), rq, &rs),
			    StatusCode::INVALID_ARGUMENT);
		rq.set_size(1ull << 30);	// legal size, but bigger than the 64M heap
		expect_code("LeaseLarge 1 GiB in 64M heap", stub->LeaseLarge(ctx().get(), rq, &rs),
			    StatusCode::RESOURCE_EXHAUSTED);
	}
	{
		pb::ReturnArenaRequest rq;
		pb::ReturnArenaResponse rr;
		set_session(rq.mutable_session(), se);
		rq.set_arena_off(12345);
		expect_code("ReturnArena unknown arena", stub->ReturnArena(ctx().get(), rq, &rr),
			    StatusCode::INVALID_ARGUMENT);
	}
}

static void bad_lookups()
{
	pb::GetClassRequest rq;
	pb::ClassInfo ci;

	rq.set_class_id(4000);
	expect_code("GetClass unknown id", stub->GetClass(ctx().get(), rq, &ci),
		    StatusCode::NOT_FOUND);
	rq.set_class_id(1u << 31);
	expect_code("GetClass id 1<<31", stub->GetClass(ctx().get(), rq, &ci),
		    StatusCode::NOT_FOUND);
	rq.set_name("NoSuchClass");
	expect_code("GetClass unknown name", stub->GetClass(ctx().get(), rq, &ci),
		    StatusCode::NOT_FOUND);

	pb::GcRequest g;
	pb::GcResponse gr;
	expect_code("Gc", stub->Gc(ctx().get(), g, &gr), StatusCode::UNIMPLEMENTED);
	pb::CheckRequest c;
	pb::CheckResponse cr;
	expect_code("Check", stub->Check(ctx().get(), c, &cr), StatusCode::UNIMPLEMENTED);
}

// An Attach whose first message is m must be refused (Refused message or
// an error status), never welcomed.
static void bad_attach(const std::string &what, const pb::ClientMessage &m)
{
	grpc::ClientContext c;
	c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
	auto s = stub->Attach(&c);
	pb::ServerMessage r;
	std::string reason;
	bool welcomed = false;

	s->Write(m);
	s->WritesDone();
	while (s->Read(&r)) {
		if (r.has_welcome())
			welcomed = true;
		if (r.has_refused())
			reason = r.refused().reason();
	}
	grpc::Status st = s->Finish();
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
	pb::ClientMessage m;

	m.mutable_hello()->set_protocol_version(2);
	m.mutable_hello()->set_pid((uint32_t)getpid());
	bad_attach("Attach protocol version 2", m);
	m.mutable_hello()->set_protocol_version(0);
	bad_attach("Attach protocol version 0", m);
	m.mutable_hello()->set_protocol_version(1);
	m.mutable_hello()->set_pid(1);
	bad_attach("Attach with a foreign pid", m);
	m.mutable_hello()->set_pid((uint32_t)getpid());
	m.mutable_hello()->set_client(std::string(1000, 'c'));
	bad_attach("Attach 1000-byte client text", m);
	pb::ClientMessage bye;
	bye.mutable_goodbye();
	bad_attach("Attach starting with Goodbye", bye);
	pb::ClientMessage empty;
	bad_attach("Attach with an empty message", empty);

	// A stream that ends before any message: heapd just forgets it.
	grpc::ClientContext c;
	auto s = stub->Attach(&c);
	s->WritesDone();
	s->Finish();
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
	Session se;
	if (!attach(&se)) {
		th_fail(__FILE__, __LINE__, "could not attach a session");
		th_heapd_cleanup(&d);
		return th_summary("test_bad_rpc");
	}
	bad_register(se);
	bad_leases(se);
	bad_lookups();
	bad_attaches();

	// The session still works after all that.
	pb::LeaseArenaRequest rq;
	pb::LeaseArenaResponse rs;
	set_session(rq.mutable_session(), se);
	rq.set_slot_size(64);
	expect_code("LeaseArena 64 (valid)", stub->LeaseArena(ctx().get(), rq, &rs),
		    StatusCode::OK);
	pb::ClientMessage bye;
	bye.mutable_goodbye();
	se.s->Write(bye);
	se.s->WritesDone();
	se.s->Finish();
	expect_alive("Goodbye");
	th_heapd_cleanup(&d);
	return th_summary("test_bad_rpc");
}
