/*
 * health.h -- heapctl's client of the standard grpc.health.v1 service.
 *
 * Debian's libgrpc++ ships no generated health stubs, so the two messages
 * are described at run time (a DynamicMessage built from a hand-written
 * descriptor of grpc/health/v1/health.proto) and sent with gRPC's plain
 * unary call: the answer is a real protobuf message, printable as JSON.
 */
#ifndef HEAPCTL_HEALTH_H
#define HEAPCTL_HEALTH_H

#include <memory>
#include <string>

#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>

namespace heapctl {

/* Health.Check(service) on channel; on success *resp is the
 * HealthCheckResponse. */
grpc::Status health_check(grpc::Channel *channel, grpc::ClientContext *ctx,
			  const std::string &service,
			  std::unique_ptr<google::protobuf::Message> *resp);

/* The ServingStatus name in resp ("SERVING", "NOT_SERVING", ...). */
std::string health_status_name(const google::protobuf::Message &resp);

} /* namespace heapctl */

#endif /* HEAPCTL_HEALTH_H */
