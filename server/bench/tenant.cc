#include "server/bench/tenant.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "server/bench/load_common.h"

namespace sealbox::load {

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

absl::StatusOr<std::string> CreateTenant(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& admin_token) {
  std::unique_ptr<v1::Admin::Stub> admin = v1::Admin::NewStub(channel);
  auto call = [&](auto method, const auto& request, auto* response) -> absl::Status {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + admin_token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = ((*admin).*method)(&context, request, response);
    if (status.ok()) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("admin call failed: ", status.error_message()));
  };
  const std::string tenant =
      absl::StrCat("bench-", getpid(), "-", Clock::now().time_since_epoch().count() % 1000000);
  v1::CreateTenantRequest create_tenant;
  create_tenant.set_name(tenant);
  v1::Tenant created_tenant;
  if (absl::Status s = call(&v1::Admin::Stub::CreateTenant, create_tenant, &created_tenant);
      !s.ok()) {
    return s;
  }
  v1::CreateKeyRequest create_key;  // the default algorithm, AES-256-GCM
  create_key.set_tenant(tenant);
  create_key.set_key(kKey);
  v1::Key created_key;
  if (absl::Status s = call(&v1::Admin::Stub::CreateKey, create_key, &created_key); !s.ok()) {
    return s;
  }
  v1::IssueTokenRequest issue;
  issue.set_tenant(tenant);
  issue.set_description("tools/dev bench service");
  v1::IssueTokenResponse issued;
  if (absl::Status s = call(&v1::Admin::Stub::IssueToken, issue, &issued); !s.ok()) return s;
  return issued.token();
}

}  // namespace sealbox::load
