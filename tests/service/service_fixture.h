// The fixture of the service tests: a real SealboxServer on a loopback port with a
// real keystore in a temporary directory, two tenants ("alpha", "beta") with a key
// "default" and a token each, and helpers that call it through the generated stubs.
#ifndef SEALBOX_TESTS_SERVICE_SERVICE_FIXTURE_H_
#define SEALBOX_TESTS_SERVICE_SERVICE_FIXTURE_H_

#include <openssl/rand.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/process/server.h"

namespace sealbox::server::service_testing {

inline constexpr char kAdminToken[] = "test-admin-token";

inline std::string RandomString(size_t size) {
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

  // Tests that need other limits override this.
  virtual void Configure(ServerConfig&) {}

  void StartServer() {
    ServerConfig config;
    config.listen = "127.0.0.1:0";
    config.data_dir = data_dir_;
    config.kek = *Kek::FromBytes(std::vector<uint8_t>(kKekBytes, 0));
    config.admin_token = kAdminToken;
    config.create_keystore = true;
    config.limits.max_unary_bytes = 64 * 1024;
    config.drain_timeout = absl::Seconds(2);
    // service_audited_test: the same tests with every call audited to a file, so
    // that the audit path meets every outcome (under ASan too).
    if (std::getenv("SEALBOX_TEST_AUDIT") != nullptr) {
      config.audit = AuditLevel::kAll;
      config.audit_log = data_dir_ + ".audit.log";
    }
    Configure(config);
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

  grpc::Status Seal(const std::string& tenant, const std::string& key, const std::string& plaintext,
                    const std::string& aad, v1::SealResponse* response) {
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
  grpc::Status SealStream(const std::string& tenant, const std::string& plaintext, size_t chunk,
                          std::string* ciphertext, uint32_t segment_size = 4096,
                          const std::string& key = "default", const std::string& aad = "") {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    auto stream = crypto_->SealStream(&context);
    v1::SealStreamRequest request;
    request.mutable_start()->set_key(key);
    request.mutable_start()->set_associated_data(aad);
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

  grpc::Status OpenStream(const std::string& tenant, const std::string& ciphertext, size_t chunk,
                          std::string* plaintext, const std::string& key = "default",
                          const std::string& aad = "") {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    auto stream = crypto_->OpenStream(&context);
    v1::OpenStreamRequest request;
    request.mutable_start()->set_key(key);
    request.mutable_start()->set_associated_data(aad);
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

  grpc::Status Rewrap(const std::string& tenant, const std::string& key,
                      const std::string& ciphertext, const std::string& aad,
                      v1::RewrapResponse* response) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_[tenant]);
    v1::RewrapRequest request;
    request.set_key(key);
    request.set_ciphertext(ciphertext);
    request.set_associated_data(aad);
    return crypto_->Rewrap(&context, request, response);
  }

  // What each data-plane call answers alpha for `key` and `aad`, with a good
  // ciphertext of alpha's "default" key (unary, then stream) to open: Seal, Open,
  // Rewrap, SealStream, OpenStream in that order.
  std::vector<grpc::Status> EveryDataPlaneCall(const std::string& key, const std::string& aad) {
    v1::SealResponse sealed;
    EXPECT_TRUE(Seal("alpha", "default", "x", "", &sealed).ok());
    std::string stream_ciphertext, out;
    EXPECT_TRUE(SealStream("alpha", "x", 10, &stream_ciphertext).ok());
    v1::OpenResponse opened;
    v1::RewrapResponse rewrapped;
    return {Seal("alpha", key, "x", aad, &sealed),
            Open("alpha", key, sealed.ciphertext(), aad, &opened),
            Rewrap("alpha", key, sealed.ciphertext(), aad, &rewrapped),
            SealStream("alpha", "x", 10, &out, 4096, key, aad),
            OpenStream("alpha", stream_ciphertext, 100, &out, key, aad)};
  }

  std::string data_dir_;
  std::unique_ptr<SealboxServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Admin::Stub> admin_;
  std::unique_ptr<v1::Crypto::Stub> crypto_;
  std::map<std::string, std::string> tokens_;
  std::map<std::string, std::string> token_ids_;
};

}  // namespace sealbox::server::service_testing

#endif  // SEALBOX_TESTS_SERVICE_SERVICE_FIXTURE_H_
