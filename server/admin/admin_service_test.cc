// AdminService alone: registered on an in-process gRPC server over a real keystore
// (file backend, temp directory) and called through the generated stub. What it adds
// to the keystore is tested here: the admin token check (read-only tokens refused on
// writes), keystore errors passed on with their code and no secrets, the conversion of
// results to protos, metrics and audit records. The keystore's own logic has its suites
// in server/keystore/; tests/service/ proves the wiring of the whole server.
#include "server/admin/admin_service.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "server/audit/audit_log.h"
#include "server/auth/auth.h"
#include "server/keystore/keystore.h"
#include "server/keystore/testing/test_store.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kBootstrapToken[] = "admin-service-test-bootstrap-token";

class AdminServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::NewTestStore("file");
    auto keystore = testing::OpenKeystore(*store_, kek_);
    ASSERT_TRUE(keystore.ok()) << keystore.status();
    keystore_ = *std::move(keystore);
    StartService(kBootstrapToken);
  }

  void TearDown() override { StopService(); }

  // (Re)starts the service over the same keystore, with `bootstrap_token` ("" for
  // none) and, if `audit_path` is given, every call audited to that file.
  void StartService(const std::string& bootstrap_token, const std::string& audit_path = "") {
    StopService();
    authenticator_ =
        std::make_unique<Authenticator>(bootstrap_token, std::map<std::string, std::string>{});
    if (!audit_path.empty()) {
      auto audit = AuditLog::Open({.path = audit_path}, &metrics_);
      ASSERT_TRUE(audit.ok()) << audit.status();
      audit_ = *std::move(audit);
    }
    service_ = std::make_unique<AdminService>(keystore_.get(), authenticator_.get(), &metrics_,
                                              audit_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    admin_ = v1::Admin::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }

  // Stops the server; the audit log, closed, has written every record.
  void StopService() {
    admin_.reset();
    if (server_ != nullptr) server_->Shutdown();
    server_.reset();
    service_.reset();
    audit_.reset();
  }

  // Calls `method` as a client would, with `authorization: Bearer <token>` (no
  // metadata for an empty token).
  template <typename Method, typename Request, typename Response>
  grpc::Status Call(Method method, const Request& request, Response* response,
                    const std::string& token = kBootstrapToken) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    return ((*admin_).*method)(&context, request, response);
  }

  void CreateTenant(const std::string& name) {
    v1::CreateTenantRequest request;
    request.set_name(name);
    v1::Tenant created;
    ASSERT_TRUE(Call(&v1::Admin::Stub::CreateTenant, request, &created).ok());
  }

  v1::Key CreateKey(const std::string& tenant, const std::string& key) {
    v1::CreateKeyRequest request;
    request.set_tenant(tenant);
    request.set_key(key);
    v1::Key created;
    EXPECT_TRUE(Call(&v1::Admin::Stub::CreateKey, request, &created).ok());
    return created;
  }

  v1::Key Rotate(const std::string& tenant, const std::string& key) {
    v1::KeyRef request;
    request.set_tenant(tenant);
    request.set_key(key);
    v1::Key rotated;
    EXPECT_TRUE(Call(&v1::Admin::Stub::RotateKey, request, &rotated).ok());
    return rotated;
  }

  v1::IssueTokenResponse IssueAdminToken(bool read_only) {
    v1::IssueAdminTokenRequest request;
    request.set_description(read_only ? "dashboard" : "operator");
    request.set_read_only(read_only);
    v1::IssueTokenResponse issued;
    EXPECT_TRUE(Call(&v1::Admin::Stub::IssueAdminToken, request, &issued).ok());
    return issued;
  }

  static v1::KeyVersionRef VersionRef(const std::string& tenant, const std::string& key,
                                      uint32_t version) {
    v1::KeyVersionRef ref;
    ref.set_tenant(tenant);
    ref.set_key(key);
    ref.set_version(version);
    return ref;
  }

  static v1::KeyRef Ref(const std::string& tenant, const std::string& key) {
    v1::KeyRef ref;
    ref.set_tenant(tenant);
    ref.set_key(key);
    return ref;
  }

  Kek kek_ = testing::RandomKek();
  Metrics metrics_;
  std::unique_ptr<testing::TestStore> store_;
  std::unique_ptr<Keystore> keystore_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<AdminService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Admin::Stub> admin_;
};

TEST_F(AdminServiceTest, CreatedKeyHasOneEnabledVersion) {
  CreateTenant("acme");
  const int64_t before = absl::ToUnixSeconds(absl::Now());
  const v1::Key created = CreateKey("acme", "orders");
  const int64_t after = absl::ToUnixSeconds(absl::Now());

  EXPECT_EQ(created.tenant(), "acme");
  EXPECT_EQ(created.name(), "orders");
  EXPECT_EQ(created.algorithm(), v1::AES_256_GCM);  // unspecified means AES-256
  EXPECT_EQ(created.primary_version(), 1u);
  EXPECT_EQ(created.min_decryption_version(), 1u);
  EXPECT_EQ(created.min_available_version(), 1u);
  EXPECT_FALSE(created.has_rotation_period());
  EXPECT_FALSE(created.has_next_rotation_time());
  ASSERT_EQ(created.versions_size(), 1);
  EXPECT_EQ(created.versions(0).version(), 1u);
  EXPECT_EQ(created.versions(0).state(), v1::ENABLED);
  EXPECT_FALSE(created.versions(0).imported());
  EXPECT_GE(created.versions(0).create_time().seconds(), before);
  EXPECT_LE(created.versions(0).create_time().seconds(), after);

  const v1::Key rotated = Rotate("acme", "orders");
  EXPECT_EQ(rotated.primary_version(), 2u);
  ASSERT_EQ(rotated.versions_size(), 2);
  EXPECT_EQ(rotated.versions(1).version(), 2u);
  EXPECT_EQ(rotated.versions(1).state(), v1::ENABLED);

  // GetKey and ListKeys say the same of it as the change that made it.
  v1::Key got;
  ASSERT_TRUE(Call(&v1::Admin::Stub::GetKey, Ref("acme", "orders"), &got).ok());
  EXPECT_TRUE(MessageDifferencer::Equals(got, rotated)) << got.DebugString();
  v1::ListKeysRequest list;
  list.set_tenant("acme");
  v1::ListKeysResponse listed;
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListKeys, list, &listed).ok());
  ASSERT_EQ(listed.keys_size(), 1);
  EXPECT_TRUE(MessageDifferencer::Equals(listed.keys(0), rotated)) << listed.DebugString();

  v1::CreateKeyRequest aes128;
  aes128.set_tenant("acme");
  aes128.set_key("small");
  aes128.set_algorithm(v1::AES_128_GCM);
  v1::Key small;
  ASSERT_TRUE(Call(&v1::Admin::Stub::CreateKey, aes128, &small).ok());
  EXPECT_EQ(small.algorithm(), v1::AES_128_GCM);
}

TEST_F(AdminServiceTest, ImportedKeyNeverShowsItsMaterial) {
  CreateTenant("acme");
  const std::string material = "0123456789abcdef";  // 16 bytes: AES-128
  v1::ImportKeyRequest request;
  request.set_tenant("acme");
  request.set_key("byok");
  request.set_material(material);
  v1::Key imported;
  ASSERT_TRUE(Call(&v1::Admin::Stub::ImportKey, request, &imported).ok());
  EXPECT_EQ(imported.algorithm(), v1::AES_128_GCM);
  ASSERT_EQ(imported.versions_size(), 1);
  EXPECT_TRUE(imported.versions(0).imported());
  EXPECT_THAT(imported.SerializeAsString(), Not(HasSubstr(material)));

  // 32 bytes onto an AES-128 key: refused, and the message shows none of them.
  const std::string wrong = "ZYXWVUTSRQPONMLKJIHGFEDCBA987654";
  request.set_material(wrong);
  v1::Key refused;
  grpc::Status status = Call(&v1::Admin::Stub::ImportKey, request, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("acme/byok"));
  for (const std::string& secret :
       {wrong, absl::BytesToHexString(wrong), absl::Base64Escape(wrong), wrong.substr(0, 8)}) {
    EXPECT_THAT(status.error_message(), Not(HasSubstr(secret)));
  }
  request.set_material(wrong.substr(0, 31));
  status = Call(&v1::Admin::Stub::ImportKey, request, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), Not(HasSubstr(wrong.substr(0, 8))));
}

TEST_F(AdminServiceTest, VersionChangesReturnTheKeyAsStored) {
  CreateTenant("acme");
  CreateKey("acme", "orders");
  Rotate("acme", "orders");
  Rotate("acme", "orders");  // versions 1, 2, 3; 3 primary

  v1::Key key;
  ASSERT_TRUE(
      Call(&v1::Admin::Stub::DisableKeyVersion, VersionRef("acme", "orders", 1), &key).ok());
  ASSERT_EQ(key.versions_size(), 3);
  EXPECT_EQ(key.versions(0).state(), v1::DISABLED);
  EXPECT_EQ(key.versions(1).state(), v1::ENABLED);
  ASSERT_TRUE(Call(&v1::Admin::Stub::EnableKeyVersion, VersionRef("acme", "orders", 1), &key).ok());
  EXPECT_EQ(key.versions(0).state(), v1::ENABLED);

  v1::SetMinDecryptionVersionRequest min;
  min.set_tenant("acme");
  min.set_key("orders");
  min.set_min_decryption_version(3);
  ASSERT_TRUE(Call(&v1::Admin::Stub::SetMinDecryptionVersion, min, &key).ok());
  EXPECT_EQ(key.min_decryption_version(), 3u);

  v1::TrimKeyRequest trim;
  trim.set_tenant("acme");
  trim.set_key("orders");
  trim.set_min_available_version(2);
  ASSERT_TRUE(Call(&v1::Admin::Stub::TrimKey, trim, &key).ok());
  EXPECT_EQ(key.min_available_version(), 2u);
  ASSERT_EQ(key.versions_size(), 2);
  EXPECT_EQ(key.versions(0).version(), 2u);

  ASSERT_TRUE(
      Call(&v1::Admin::Stub::DestroyKeyVersion, VersionRef("acme", "orders", 2), &key).ok());
  EXPECT_EQ(key.versions(0).state(), v1::DESTROYED);
  EXPECT_EQ(key.versions(1).state(), v1::ENABLED);

  v1::SetRotationPeriodRequest period;
  period.set_tenant("acme");
  period.set_key("orders");
  period.mutable_rotation_period()->set_seconds(7200);
  ASSERT_TRUE(Call(&v1::Admin::Stub::SetRotationPeriod, period, &key).ok());
  EXPECT_EQ(key.rotation_period().seconds(), 7200);
  EXPECT_EQ(key.primary_version(), 3u);
  EXPECT_EQ(key.next_rotation_time().seconds(), key.versions(1).create_time().seconds() + 7200);
}

TEST_F(AdminServiceTest, KeystoreErrorsKeepTheirCodes) {
  CreateTenant("acme");
  CreateKey("acme", "orders");
  v1::Tenant tenant;
  v1::Key key;
  v1::DeleteTenantResponse deleted;
  v1::IssueTokenResponse issued;

  v1::CreateTenantRequest create_tenant;
  create_tenant.set_name("Not A Name");
  EXPECT_EQ(Call(&v1::Admin::Stub::CreateTenant, create_tenant, &tenant).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  create_tenant.set_name("acme");
  grpc::Status status = Call(&v1::Admin::Stub::CreateTenant, create_tenant, &tenant);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(status.error_message(), "tenant \"acme\" already exists");

  v1::CreateKeyRequest create_key;
  create_key.set_tenant("acme");
  create_key.set_key("orders");
  EXPECT_EQ(Call(&v1::Admin::Stub::CreateKey, create_key, &key).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
  create_key.set_key("other");
  create_key.set_algorithm(static_cast<v1::Algorithm>(7));  // passes through, then refused
  EXPECT_EQ(Call(&v1::Admin::Stub::CreateKey, create_key, &key).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  EXPECT_EQ(Call(&v1::Admin::Stub::GetKey, Ref("acme", "missing"), &key).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Call(&v1::Admin::Stub::GetKey, Ref("nobody", "orders"), &key).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Call(&v1::Admin::Stub::GetKey, Ref("acme", "bad/name"), &key).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::DeleteTenantRequest delete_tenant;
  delete_tenant.set_name("nobody");
  EXPECT_EQ(Call(&v1::Admin::Stub::DeleteTenant, delete_tenant, &deleted).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(
      Call(&v1::Admin::Stub::DisableKeyVersion, VersionRef("acme", "orders", 9), &key).error_code(),
      grpc::StatusCode::NOT_FOUND);

  status = Call(&v1::Admin::Stub::DisableKeyVersion, VersionRef("acme", "orders", 1), &key);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("rotate first"));
  EXPECT_EQ(
      Call(&v1::Admin::Stub::DestroyKeyVersion, VersionRef("acme", "orders", 1), &key).error_code(),
      grpc::StatusCode::FAILED_PRECONDITION);
  v1::SetMinDecryptionVersionRequest min;
  min.set_tenant("acme");
  min.set_key("orders");
  min.set_min_decryption_version(0);
  EXPECT_EQ(Call(&v1::Admin::Stub::SetMinDecryptionVersion, min, &key).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  min.set_min_decryption_version(5);
  EXPECT_EQ(Call(&v1::Admin::Stub::SetMinDecryptionVersion, min, &key).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  v1::TrimKeyRequest trim;
  trim.set_tenant("acme");
  trim.set_key("orders");
  trim.set_min_available_version(2);
  EXPECT_EQ(Call(&v1::Admin::Stub::TrimKey, trim, &key).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  v1::SetRotationPeriodRequest period;
  period.set_tenant("acme");
  period.set_key("orders");
  period.mutable_rotation_period()->set_seconds(60);  // below the 1 h minimum
  EXPECT_EQ(Call(&v1::Admin::Stub::SetRotationPeriod, period, &key).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  v1::IssueTokenRequest issue;
  issue.set_tenant("acme");
  issue.mutable_ttl()->set_seconds(-1);
  EXPECT_EQ(Call(&v1::Admin::Stub::IssueToken, issue, &issued).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  issue.clear_ttl();
  issue.add_operations(static_cast<v1::Operation>(99));
  EXPECT_EQ(Call(&v1::Admin::Stub::IssueToken, issue, &issued).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  issue.clear_operations();
  issue.set_tenant("nobody");
  EXPECT_EQ(Call(&v1::Admin::Stub::IssueToken, issue, &issued).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // The only admin token that may write is the bootstrap one: it cannot be retired.
  v1::RevokeAdminTokenRequest retire;
  retire.set_token_id("bootstrap");
  v1::RevokeTokenResponse revoked;
  EXPECT_EQ(Call(&v1::Admin::Stub::RevokeAdminToken, retire, &revoked).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  // Nothing refused changed the key.
  ASSERT_TRUE(Call(&v1::Admin::Stub::GetKey, Ref("acme", "orders"), &key).ok());
  EXPECT_EQ(key.primary_version(), 1u);
  EXPECT_EQ(key.min_decryption_version(), 1u);
  EXPECT_EQ(key.versions(0).state(), v1::ENABLED);
  EXPECT_FALSE(key.has_rotation_period());
}

TEST_F(AdminServiceTest, TokensAreShownOnceAndNeverListed) {
  CreateTenant("acme");
  v1::IssueTokenRequest request;
  request.set_tenant("acme");
  request.set_description("billing prod");
  request.add_operations(v1::SEAL);
  request.add_operations(v1::OPEN);
  request.add_keys("orders-*");
  request.mutable_ttl()->set_seconds(3600);
  request.mutable_max_ttl()->set_seconds(7200);
  v1::IssueTokenResponse issued;
  ASSERT_TRUE(Call(&v1::Admin::Stub::IssueToken, request, &issued).ok());
  EXPECT_THAT(issued.token(), StartsWith("sbx_"));
  const v1::TokenInfo& info = issued.info();
  EXPECT_THAT(info.id(), Not(IsEmpty()));
  EXPECT_THAT(issued.token(), Not(HasSubstr(info.id())));
  EXPECT_EQ(info.description(), "billing prod");
  EXPECT_THAT(info.operations(), ElementsAre(v1::SEAL, v1::OPEN));
  EXPECT_THAT(info.keys(), ElementsAre("orders-*"));
  EXPECT_EQ(info.expire_time().seconds() - info.create_time().seconds(), 3600);
  EXPECT_EQ(info.max_expire_time().seconds() - info.create_time().seconds(), 7200);
  EXPECT_FALSE(info.read_only());

  // A token without ttl has no expiry at all, not the epoch.
  v1::IssueTokenRequest forever;
  forever.set_tenant("acme");
  v1::IssueTokenResponse forever_issued;
  ASSERT_TRUE(Call(&v1::Admin::Stub::IssueToken, forever, &forever_issued).ok());
  EXPECT_FALSE(forever_issued.info().has_expire_time());
  EXPECT_FALSE(forever_issued.info().has_max_expire_time());

  v1::ListTenantsResponse tenants;
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants).ok());
  ASSERT_EQ(tenants.tenants_size(), 1);
  ASSERT_EQ(tenants.tenants(0).tokens_size(), 2);
  bool found = false;
  for (const v1::TokenInfo& listed : tenants.tenants(0).tokens()) {
    if (listed.id() != info.id()) continue;
    found = true;
    EXPECT_TRUE(MessageDifferencer::Equals(listed, info)) << listed.DebugString();
  }
  EXPECT_TRUE(found);
  const std::string wire = tenants.SerializeAsString();
  EXPECT_THAT(wire, Not(HasSubstr(issued.token())));
  EXPECT_THAT(wire, Not(HasSubstr(forever_issued.token())));

  // Admin tokens alike; the keystore's own tenant of admin tokens is not a tenant.
  const v1::IssueTokenResponse admin = IssueAdminToken(/*read_only=*/true);
  EXPECT_THAT(admin.token(), StartsWith("sbx_"));
  EXPECT_TRUE(admin.info().read_only());
  v1::ListAdminTokensResponse admins;
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListAdminTokens, v1::ListAdminTokensRequest(), &admins).ok());
  ASSERT_EQ(admins.tokens_size(), 1);
  EXPECT_EQ(admins.tokens(0).id(), admin.info().id());
  EXPECT_EQ(admins.tokens(0).description(), "dashboard");
  EXPECT_TRUE(admins.tokens(0).read_only());
  EXPECT_FALSE(admins.bootstrap_retired());
  EXPECT_THAT(admins.SerializeAsString(), Not(HasSubstr(admin.token())));
  EXPECT_THAT(admins.SerializeAsString(), Not(HasSubstr(kBootstrapToken)));
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants).ok());
  EXPECT_EQ(tenants.tenants_size(), 1);

  // A tenant token is no admin token.
  v1::ListTenantsResponse refused;
  grpc::Status status =
      Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &refused, issued.token());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);

  // Revoked, it is gone from the listing; revoking it again is NOT_FOUND.
  v1::RevokeTokenRequest revoke;
  revoke.set_tenant("acme");
  revoke.set_token_id(info.id());
  v1::RevokeTokenResponse revoked;
  ASSERT_TRUE(Call(&v1::Admin::Stub::RevokeToken, revoke, &revoked).ok());
  EXPECT_EQ(Call(&v1::Admin::Stub::RevokeToken, revoke, &revoked).error_code(),
            grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants).ok());
  ASSERT_EQ(tenants.tenants(0).tokens_size(), 1);
  EXPECT_EQ(tenants.tenants(0).tokens(0).id(), forever_issued.info().id());
}

TEST_F(AdminServiceTest, ErrorMessagesNeverEchoTokens) {
  CreateTenant("acme");
  v1::IssueTokenRequest issue;
  issue.set_tenant("acme");
  v1::IssueTokenResponse tenant_token;
  ASSERT_TRUE(Call(&v1::Admin::Stub::IssueToken, issue, &tenant_token).ok());
  const v1::IssueTokenResponse admin = IssueAdminToken(/*read_only=*/false);

  // A token pasted where its id belongs.
  v1::RevokeTokenRequest revoke;
  revoke.set_tenant("acme");
  revoke.set_token_id(tenant_token.token());
  v1::RevokeTokenResponse revoked;
  grpc::Status status = Call(&v1::Admin::Stub::RevokeToken, revoke, &revoked);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), Not(HasSubstr(tenant_token.token())));
  v1::RevokeAdminTokenRequest revoke_admin;
  revoke_admin.set_token_id(admin.token());
  status = Call(&v1::Admin::Stub::RevokeAdminToken, revoke_admin, &revoked);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), Not(HasSubstr(admin.token())));

  // A wrong admin token is not repeated back.
  const std::string guess = "sbx_guessed-admin-token-value";
  v1::ListTenantsResponse tenants;
  status = Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants, guess);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), Not(HasSubstr(guess)));

  // Both tokens still work: nothing was revoked by the pasted tokens.
  EXPECT_TRUE(
      Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants, admin.token()).ok());
  ASSERT_EQ(tenants.tenants_size(), 1);
  EXPECT_EQ(tenants.tenants(0).tokens_size(), 1);
}

TEST_F(AdminServiceTest, ReadOnlyAdminTokenMayOnlyRead) {
  CreateTenant("acme");
  CreateKey("acme", "orders");
  const v1::IssueTokenResponse reader = IssueAdminToken(/*read_only=*/true);
  const std::string& token = reader.token();

  v1::ListTenantsResponse tenants;
  EXPECT_TRUE(Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants, token).ok());
  EXPECT_EQ(tenants.tenants_size(), 1);
  v1::ListKeysRequest list_keys;
  list_keys.set_tenant("acme");
  v1::ListKeysResponse keys;
  EXPECT_TRUE(Call(&v1::Admin::Stub::ListKeys, list_keys, &keys, token).ok());
  EXPECT_EQ(keys.keys_size(), 1);
  v1::Key key;
  EXPECT_TRUE(Call(&v1::Admin::Stub::GetKey, Ref("acme", "orders"), &key, token).ok());
  EXPECT_EQ(key.name(), "orders");
  v1::ListAdminTokensResponse admins;
  EXPECT_TRUE(
      Call(&v1::Admin::Stub::ListAdminTokens, v1::ListAdminTokensRequest(), &admins, token).ok());
  EXPECT_EQ(admins.tokens_size(), 1);

  // Every write is refused, naming the method, before it reaches the keystore.
  std::vector<std::pair<std::string, grpc::Status>> writes;
  v1::CreateTenantRequest create_tenant;
  create_tenant.set_name("other");
  v1::Tenant tenant;
  writes.emplace_back("CreateTenant",
                      Call(&v1::Admin::Stub::CreateTenant, create_tenant, &tenant, token));
  v1::DeleteTenantRequest delete_tenant;
  delete_tenant.set_name("acme");
  v1::DeleteTenantResponse deleted;
  writes.emplace_back("DeleteTenant",
                      Call(&v1::Admin::Stub::DeleteTenant, delete_tenant, &deleted, token));
  v1::CreateKeyRequest create_key;
  create_key.set_tenant("acme");
  create_key.set_key("new");
  writes.emplace_back("CreateKey", Call(&v1::Admin::Stub::CreateKey, create_key, &key, token));
  writes.emplace_back("RotateKey",
                      Call(&v1::Admin::Stub::RotateKey, Ref("acme", "orders"), &key, token));
  writes.emplace_back("DisableKeyVersion", Call(&v1::Admin::Stub::DisableKeyVersion,
                                                VersionRef("acme", "orders", 1), &key, token));
  v1::IssueTokenRequest issue;
  issue.set_tenant("acme");
  v1::IssueTokenResponse issued;
  writes.emplace_back("IssueToken", Call(&v1::Admin::Stub::IssueToken, issue, &issued, token));
  v1::IssueAdminTokenRequest issue_admin;
  writes.emplace_back("IssueAdminToken",
                      Call(&v1::Admin::Stub::IssueAdminToken, issue_admin, &issued, token));
  v1::RevokeAdminTokenRequest revoke_admin;
  revoke_admin.set_token_id(reader.info().id());
  v1::RevokeTokenResponse revoked;
  writes.emplace_back("RevokeAdminToken",
                      Call(&v1::Admin::Stub::RevokeAdminToken, revoke_admin, &revoked, token));
  for (const auto& [method, status] : writes) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << method;
    EXPECT_THAT(status.error_message(), HasSubstr("read-only")) << method;
    EXPECT_THAT(status.error_message(), HasSubstr(method)) << method;
  }

  // None of them happened.
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants).ok());
  ASSERT_EQ(tenants.tenants_size(), 1);
  EXPECT_EQ(tenants.tenants(0).name(), "acme");
  EXPECT_THAT(tenants.tenants(0).keys(), ElementsAre("orders"));
  EXPECT_EQ(tenants.tenants(0).tokens_size(), 0);
  ASSERT_TRUE(Call(&v1::Admin::Stub::GetKey, Ref("acme", "orders"), &key).ok());
  EXPECT_EQ(key.primary_version(), 1u);
  EXPECT_EQ(key.versions(0).state(), v1::ENABLED);
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListAdminTokens, v1::ListAdminTokensRequest(), &admins).ok());
  EXPECT_EQ(admins.tokens_size(), 1);
}

TEST_F(AdminServiceTest, CallsWithoutAValidAdminTokenAreRefused) {
  v1::CreateTenantRequest request;
  request.set_name("acme");
  v1::Tenant tenant;
  grpc::Status status = Call(&v1::Admin::Stub::CreateTenant, request, &tenant, /*token=*/"");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("missing credentials"));
  status = Call(&v1::Admin::Stub::CreateTenant, request, &tenant, "not-the-admin-token");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  v1::ListTenantsResponse tenants;
  status = Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants, "");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // Another scheme than Bearer is no credential either.
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Basic ", kBootstrapToken));
  status = admin_->CreateTenant(&context, request, &tenant);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // A revoked admin token stops working at once.
  const v1::IssueTokenResponse admin = IssueAdminToken(/*read_only=*/false);
  ASSERT_TRUE(
      Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants, admin.token()).ok());
  v1::RevokeAdminTokenRequest revoke;
  revoke.set_token_id(admin.info().id());
  v1::RevokeTokenResponse revoked;
  ASSERT_TRUE(Call(&v1::Admin::Stub::RevokeAdminToken, revoke, &revoked).ok());
  status = Call(&v1::Admin::Stub::CreateTenant, request, &tenant, admin.token());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);

  // None of the refused calls created the tenant.
  ASSERT_TRUE(Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants).ok());
  EXPECT_EQ(tenants.tenants_size(), 0);
}

TEST_F(AdminServiceTest, BootstrapTokenRetiresOnceAnotherAdminCanWrite) {
  const v1::IssueTokenResponse reader = IssueAdminToken(/*read_only=*/true);
  v1::RevokeAdminTokenRequest retire;
  retire.set_token_id("bootstrap");
  v1::RevokeTokenResponse revoked;
  // A read-only admin token would leave nobody able to write.
  EXPECT_EQ(Call(&v1::Admin::Stub::RevokeAdminToken, retire, &revoked).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  const v1::IssueTokenResponse writer = IssueAdminToken(/*read_only=*/false);
  ASSERT_TRUE(Call(&v1::Admin::Stub::RevokeAdminToken, retire, &revoked).ok());
  v1::ListTenantsResponse tenants;
  grpc::Status status = Call(&v1::Admin::Stub::ListTenants, v1::ListTenantsRequest(), &tenants);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("retired"));

  v1::ListAdminTokensResponse admins;
  ASSERT_TRUE(
      Call(&v1::Admin::Stub::ListAdminTokens, v1::ListAdminTokensRequest(), &admins, writer.token())
          .ok());
  EXPECT_TRUE(admins.bootstrap_retired());
  EXPECT_EQ(admins.tokens_size(), 2);
}

TEST_F(AdminServiceTest, WithoutBootstrapTokenThereIsNoneToRetire) {
  // An admin token issued earlier, and a server started without a bootstrap token.
  absl::StatusOr<IssuedToken> admin = keystore_->tokens().IssueAdminToken({}, false);
  ASSERT_TRUE(admin.ok()) << admin.status();
  StartService(/*bootstrap_token=*/"");

  v1::RevokeAdminTokenRequest retire;
  retire.set_token_id("bootstrap");
  v1::RevokeTokenResponse revoked;
  grpc::Status status = Call(&v1::Admin::Stub::RevokeAdminToken, retire, &revoked, admin->token);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("without a bootstrap admin token"));
  v1::ListAdminTokensResponse admins;
  ASSERT_TRUE(
      Call(&v1::Admin::Stub::ListAdminTokens, v1::ListAdminTokensRequest(), &admins, admin->token)
          .ok());
  EXPECT_FALSE(admins.bootstrap_retired());
  // The old bootstrap token means nothing to this server.
  EXPECT_EQ(
      Call(&v1::Admin::Stub::ListAdminTokens, v1::ListAdminTokensRequest(), &admins).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(AdminServiceTest, CallsAreCountedByMethodAndCode) {
  CreateTenant("acme");
  v1::CreateTenantRequest again;
  again.set_name("acme");
  v1::Tenant tenant;
  EXPECT_FALSE(Call(&v1::Admin::Stub::CreateTenant, again, &tenant).ok());
  EXPECT_FALSE(Call(&v1::Admin::Stub::CreateTenant, again, &tenant, "").ok());

  const std::string scrape = metrics_.Render();
  EXPECT_THAT(scrape, HasSubstr("sealbox_rpcs_total{method=\"CreateTenant\",code=\"OK\"} 1"));
  EXPECT_THAT(scrape,
              HasSubstr("sealbox_rpcs_total{method=\"CreateTenant\",code=\"ALREADY_EXISTS\"} 1"));
  EXPECT_THAT(scrape,
              HasSubstr("sealbox_rpcs_total{method=\"CreateTenant\",code=\"UNAUTHENTICATED\"} 1"));
}

TEST_F(AdminServiceTest, AuditRecordsNameTheTargetNotTheSecrets) {
  const std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/admin_audit.log");
  StartService(kBootstrapToken, path);
  CreateTenant("acme");
  const std::string material = "fedcba9876543210";
  v1::ImportKeyRequest import;
  import.set_tenant("acme");
  import.set_key("byok");
  import.set_material(material);
  v1::Key key;
  ASSERT_TRUE(Call(&v1::Admin::Stub::ImportKey, import, &key).ok());
  v1::IssueTokenRequest issue;
  issue.set_tenant("acme");
  v1::IssueTokenResponse issued;
  ASSERT_TRUE(Call(&v1::Admin::Stub::IssueToken, issue, &issued).ok());
  v1::RevokeTokenRequest revoke;
  revoke.set_tenant("acme");
  revoke.set_token_id(issued.info().id());
  v1::RevokeTokenResponse revoked;
  ASSERT_TRUE(Call(&v1::Admin::Stub::RevokeToken, revoke, &revoked).ok());
  EXPECT_FALSE(Call(&v1::Admin::Stub::GetKey, Ref("acme", "missing"), &key, "wrong").ok());
  StopService();  // closes the audit log, which writes every record

  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  std::vector<std::string> lines;
  for (std::string line; std::getline(contents, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u) << contents.str();
  EXPECT_THAT(lines[1], HasSubstr("\"method\":\"ImportKey\""));
  EXPECT_THAT(lines[1], HasSubstr("\"credential\":\"admin_token\""));
  EXPECT_THAT(lines[1], HasSubstr("\"token_id\":\"bootstrap\""));
  EXPECT_THAT(lines[1], HasSubstr("\"tenant\":\"acme\""));
  EXPECT_THAT(lines[1], HasSubstr("\"key\":\"byok\""));
  EXPECT_THAT(lines[3], HasSubstr("\"target_token_id\":\"" + issued.info().id() + "\""));
  EXPECT_THAT(lines[4], HasSubstr("\"code\":\"UNAUTHENTICATED\""));
  EXPECT_THAT(lines[4], HasSubstr("\"key\":\"missing\""));
  for (const std::string& secret :
       {material, absl::BytesToHexString(material), absl::Base64Escape(material), issued.token(),
        std::string(kBootstrapToken)}) {
    EXPECT_THAT(contents.str(), Not(HasSubstr(secret)));
  }
}

}  // namespace
}  // namespace sealbox::server
