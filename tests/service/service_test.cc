// The service in-process: a real SealboxServer on a loopback port with a real
// keystore in a temporary directory, driven through the generated gRPC stubs.
#include <openssl/rand.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/server.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;

constexpr char kAdminToken[] = "test-admin-token";

std::string RandomString(size_t size) {
  std::string s(size, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(s.data()), static_cast<int>(size));
  return s;
}

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    StartServer();
    admin_ = v1::Admin::NewStub(channel_);
    crypto_ = v1::Crypto::NewStub(channel_);

    v1::CreateTenantRequest tenant;
    v1::Tenant created;
    for (const char* name : {"alpha", "beta"}) {
      tenant.set_name(name);
      ASSERT_TRUE(AdminCall(&v1::Admin::Stub::CreateTenant, tenant, &created).ok());
      v1::CreateKeyRequest key;
      key.set_tenant(name);
      key.set_key("default");
      v1::Key key_created;
      ASSERT_TRUE(AdminCall(&v1::Admin::Stub::CreateKey, key, &key_created).ok());
      v1::IssueTokenRequest issue;
      issue.set_tenant(name);
      v1::IssueTokenResponse issued;
      ASSERT_TRUE(AdminCall(&v1::Admin::Stub::IssueToken, issue, &issued).ok());
      tokens_[name] = issued.token();
      token_ids_[name] = issued.info().id();
    }
  }

  void StartServer() {
    ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.data_dir = data_dir_;
    config.kek = crypto::SecretBytes(32);
    config.admin_token = kAdminToken;
    config.create_keystore = true;
    config.limits.max_unary_bytes = 64 * 1024;
    config.drain_timeout = absl::Seconds(2);
    auto server = SealboxServer::Start(std::move(config));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
  }

  template <typename Method, typename Request, typename Response>
  grpc::Status AdminCall(Method method, const Request& request, Response* response,
                         const std::string& token = kAdminToken) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token);
    return ((*admin_).*method)(&context, request, response);
  }

  grpc::Status Seal(const std::string& tenant, const std::string& key,
                    const std::string& plaintext, const std::string& aad,
                    v1::SealResponse* response) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    v1::SealRequest request;
    request.set_key(key);
    request.set_plaintext(plaintext);
    request.set_associated_data(aad);
    return crypto_->Seal(&context, request, response);
  }

  grpc::Status Open(const std::string& tenant, const std::string& key,
                    const std::string& ciphertext, const std::string& aad,
                    v1::OpenResponse* response) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    v1::OpenRequest request;
    request.set_key(key);
    request.set_ciphertext(ciphertext);
    request.set_associated_data(aad);
    return crypto_->Open(&context, request, response);
  }

  // Seals `plaintext` as a stream sent in `chunk`-byte messages; returns the
  // concatenated ciphertext.
  grpc::Status SealStream(const std::string& tenant, const std::string& plaintext,
                          size_t chunk, std::string* ciphertext,
                          uint32_t segment_size = 4096) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    auto stream = crypto_->SealStream(&context);
    v1::SealStreamRequest request;
    request.mutable_start()->set_key("default");
    request.mutable_start()->set_segment_size(segment_size);
    stream->Write(request);
    // Read while writing, as a real client must: the server answers each chunk
    // before it reads the next, so a client that only writes would stall.
    std::thread reader([&] {
      v1::SealStreamResponse response;
      while (stream->Read(&response)) ciphertext->append(response.ciphertext_chunk());
    });
    for (size_t i = 0; i < plaintext.size(); i += chunk) {
      request.set_plaintext_chunk(plaintext.substr(i, chunk));
      if (!stream->Write(request)) break;
    }
    stream->WritesDone();
    reader.join();
    return stream->Finish();
  }

  grpc::Status OpenStream(const std::string& tenant, const std::string& ciphertext,
                          size_t chunk, std::string* plaintext) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    auto stream = crypto_->OpenStream(&context);
    v1::OpenStreamRequest request;
    request.mutable_start()->set_key("default");
    stream->Write(request);
    std::thread reader([&] {
      v1::OpenStreamResponse response;
      while (stream->Read(&response)) plaintext->append(response.plaintext_chunk());
    });
    for (size_t i = 0; i < ciphertext.size(); i += chunk) {
      request.set_ciphertext_chunk(ciphertext.substr(i, chunk));
      if (!stream->Write(request)) break;
    }
    stream->WritesDone();
    reader.join();
    return stream->Finish();
  }

  std::string data_dir_;
  std::unique_ptr<SealboxServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Admin::Stub> admin_;
  std::unique_ptr<v1::Crypto::Stub> crypto_;
  std::map<std::string, std::string> tokens_;
  std::map<std::string, std::string> token_ids_;
};

TEST_F(ServiceTest, SealOpenRoundTrip) {
  for (size_t size : {0, 1, 100, 64 * 1024}) {
    std::string plaintext = RandomString(size);
    v1::SealResponse sealed;
    ASSERT_TRUE(Seal("alpha", "default", plaintext, "ctx", &sealed).ok());
    EXPECT_EQ(sealed.key_version(), 1u);
    v1::OpenResponse opened;
    grpc::Status status = Open("alpha", "default", sealed.ciphertext(), "ctx", &opened);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(opened.plaintext(), plaintext);
    EXPECT_EQ(opened.key_version(), 1u);
  }
}

TEST_F(ServiceTest, TamperingIsOneUniformError) {
  v1::SealResponse sealed;
  ASSERT_TRUE(Seal("alpha", "default", "secret", "ctx", &sealed).ok());
  std::vector<std::string> bad = {"", "\x01", sealed.ciphertext().substr(0, 40)};
  for (size_t i = 0; i < sealed.ciphertext().size(); ++i) {
    std::string flipped = sealed.ciphertext();
    flipped[i] ^= 0x01;
    bad.push_back(flipped);
  }
  for (const std::string& ciphertext : bad) {
    v1::OpenResponse opened;
    grpc::Status status = Open("alpha", "default", ciphertext, "ctx", &opened);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(), "decryption failed");
    EXPECT_TRUE(opened.plaintext().empty());
  }
  v1::OpenResponse opened;
  grpc::Status wrong_aad = Open("alpha", "default", sealed.ciphertext(), "other", &opened);
  EXPECT_EQ(wrong_aad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(wrong_aad.error_message(), "decryption failed");
}

TEST_F(ServiceTest, TenantsAreIsolated) {
  v1::SealResponse sealed;
  ASSERT_TRUE(Seal("alpha", "default", "alpha's data", "", &sealed).ok());
  v1::OpenResponse opened;
  // beta has its own "default" key: alpha's ciphertext does not open under it.
  grpc::Status status = Open("beta", "default", sealed.ciphertext(), "", &opened);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // A key name that exists only in another tenant looks like any unknown key.
  v1::CreateKeyRequest key;
  key.set_tenant("alpha");
  key.set_key("alpha-only");
  v1::Key created;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::CreateKey, key, &created).ok());
  v1::SealResponse other;
  EXPECT_EQ(Seal("beta", "alpha-only", "x", "", &other).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Seal("beta", "no-such-key", "x", "", &other).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServiceTest, Authentication) {
  v1::SealRequest request;
  request.set_key("default");
  v1::SealResponse response;
  {
    grpc::ClientContext context;  // no token
    EXPECT_EQ(crypto_->Seal(&context, request, &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer not-a-token");
    EXPECT_EQ(crypto_->Seal(&context, request, &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", std::string("Bearer ") + kAdminToken);
    EXPECT_EQ(crypto_->Seal(&context, request, &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  // Tenant tokens cannot use the admin plane.
  v1::ListTenantsRequest list;
  v1::ListTenantsResponse tenants;
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::ListTenants, list, &tenants, tokens_["alpha"])
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Revoked tokens stop working.
  v1::RevokeTokenRequest revoke;
  revoke.set_tenant("alpha");
  revoke.set_token_id(token_ids_["alpha"]);
  v1::RevokeTokenResponse revoked;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::RevokeToken, revoke, &revoked).ok());
  EXPECT_EQ(Seal("alpha", "default", "x", "", &response).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(ServiceTest, OversizedUnaryIsRefused) {
  v1::SealResponse sealed;
  EXPECT_EQ(Seal("alpha", "default", std::string(64 * 1024 + 1, 'x'), "", &sealed)
                .error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(ServiceTest, RotationRewrapAndMinimumVersion) {
  v1::SealResponse v1_sealed;
  ASSERT_TRUE(Seal("alpha", "default", "old data", "", &v1_sealed).ok());
  v1::KeyRef ref;
  ref.set_tenant("alpha");
  ref.set_key("default");
  v1::Key rotated;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::RotateKey, ref, &rotated).ok());
  EXPECT_EQ(rotated.primary_version(), 2u);

  v1::SealResponse v2_sealed;
  ASSERT_TRUE(Seal("alpha", "default", "new data", "", &v2_sealed).ok());
  EXPECT_EQ(v2_sealed.key_version(), 2u);
  v1::OpenResponse opened;
  ASSERT_TRUE(Open("alpha", "default", v1_sealed.ciphertext(), "", &opened).ok());
  EXPECT_EQ(opened.key_version(), 1u);

  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
  v1::RewrapRequest rewrap;
  rewrap.set_key("default");
  rewrap.set_ciphertext(v1_sealed.ciphertext());
  v1::RewrapResponse rewrapped;
  ASSERT_TRUE(crypto_->Rewrap(&context, rewrap, &rewrapped).ok());
  EXPECT_EQ(rewrapped.key_version(), 2u);
  EXPECT_EQ(rewrapped.previous_key_version(), 1u);
  EXPECT_EQ(rewrapped.ciphertext().find("old data"), std::string::npos);

  v1::SetMinDecryptionVersionRequest min;
  min.set_tenant("alpha");
  min.set_key("default");
  min.set_min_decryption_version(2);
  v1::Key updated;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::SetMinDecryptionVersion, min, &updated).ok());
  EXPECT_EQ(Open("alpha", "default", v1_sealed.ciphertext(), "", &opened).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(Open("alpha", "default", rewrapped.ciphertext(), "", &opened).ok());
  EXPECT_EQ(opened.plaintext(), "old data");
}

TEST_F(ServiceTest, DisabledAndDestroyedVersions) {
  v1::SealResponse v1_sealed;
  ASSERT_TRUE(Seal("alpha", "default", "data", "", &v1_sealed).ok());
  v1::KeyRef ref;
  ref.set_tenant("alpha");
  ref.set_key("default");
  v1::Key key;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::RotateKey, ref, &key).ok());
  v1::KeyVersionRef version;
  version.set_tenant("alpha");
  version.set_key("default");
  version.set_version(1);
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::DisableKeyVersion, version, &key).ok());
  v1::OpenResponse opened;
  EXPECT_EQ(Open("alpha", "default", v1_sealed.ciphertext(), "", &opened).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::EnableKeyVersion, version, &key).ok());
  EXPECT_TRUE(Open("alpha", "default", v1_sealed.ciphertext(), "", &opened).ok());
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::DestroyKeyVersion, version, &key).ok());
  EXPECT_EQ(Open("alpha", "default", v1_sealed.ciphertext(), "", &opened).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  version.set_version(2);  // the primary cannot be destroyed
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::DestroyKeyVersion, version, &key).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(ServiceTest, StreamRoundTripInAnyChunking) {
  for (size_t size : {0, 1, 4095, 4096, 4097, 50000}) {
    std::string plaintext = RandomString(size);
    std::string ciphertext;
    grpc::Status sealed = SealStream("alpha", plaintext, 1000, &ciphertext);
    ASSERT_TRUE(sealed.ok()) << sealed.error_message();
    for (size_t chunk : {1u, 777u, 100000u}) {
      if (chunk == 1 && ciphertext.size() > 5000) continue;  // keep the test quick
      std::string opened;
      grpc::Status status = OpenStream("alpha", ciphertext, chunk, &opened);
      ASSERT_TRUE(status.ok()) << size << "/" << chunk << ": " << status.error_message();
      EXPECT_EQ(opened, plaintext);
    }
  }
}

TEST_F(ServiceTest, LargestSegmentsFitInResponses) {
  // 4 MiB segments: each one spans several response messages, which must each stay
  // under gRPC's default 4 MiB limit.
  std::string plaintext = RandomString((9 << 20) + 3);
  std::string ciphertext;
  grpc::Status sealed = SealStream("alpha", plaintext, 1 << 20, &ciphertext, 4 << 20);
  ASSERT_TRUE(sealed.ok()) << sealed.error_message();
  std::string opened;
  grpc::Status status = OpenStream("alpha", ciphertext, 3 << 20, &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(opened, plaintext);
}

TEST_F(ServiceTest, TruncatedStreamFails) {
  std::string plaintext = RandomString(20000);
  std::string ciphertext;
  ASSERT_TRUE(SealStream("alpha", plaintext, 3000, &ciphertext).ok());
  for (size_t cut : {size_t{0}, size_t{10}, size_t{48}, size_t{48 + 4096 + 16},
                     ciphertext.size() - 1}) {
    std::string opened;
    grpc::Status status = OpenStream("alpha", ciphertext.substr(0, cut), 5000, &opened);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << cut;
  }
  std::string opened;
  EXPECT_EQ(OpenStream("alpha", ciphertext + "x", 5000, &opened).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServiceTest, RestartKeepsEverything) {
  v1::SealResponse sealed;
  ASSERT_TRUE(Seal("alpha", "default", "durable", "", &sealed).ok());
  server_.reset();
  StartServer();
  crypto_ = v1::Crypto::NewStub(channel_);
  v1::OpenResponse opened;
  grpc::Status status = Open("alpha", "default", sealed.ciphertext(), "", &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(opened.plaintext(), "durable");
}

}  // namespace
}  // namespace sealbox::server
