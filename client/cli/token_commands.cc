#include "client/cli/token_commands.h"

#include <cstdio>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/cli/admin_output.h"
#include "client/cli/channel.h"
#include "client/cli/token_scope.h"
#include "crypto/secret/secure_wipe.h"
#include "sealbox/v1/data.grpc.pb.h"

namespace sealbox::client {
namespace {

namespace v1 = ::sealbox::v1;

Outcome RunTokenRenew(const Invocation& invocation) {
  v1::RenewTokenRequest request;
  if (invocation.Has("--ttl")) {
    absl::StatusOr<absl::Duration> ttl = ParseLifetime(invocation.Get("--ttl"));
    if (!ttl.ok()) return Outcome::Usage(absl::StrCat("--ttl: ", ttl.status().message()));
    SetDuration(*ttl, *request.mutable_ttl());
  }
  absl::StatusOr<std::unique_ptr<Connection>> connection = Connection::Create(invocation.global);
  if (!connection.ok()) return Outcome::Error(std::string(connection.status().message()));
  grpc::ClientContext context;
  (*connection)->Prepare(context, CallKind::kUnary);
  v1::RenewTokenResponse response;
  grpc::Status status =
      v1::Crypto::NewStub((*connection)->channel())->RenewToken(&context, request, &response);
  if (!status.ok()) return (*connection)->Failed("renew token", status, context);
  crypto::WipeOnExit wipe(*response.mutable_token());
  // The token alone on stdout, as `admin token issue` prints it.
  std::fprintf(stderr,
               "sealbox: renewed as token %s, which expires %s; the old token works until "
               "its own expiry\n",
               response.token_id().c_str(),
               FormatUnixTime(response.expire_time().seconds()).c_str());
  std::cout << response.token() << "\n" << std::flush;
  return Outcome::Ok();
}

}  // namespace

std::vector<Command> TokenCommands() {
  return {
      {{"token", "renew"},
       "[--ttl D]",
       "get a successor to your expiring token (printed once)",
       "Run with the token to renew (SEALBOX_TOKEN or --token). The successor has the\n"
       "same tenant, description and scope and works for --ttl (default: as long as\n"
       "the token was issued for), never past the token's max-ttl. The old token keeps\n"
       "working until its own expiry, so roll the new one out first:\n"
       "  export SEALBOX_TOKEN=$(sealbox token renew)",
       {{"--ttl", "", "D", "how long the successor works: 90s, 15m, 24h, 30d"}},
       0,
       0,
       RunTokenRenew},
  };
}

}  // namespace sealbox::client
