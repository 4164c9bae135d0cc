#include "client/cli/health_command.h"

#include <cstdio>
#include <memory>

#include "absl/strings/str_cat.h"
#include "client/cli/channel.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace sealbox::client {
namespace {

namespace health = ::grpc::health::v1;

// A probe must answer quickly; --timeout still overrides this.
constexpr double kDefaultProbeSeconds = 5;

Outcome RunHealth(const Invocation& invocation) {
  GlobalOptions options = invocation.global;
  if (!options.timeout_seconds) options.timeout_seconds = kDefaultProbeSeconds;
  absl::StatusOr<std::unique_ptr<Connection>> connection = Connection::Create(options);
  if (!connection.ok()) return Outcome::Error(std::string(connection.status().message()));

  health::HealthCheckRequest request;
  request.set_service(invocation.Get("--service"));
  health::HealthCheckResponse response;
  grpc::ClientContext context;
  (*connection)->Prepare(context, CallKind::kUnary);
  grpc::Status status =
      health::Health::NewStub((*connection)->channel())->Check(&context, request, &response);
  if (!status.ok()) return (*connection)->Failed("health check", status, context);

  const std::string name = health::HealthCheckResponse::ServingStatus_Name(response.status());
  std::printf("%s\n", name.c_str());
  // --alive: the process answers, serving or not. A liveness probe asks this, so that
  // a replica that refuses calls for a reason a restart cannot mend (etcd out of
  // reach past --max-staleness, a drain) is not restarted for it.
  if (invocation.Has("--alive")) return Outcome::Ok();
  if (response.status() != health::HealthCheckResponse::SERVING) {
    return Outcome::Error(absl::StrCat("the server is ", name));
  }
  return Outcome::Ok();
}

}  // namespace

Command HealthCommand() {
  return {
      {"health"},
      "[--service NAME] [--alive]",
      "ask the server whether it is serving (gRPC health check)",
      "Prints the server's health status (SERVING, NOT_SERVING, ...) and exits 0 only\n"
      "when it is SERVING: 1 for any other status, 5 for an unknown --service, 6 when\n"
      "the server cannot be reached. With --alive, 0 for any status: the process\n"
      "answers (a liveness probe; readiness asks without it).\n"
      "Needs no token. Times out after 5 s unless --timeout says otherwise. The\n"
      "container image's Kubernetes probes run it.",
      {{"--service", "", "NAME", "one service, e.g. sealbox.v1.Crypto (default: the whole server)"},
       {"--alive", "", "", "exit 0 whatever the status, if the server answers"}},
      0,
      0,
      RunHealth,
  };
}

}  // namespace sealbox::client
