// --max-staleness in process, on the file backend: with its file out of reach, the
// server serves until the bound, then refuses every call on both planes (a stream
// already running ends at its next message), health says NOT_SERVING, the metrics
// say why; with the file back it serves again by itself.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/service/service_fixture.h"

namespace sealbox::server {
namespace {

using service_testing::ServiceTest;
using ::testing::HasSubstr;
using ::testing::Not;

class StalenessTest : public ServiceTest {
 protected:
  void Configure(ServerConfig& config) override {
    config.reload_interval = absl::Milliseconds(200);
    config.max_staleness = absl::Seconds(2);
  }

  std::string Health(const std::string& service) {
    auto health = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = health->Check(&context, request, &response);
    if (!status.ok()) return status.error_message();
    return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
  }

  // Health is looked at every 100 ms (or when the bound passes), so it follows a call's
  // answer a moment later: wait, boundedly, for `want`. Returns the last answer.
  std::string HealthBecomes(const std::string& service, const std::string& want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    std::string health = Health(service);
    while (health != want && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
      health = Health(service);
    }
    return health;
  }

  grpc::Status SealOnce() {
    v1::SealResponse sealed;
    return Seal("alpha", "default", "x", "", &sealed);
  }
};

TEST_F(StalenessTest, RefusesPastTheBoundAndServesAgainByItself) {
  ASSERT_TRUE(SealOnce().ok());
  EXPECT_EQ(Health("sealbox.v1.Crypto"), "SERVING");

  // A stream that begins while the keystore is current.
  grpc::ClientContext stream_context;
  stream_context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
  auto stream = crypto_->SealStream(&stream_context);
  v1::SealStreamRequest request;
  request.mutable_start()->set_key("default");
  ASSERT_TRUE(stream->Write(request));
  request.set_plaintext_chunk(std::string(5000, 'a'));
  ASSERT_TRUE(stream->Write(request));
  v1::SealStreamResponse response;
  ASSERT_TRUE(stream->Read(&response));  // the first whole segment

  // The file out of reach: no read of it succeeds, so nothing proves it current.
  const absl::Time away = absl::Now();
  ASSERT_EQ(rename(data_dir_.c_str(), (data_dir_ + ".away").c_str()), 0);
  while (SealOnce().ok() && absl::Now() < away + absl::Seconds(10)) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  const absl::Duration served_for = absl::Now() - away;
  // The last proof began before the file went, about a poll (and its read) before
  // it: refused by the bound after, not long before; nor long after, but for this
  // loop's own pace on a busy machine (a second of slack).
  EXPECT_GE(served_for, absl::Milliseconds(1200));
  EXPECT_LE(served_for, absl::Milliseconds(3000));
  grpc::Status refused = SealOnce();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(), HasSubstr("this replica's keystore is stale"));
  EXPECT_THAT(refused.error_message(), HasSubstr("--max-staleness=2s"));
  EXPECT_THAT(refused.error_message(), Not(HasSubstr(tokens_["alpha"])));

  // The stream ends at its next message, as a new call is refused.
  request.set_plaintext_chunk(std::string(100, 'b'));
  stream->Write(request);
  stream->WritesDone();
  while (stream->Read(&response)) {
  }
  grpc::Status ended = stream->Finish();
  EXPECT_EQ(ended.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(ended.error_message(), HasSubstr("stale"));

  // The admin plane too (a revoked admin token may not be known), and health.
  v1::ListTenantsRequest list;
  v1::ListTenantsResponse tenants;
  grpc::Status admin = AdminCall(&v1::Admin::Stub::ListTenants, list, &tenants);
  EXPECT_EQ(admin.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(admin.error_message(), HasSubstr("stale"));
  EXPECT_EQ(HealthBecomes("sealbox.v1.Crypto", "NOT_SERVING"), "NOT_SERVING");
  EXPECT_EQ(HealthBecomes("", "NOT_SERVING"), "NOT_SERVING");
  const std::string metrics = server_->RenderMetrics();
  EXPECT_THAT(metrics, HasSubstr("sealbox_keystore_max_staleness_seconds 2\n"));
  EXPECT_THAT(metrics, Not(HasSubstr("sealbox_keystore_stale_refusals_total 0\n")));

  // The file back: serving again within a poll (200 ms; the rest is slack for a busy
  // machine), no restart.
  ASSERT_EQ(rename((data_dir_ + ".away").c_str(), data_dir_.c_str()), 0);
  const absl::Time back = absl::Now();
  while (!SealOnce().ok() && absl::Now() < back + absl::Seconds(10)) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_TRUE(SealOnce().ok());
  EXPECT_LT(absl::Now() - back, absl::Seconds(2));
  EXPECT_EQ(HealthBecomes("sealbox.v1.Crypto", "SERVING"), "SERVING");
  EXPECT_TRUE(AdminCall(&v1::Admin::Stub::ListTenants, list, &tenants).ok());
}

}  // namespace
}  // namespace sealbox::server
