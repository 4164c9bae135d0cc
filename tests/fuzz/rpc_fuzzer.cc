// Request validation of every RPC, through the real server: one SealboxServer in
// this process (a keystore in a temporary folder, the fixed KEK and admin token,
// tenant "fuzz" with key "k" = the fixed AES-256 material, and a token for it),
// reached over loopback gRPC. Each input picks an RPC and a credential and is
// parsed as that RPC's request; the server must answer every call with a status
// (never hang, never INTERNAL or UNKNOWN) and never crash.
//
// Input: RPC (1; rpc_input.h) | credential (1; tenant token, admin token, none, a
// wrong token) | request.
//   unary RPCs:  the rest is the serialized request message.
//   stream RPCs: the rest is up to 16 messages, each u16 BE length | message.
// Input that does not parse is skipped.
//
// Admin calls name tenant "scratch" wherever they name "fuzz", so they can
// never delete or revoke what the data-plane calls rely on, and never revoke the
// bootstrap admin token the fuzzer's own admin calls use; every 256 admin calls all
// tenants but "fuzz" and all admin tokens are deleted, so the keystore stays small.
// Every call is audited (to /dev/null), so the audit path meets every outcome.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/reflection.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/process/server.h"
#include "tests/fuzz/fixtures.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/rpc_input.h"

namespace sealbox::fuzz {
namespace {

constexpr char kScratchTenant[] = "scratch";
constexpr int kAdminCallsBetweenCleanups = 256;
constexpr size_t kMaxStreamMessages = 16;

void Check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "rpc_fuzzer: %s\n", what);
    std::abort();
  }
}

// The server and clients, made once and kept for the whole process.
struct Fixture {
  std::unique_ptr<server::SealboxServer> server;
  std::unique_ptr<v1::Crypto::Stub> crypto;
  std::unique_ptr<v1::Admin::Stub> admin;
  std::string tenant_token;
  int admin_calls = 0;
};

void Authorize(const Fixture& f, int credential, grpc::ClientContext& context) {
  // Generous: the server must answer, but a loaded CI machine may be slow.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  switch (credential) {
    case kTenantToken:
      context.AddMetadata("authorization", "Bearer " + f.tenant_token);
      break;
    case kAdmin:
      context.AddMetadata("authorization", absl::StrCat("Bearer ", kAdminToken));
      break;
    case kWrongToken:
      context.AddMetadata("authorization", "Bearer sbx_not-a-real-token");
      break;
  }
}

void CheckAnswer(const grpc::Status& status) {
  Check(status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED,
        "no answer within the deadline");
  Check(status.error_code() != grpc::StatusCode::UNKNOWN, "status UNKNOWN");
  Check(status.error_code() != grpc::StatusCode::INTERNAL, "status INTERNAL");
}

template <typename Stub, typename Request, typename Response>
grpc::Status Call(const Fixture& f, Stub& stub,
                  grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                  const Request& request, int credential) {
  grpc::ClientContext context;
  Authorize(f, credential, context);
  Response response;
  return (stub.*method)(&context, request, &response);
}

std::string TempDataDir() {
  // tmpfs when there is one: every admin change is a durable (fsync'd) write.
  std::string base = "/dev/shm";
  if (const char* test_tmp = std::getenv("TEST_TMPDIR")) base = test_tmp;
  if (access(base.c_str(), W_OK) != 0) base = "/tmp";
  std::string dir = base + "/sealbox-rpc-fuzzer-XXXXXX";
  Check(mkdtemp(dir.data()) != nullptr, "mkdtemp failed");
  return dir;
}

// Deletes every tenant but the fixture's, and makes the scratch tenant again.
void Cleanup(const Fixture& f) {
  grpc::ClientContext context;
  Authorize(f, kAdmin, context);
  v1::ListTenantsResponse tenants;
  const grpc::Status listed = f.admin->ListTenants(&context, {}, &tenants);
  Check(listed.ok(), ("ListTenants failed: " + listed.error_message()).c_str());
  for (const v1::Tenant& tenant : tenants.tenants()) {
    if (tenant.name() == kTenant) continue;
    v1::DeleteTenantRequest request;
    request.set_name(tenant.name());
    Check(Call(f, *f.admin, &v1::Admin::Stub::DeleteTenant, request, kAdmin).ok(),
          "DeleteTenant failed");
  }
  grpc::ClientContext list_context;
  Authorize(f, kAdmin, list_context);
  v1::ListAdminTokensResponse admin_tokens;
  Check(f.admin->ListAdminTokens(&list_context, {}, &admin_tokens).ok(), "ListAdminTokens failed");
  for (const v1::TokenInfo& token : admin_tokens.tokens()) {
    v1::RevokeAdminTokenRequest request;
    request.set_token_id(token.id());
    Check(Call(f, *f.admin, &v1::Admin::Stub::RevokeAdminToken, request, kAdmin).ok(),
          "RevokeAdminToken failed");
  }
  v1::CreateTenantRequest create;
  create.set_name(kScratchTenant);
  Check(Call(f, *f.admin, &v1::Admin::Stub::CreateTenant, create, kAdmin).ok(),
        "CreateTenant scratch failed");
}

Fixture& GetFixture() {
  static Fixture* fixture = [] {
    auto* f = new Fixture;
    server::ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.data_dir = TempDataDir();
    config.kek = *server::Kek::FromBytes(kKek);
    config.admin_token = kAdminToken;
    config.create_keystore = true;
    config.limits.max_unary_bytes = 64 * 1024;
    config.drain_timeout = absl::Seconds(1);
    // Every input comes from one loopback address, many with wrong tokens: with the
    // per-address limit on failed authentication, every later call would be refused
    // before reaching its RPC's validation.
    config.auth_limits.max_failures = 0;
    config.audit = server::AuditLevel::kAll;
    config.audit_log = "/dev/null";
    const std::string data_dir = config.data_dir;
    // The folder goes when the process ends normally (a crash leaves it for study).
    static const std::string* to_remove = new std::string(data_dir);
    std::atexit([] { std::filesystem::remove_all(*to_remove); });
    auto server = server::SealboxServer::Start(std::move(config));
    Check(server.ok(), "the server did not start");
    f->server = *std::move(server);
    auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", f->server->port()),
                                       grpc::InsecureChannelCredentials());
    f->crypto = v1::Crypto::NewStub(channel);
    f->admin = v1::Admin::NewStub(channel);

    v1::CreateTenantRequest tenant;
    tenant.set_name(kTenant);
    Check(Call(*f, *f->admin, &v1::Admin::Stub::CreateTenant, tenant, kAdmin).ok(),
          "CreateTenant failed");
    v1::ImportKeyRequest key;
    key.set_tenant(kTenant);
    key.set_key(kKeyName);
    key.set_material(std::string(kMaterial256.begin(), kMaterial256.end()));
    Check(Call(*f, *f->admin, &v1::Admin::Stub::ImportKey, key, kAdmin).ok(), "ImportKey failed");
    v1::IssueTokenRequest issue;
    issue.set_tenant(kTenant);
    grpc::ClientContext context;
    Authorize(*f, kAdmin, context);
    v1::IssueTokenResponse issued;
    Check(f->admin->IssueToken(&context, issue, &issued).ok(), "IssueToken failed");
    f->tenant_token = issued.token();
    Cleanup(*f);
    return f;
  }();
  return *fixture;
}

// Points every tenant-naming field at the scratch tenant where it names the fixture's.
void AvoidFixtureTenant(google::protobuf::Message& request) {
  const google::protobuf::Descriptor* descriptor = request.GetDescriptor();
  const google::protobuf::Reflection* reflection = request.GetReflection();
  for (const char* field_name : {"tenant", "name"}) {
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(field_name);
    if (field == nullptr || field->type() != google::protobuf::FieldDescriptor::TYPE_STRING ||
        field->is_repeated()) {
      continue;
    }
    if (reflection->GetString(request, field) == kTenant) {
      reflection->SetString(&request, field, kScratchTenant);
    }
  }
}

template <typename Request>
bool Parse(absl::Span<const uint8_t> bytes, Request* request) {
  return request->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

template <typename Request, typename Response>
void CryptoUnary(const Fixture& f,
                 grpc::Status (v1::Crypto::Stub::*method)(grpc::ClientContext*, const Request&,
                                                          Response*),
                 absl::Span<const uint8_t> bytes, int credential) {
  Request request;
  if (!Parse(bytes, &request)) return;
  CheckAnswer(Call(f, *f.crypto, method, request, credential));
}

template <typename Request, typename Response>
void AdminUnary(Fixture& f,
                grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*, const Request&,
                                                        Response*),
                absl::Span<const uint8_t> bytes, int credential) {
  Request request;
  if (!Parse(bytes, &request)) return;
  AvoidFixtureTenant(request);
  CheckAnswer(Call(f, *f.admin, method, request, credential));
  if (++f.admin_calls % kAdminCallsBetweenCleanups == 0) Cleanup(f);
}

// RevokeAdminToken, but never of the bootstrap token: the fuzzer's admin calls need it.
void RevokeAdminToken(Fixture& f, absl::Span<const uint8_t> bytes, int credential) {
  v1::RevokeAdminTokenRequest request;
  if (!Parse(bytes, &request) || request.token_id() == "bootstrap") return;
  CheckAnswer(Call(f, *f.admin, &v1::Admin::Stub::RevokeAdminToken, request, credential));
}

// Sends every message, reading answers as they come (as a real client must: the
// server answers each message before it reads the next).
template <typename Request, typename Response, typename Open>
void Streaming(const Fixture& f, Open open, FuzzInput& input, int credential) {
  std::vector<Request> requests;
  while (!input.empty() && requests.size() < kMaxStreamMessages) {
    const absl::Span<const uint8_t> bytes = input.Bytes(input.U16());
    if (!Parse(bytes, &requests.emplace_back())) return;
  }
  grpc::ClientContext context;
  Authorize(f, credential, context);
  auto stream = ((*f.crypto).*open)(&context);
  std::thread reader([&stream] {
    Response response;
    while (stream->Read(&response)) {
    }
  });
  for (const Request& request : requests) {
    if (!stream->Write(request)) break;
  }
  stream->WritesDone();
  reader.join();
  CheckAnswer(stream->Finish());
}

void CallOne(const uint8_t* data, size_t size) {
  Fixture& f = GetFixture();
  FuzzInput input(data, size);
  const int rpc = input.Byte() % kRpcCount;
  const int credential = input.Byte() % kCredentialCount;
  using A = v1::Admin::Stub;
  using C = v1::Crypto::Stub;
  switch (rpc) {
    case kSeal:
      return CryptoUnary(f, &C::Seal, input.Rest(), credential);
    case kOpen:
      return CryptoUnary(f, &C::Open, input.Rest(), credential);
    case kRewrap:
      return CryptoUnary(f, &C::Rewrap, input.Rest(), credential);
    case kSealStream:
      return Streaming<v1::SealStreamRequest, v1::SealStreamResponse>(f, &C::SealStream, input,
                                                                      credential);
    case kOpenStream:
      return Streaming<v1::OpenStreamRequest, v1::OpenStreamResponse>(f, &C::OpenStream, input,
                                                                      credential);
    case kCreateTenant:
      return AdminUnary(f, &A::CreateTenant, input.Rest(), credential);
    case kDeleteTenant:
      return AdminUnary(f, &A::DeleteTenant, input.Rest(), credential);
    case kListTenants:
      return AdminUnary(f, &A::ListTenants, input.Rest(), credential);
    case kIssueToken:
      return AdminUnary(f, &A::IssueToken, input.Rest(), credential);
    case kRevokeToken:
      return AdminUnary(f, &A::RevokeToken, input.Rest(), credential);
    case kCreateKey:
      return AdminUnary(f, &A::CreateKey, input.Rest(), credential);
    case kImportKey:
      return AdminUnary(f, &A::ImportKey, input.Rest(), credential);
    case kRotateKey:
      return AdminUnary(f, &A::RotateKey, input.Rest(), credential);
    case kGetKey:
      return AdminUnary(f, &A::GetKey, input.Rest(), credential);
    case kListKeys:
      return AdminUnary(f, &A::ListKeys, input.Rest(), credential);
    case kSetMinDecryptionVersion:
      return AdminUnary(f, &A::SetMinDecryptionVersion, input.Rest(), credential);
    case kDisableKey:
      return AdminUnary(f, &A::DisableKey, input.Rest(), credential);
    case kEnableKey:
      return AdminUnary(f, &A::EnableKey, input.Rest(), credential);
    case kDisableKeyVersion:
      return AdminUnary(f, &A::DisableKeyVersion, input.Rest(), credential);
    case kEnableKeyVersion:
      return AdminUnary(f, &A::EnableKeyVersion, input.Rest(), credential);
    case kDestroyKeyVersion:
      return AdminUnary(f, &A::DestroyKeyVersion, input.Rest(), credential);
    case kSealBatch:
      return CryptoUnary(f, &C::SealBatch, input.Rest(), credential);
    case kOpenBatch:
      return CryptoUnary(f, &C::OpenBatch, input.Rest(), credential);
    case kRewrapBatch:
      return CryptoUnary(f, &C::RewrapBatch, input.Rest(), credential);
    case kGenerateDataKey:
      return CryptoUnary(f, &C::GenerateDataKey, input.Rest(), credential);
    case kRenewToken:
      return CryptoUnary(f, &C::RenewToken, input.Rest(), credential);
    case kTrimKey:
      return AdminUnary(f, &A::TrimKey, input.Rest(), credential);
    case kSetRotationPeriod:
      return AdminUnary(f, &A::SetRotationPeriod, input.Rest(), credential);
    case kIssueAdminToken:
      return AdminUnary(f, &A::IssueAdminToken, input.Rest(), credential);
    case kRevokeAdminToken:
      return RevokeAdminToken(f, input.Rest(), credential);
    case kListAdminTokens:
      return AdminUnary(f, &A::ListAdminTokens, input.Rest(), credential);
  }
}

}  // namespace
}  // namespace sealbox::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sealbox::fuzz::CallOne(data, size);
  return 0;
}
