/*
 * health.cc -- grpc.health.v1.Health/Check without generated code (see
 * health.h).
 */
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/impl/rpc_method.h>

#include "health.h"

namespace gp = google::protobuf;

namespace heapctl {

namespace {

/* The messages of grpc/health/v1/health.proto, as a descriptor. */
void describe_health(gp::FileDescriptorProto *f)
{
	f->set_name("grpc/health/v1/health.proto");
	f->set_package("grpc.health.v1");
	f->set_syntax("proto3");

	gp::DescriptorProto *req = f->add_message_type();
	req->set_name("HealthCheckRequest");
	gp::FieldDescriptorProto *svc = req->add_field();
	svc->set_name("service");
	svc->set_number(1);
	svc->set_label(gp::FieldDescriptorProto::LABEL_OPTIONAL);
	svc->set_type(gp::FieldDescriptorProto::TYPE_STRING);

	gp::DescriptorProto *resp = f->add_message_type();
	resp->set_name("HealthCheckResponse");
	gp::EnumDescriptorProto *e = resp->add_enum_type();
	e->set_name("ServingStatus");
	const char *names[] = {"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"};
	for (int i = 0; i < 4; i++) {
		gp::EnumValueDescriptorProto *v = e->add_value();
		v->set_name(names[i]);
		v->set_number(i);
	}
	gp::FieldDescriptorProto *st = resp->add_field();
	st->set_name("status");
	st->set_number(1);
	st->set_label(gp::FieldDescriptorProto::LABEL_OPTIONAL);
	st->set_type(gp::FieldDescriptorProto::TYPE_ENUM);
	st->set_type_name(".grpc.health.v1.HealthCheckResponse.ServingStatus");
}

/* Built once; heapctl is a short-lived program, so these simply live
 * until exit. */
struct Health {
	gp::DescriptorPool pool;
	gp::DynamicMessageFactory factory{&pool};
	const gp::Descriptor *req = nullptr;
	const gp::Descriptor *resp = nullptr;
};

Health *health()
{
	static Health *h = [] {
		Health *x = new Health();
		gp::FileDescriptorProto f;
		describe_health(&f);
		x->pool.BuildFile(f);
		x->req = x->pool.FindMessageTypeByName("grpc.health.v1.HealthCheckRequest");
		x->resp = x->pool.FindMessageTypeByName("grpc.health.v1.HealthCheckResponse");
		return x;
	}();
	return h;
}

} /* namespace */

grpc::Status health_check(grpc::Channel *channel, grpc::ClientContext *ctx,
			  const std::string &service, std::unique_ptr<gp::Message> *resp)
{
	Health *h = health();
	if (!h->req || !h->resp)
		return grpc::Status(grpc::StatusCode::INTERNAL, "cannot describe grpc.health.v1");
	std::unique_ptr<gp::Message> req(h->factory.GetPrototype(h->req)->New());
	req->GetReflection()->SetString(req.get(), h->req->FindFieldByName("service"), service);
	resp->reset(h->factory.GetPrototype(h->resp)->New());
	grpc::internal::RpcMethod method("/grpc.health.v1.Health/Check",
					 grpc::internal::RpcMethod::NORMAL_RPC);
	return grpc::internal::BlockingUnaryCall<gp::Message, gp::Message, gp::MessageLite,
						 gp::MessageLite>(channel, method, ctx, *req,
								  resp->get());
}

std::string health_status_name(const gp::Message &resp)
{
	const gp::FieldDescriptor *f = resp.GetDescriptor()->FindFieldByName("status");
	if (!f)
		return "UNKNOWN";
	return resp.GetReflection()->GetEnum(resp, f)->name();
}

} /* namespace heapctl */
