// The service in-process: a real SealboxServer on a loopback port with a real
// keystore in a temporary directory, driven through the generated gRPC stubs.
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "proto/sealbox/v1/error_reason.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/process/server.h"
#include "tests/service/service_fixture.h"

namespace sealbox::server {
namespace {

using service_testing::kAdminToken;
using service_testing::RandomString;
using service_testing::ServiceTest;
using ::testing::HasSubstr;
using ::testing::Not;

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
    // Marked for clients in the details too (data.proto, ErrorReason).
    EXPECT_TRUE(v1::HasReason(status, v1::DECRYPTION_FAILED));
    EXPECT_TRUE(opened.plaintext().empty());
  }
  v1::OpenResponse opened;
  grpc::Status wrong_aad = Open("alpha", "default", sealed.ciphertext(), "other", &opened);
  EXPECT_EQ(wrong_aad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(wrong_aad.error_message(), "decryption failed");
  EXPECT_TRUE(v1::HasReason(wrong_aad, v1::DECRYPTION_FAILED));
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
  EXPECT_EQ(Seal("beta", "alpha-only", "x", "", &other).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Seal("beta", "no-such-key", "x", "", &other).error_code(), grpc::StatusCode::NOT_FOUND);
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
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::ListTenants, list, &tenants, tokens_["alpha"]).error_code(),
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

// The data plane takes the admin plane's key-name rule, and no error on either plane
// echoes a name it refused: a NUL, a newline or 64 KiB of junk never reaches a
// client's message (or a log line built from it).
TEST_F(ServiceTest, KeyNamesAreValidatedAndNeverEchoed) {
  const std::vector<std::string> bad = {"",
                                        "a b",
                                        "a/b",
                                        "bad\nname",
                                        std::string("nul\0name", 8),
                                        std::string(65, 'k'),
                                        std::string(64 * 1024, 'j') + "\r\n"};
  for (const std::string& key : bad) {
    std::vector<grpc::Status> statuses = EveryDataPlaneCall(key, "");
    for (size_t i = 0; i < statuses.size(); ++i) {
      EXPECT_EQ(statuses[i].error_code(), grpc::StatusCode::INVALID_ARGUMENT) << i;
      EXPECT_EQ(statuses[i].error_message(), "key name must be 1-64 of [A-Za-z0-9_.-]") << i;
    }
  }
  // Valid names are fine to echo: they are what a tenant named.
  v1::SealResponse sealed;
  grpc::Status missing = Seal("alpha", "no-such.key_9", "x", "", &sealed);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(missing.error_message(), "key \"no-such.key_9\" not found");

  // The admin plane: names refused before they are looked up, and not echoed.
  const std::string nasty = std::string("evil\n{\"level\":\"info\"}\0", 21);
  v1::CreateTenantRequest tenant;
  tenant.set_name(nasty);
  v1::Tenant created;
  grpc::Status s = AdminCall(&v1::Admin::Stub::CreateTenant, tenant, &created);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "tenant name must be 1-64 of [a-z0-9_-], starting with a letter");
  v1::CreateKeyRequest key;
  key.set_tenant("alpha");
  key.set_key(nasty);
  v1::Key key_created;
  s = AdminCall(&v1::Admin::Stub::CreateKey, key, &key_created);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "key name must be 1-64 of [A-Za-z0-9_.-]");
  v1::RevokeTokenRequest revoke;
  revoke.set_tenant("alpha");
  revoke.set_token_id(nasty);
  v1::RevokeTokenResponse revoked;
  s = AdminCall(&v1::Admin::Stub::RevokeToken, revoke, &revoked);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), Not(HasSubstr("evil")));
}

// Associated data is bounded (kMaxAssociatedDataBytes) on every call that takes it.
TEST_F(ServiceTest, AssociatedDataIsBounded) {
  const std::string at_limit(64 * 1024, 'a');
  for (const grpc::Status& status : EveryDataPlaneCall("default", at_limit)) {
    // Accepted: the ciphertexts were made without it, so opening fails to authenticate.
    EXPECT_TRUE(status.ok() || status.error_message() == "decryption failed")
        << status.error_message();
  }
  std::string sealed_stream, opened;
  ASSERT_TRUE(SealStream("alpha", "data", 10, &sealed_stream, 4096, "default", at_limit).ok());
  ASSERT_TRUE(OpenStream("alpha", sealed_stream, 100, &opened, "default", at_limit).ok());
  EXPECT_EQ(opened, "data");

  const std::vector<grpc::Status> over = EveryDataPlaneCall("default", at_limit + "b");
  for (size_t i = 0; i < over.size(); ++i) {
    EXPECT_EQ(over[i].error_code(), grpc::StatusCode::INVALID_ARGUMENT) << i;
    EXPECT_EQ(over[i].error_message(),
              "associated data of 65537 bytes exceeds the limit of 64 KiB (65536 bytes)")
        << i;
  }
}

TEST_F(ServiceTest, OversizedUnaryIsRefused) {
  v1::SealResponse sealed;
  EXPECT_EQ(Seal("alpha", "default", std::string(64 * 1024 + 1, 'x'), "", &sealed).error_code(),
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
  // Destroying it again is OK (a retried call must not fail) and returns the key.
  key.Clear();
  grpc::Status again = AdminCall(&v1::Admin::Stub::DestroyKeyVersion, version, &key);
  ASSERT_TRUE(again.ok()) << again.error_message();
  EXPECT_EQ(key.name(), "default");
  ASSERT_EQ(key.versions_size(), 2);
  EXPECT_EQ(key.versions(0).state(), v1::DESTROYED);
  version.set_version(2);  // the primary cannot be destroyed
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::DestroyKeyVersion, version, &key).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

// DisableKey stops every call with the key, unary and streams alike, with one
// message that says what to do; EnableKey brings them all back.
TEST_F(ServiceTest, ADisabledKeyNeitherSealsNorOpensUntilEnabled) {
  v1::SealResponse sealed;
  ASSERT_TRUE(Seal("alpha", "default", "data", "", &sealed).ok());
  std::string stream, opened;
  ASSERT_TRUE(SealStream("alpha", "stream data", 100, &stream).ok());
  v1::KeyRef ref;
  ref.set_tenant("alpha");
  ref.set_key("default");
  v1::Key key;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::DisableKey, ref, &key).ok());
  EXPECT_TRUE(key.disabled());
  EXPECT_EQ(key.versions(0).state(), v1::ENABLED) << "the versions keep their states";

  v1::SealResponse sealed_again;
  v1::OpenResponse open_response;
  v1::RewrapResponse rewrapped;
  std::string stream_again;
  const std::string message =
      "key \"default\" is disabled: no version seals or opens until it is enabled (EnableKey)";
  for (const grpc::Status& status :
       {Seal("alpha", "default", "data", "", &sealed_again),
        Open("alpha", "default", sealed.ciphertext(), "", &open_response),
        Rewrap("alpha", "default", sealed.ciphertext(), "", &rewrapped),
        SealStream("alpha", "more", 100, &stream_again),
        OpenStream("alpha", stream, 100, &opened)}) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(status.error_message(), message);
  }
  EXPECT_TRUE(opened.empty());
  // Another tenant's key of the same name is not touched.
  ASSERT_TRUE(Seal("beta", "default", "data", "", &sealed_again).ok());

  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::EnableKey, ref, &key).ok());
  EXPECT_FALSE(key.disabled());
  ASSERT_TRUE(Open("alpha", "default", sealed.ciphertext(), "", &open_response).ok());
  EXPECT_EQ(open_response.plaintext(), "data");
  ASSERT_TRUE(OpenStream("alpha", stream, 100, &opened).ok());
  EXPECT_EQ(opened, "stream data");
}

// The format byte is public: a ciphertext given to the wrong call is told which call
// takes it, while everything that fails to authenticate stays "decryption failed".
TEST_F(ServiceTest, CiphertextOfTheOtherFormatNamesTheRightCall) {
  v1::SealResponse sealed;
  ASSERT_TRUE(Seal("alpha", "default", "unary data", "ctx", &sealed).ok());
  std::string stream, opened;
  ASSERT_TRUE(SealStream("alpha", "stream data", 100, &stream).ok());

  v1::OpenResponse open_response;
  grpc::Status status = Open("alpha", "default", stream, "", &open_response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "this is a stream ciphertext (from SealStream): open it with OpenStream");
  v1::RewrapResponse rewrapped;
  status = Rewrap("alpha", "default", stream, "", &rewrapped);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "this is a stream ciphertext (from SealStream): Rewrap takes unary "
            "ciphertexts only; open it with OpenStream");
  for (size_t chunk : {size_t{1}, size_t{1000}}) {
    opened.clear();
    status = OpenStream("alpha", sealed.ciphertext(), chunk, &opened);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(),
              "this is a unary ciphertext (from Seal or Rewrap): open it with Open");
    EXPECT_TRUE(opened.empty());
  }

  // Authentication failures of each kind keep the one uniform message.
  std::string tampered_stream = stream;
  tampered_stream[60] ^= 1;
  std::string tampered_unary = sealed.ciphertext();
  tampered_unary[40] ^= 1;
  const std::string cut_unary = sealed.ciphertext().substr(0, sealed.ciphertext().size() - 1);
  const std::vector<grpc::Status> failures = {
      Open("alpha", "default", tampered_unary, "ctx", &open_response),
      Open("alpha", "default", sealed.ciphertext(), "wrong aad", &open_response),
      Open("alpha", "default", cut_unary, "ctx", &open_response),
      Open("beta", "default", sealed.ciphertext(), "ctx", &open_response),
      Rewrap("alpha", "default", tampered_unary, "ctx", &rewrapped),
      OpenStream("alpha", tampered_stream, 1000, &opened),
      OpenStream("alpha", stream.substr(0, stream.size() - 1), 1000, &opened),
      OpenStream("alpha", stream, 1000, &opened, "default", "wrong aad"),
      OpenStream("beta", stream, 1000, &opened),
  };
  for (size_t i = 0; i < failures.size(); ++i) {
    EXPECT_EQ(failures[i].error_code(), grpc::StatusCode::INVALID_ARGUMENT) << i;
    EXPECT_EQ(failures[i].error_message(), "decryption failed") << i;
  }
  // Being sent to the wrong call is no decryption failure: not counted against the key.
  EXPECT_THAT(server_->RenderMetrics(),
              HasSubstr("sealbox_key_decryption_failures_total{tenant=\"alpha\","
                        "key=\"default\"} 7"));
}

// A client that half-closes at once sent no start: an error, never an OK with no output
// (a caller could take that for an empty plaintext). A start and no ciphertext is a
// truncated stream; a start and no plaintext seals the empty stream.
TEST_F(ServiceTest, StreamsThatEndEarly) {
  for (const char* method : {"OpenStream", "SealStream"}) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
    grpc::Status status;
    int responses = 0;
    if (std::string(method) == "OpenStream") {
      auto stream = crypto_->OpenStream(&context);
      EXPECT_TRUE(stream->WritesDone());
      v1::OpenStreamResponse response;
      while (stream->Read(&response)) ++responses;
      status = stream->Finish();
    } else {
      auto stream = crypto_->SealStream(&context);
      EXPECT_TRUE(stream->WritesDone());
      v1::SealStreamResponse response;
      while (stream->Read(&response)) ++responses;
      status = stream->Finish();
    }
    EXPECT_EQ(responses, 0) << method;
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_EQ(status.error_message(), "the stream ended before its start message") << method;
    // Only a failed decryption carries the reason.
    EXPECT_FALSE(v1::HasReason(status, v1::DECRYPTION_FAILED)) << method;
    // Counted (and audited) before the client heard the outcome, as a unary call is:
    // no waiting here.
    EXPECT_THAT(server_->RenderMetrics(),
                HasSubstr(absl::StrCat("sealbox_rpcs_total{method=\"", method,
                                       "\",code=\"INVALID_ARGUMENT\"} 1")));
  }

  std::string opened;
  grpc::Status truncated = OpenStream("alpha", "", 100, &opened);
  EXPECT_EQ(truncated.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(truncated.error_message(), "decryption failed");
  EXPECT_TRUE(v1::HasReason(truncated, v1::DECRYPTION_FAILED));
  EXPECT_TRUE(opened.empty());

  std::string empty_stream;
  ASSERT_TRUE(SealStream("alpha", "", 100, &empty_stream).ok());
  EXPECT_EQ(empty_stream.size(), 48u + 16u);  // the header and an empty last segment
  grpc::Status reopened = OpenStream("alpha", empty_stream, 100, &opened);
  EXPECT_TRUE(reopened.ok()) << reopened.error_message();
  EXPECT_TRUE(opened.empty());
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
  for (size_t cut :
       {size_t{0}, size_t{10}, size_t{48}, size_t{48 + 4096 + 16}, ciphertext.size() - 1}) {
    std::string opened;
    grpc::Status status = OpenStream("alpha", ciphertext.substr(0, cut), 5000, &opened);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << cut;
  }
  std::string opened;
  EXPECT_EQ(OpenStream("alpha", ciphertext + "x", 5000, &opened).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// The server decrypts a message while its last answer is still going out. A
// forgery met then is counted at once, before the client reads anything (so a
// client that goes away cannot escape the decryption failure limit), and ends the
// call once that answer is out.
TEST_F(ServiceTest, AForgeryMetWhileAnAnswerIsOutIsCountedAndEndsTheCall) {
  const std::string plaintext = RandomString(2 << 20);
  std::string ciphertext;
  ASSERT_TRUE(SealStream("alpha", plaintext, 1 << 20, &ciphertext, 65536).ok());
  ciphertext[(3 << 20) / 2] ^= 1;  // in the second MiB
  // A client whose receive window holds far less than an answer: the first answer
  // stays in flight until the client reads.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 65536);
  args.SetMaxReceiveMessageSize(8 << 20);
  auto crypto = v1::Crypto::NewStub(grpc::CreateCustomChannel(
      absl::StrCat("127.0.0.1:", server_->port()), grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
  auto stream = crypto->OpenStream(&context);
  v1::OpenStreamRequest request;
  request.mutable_start()->set_key("default");
  ASSERT_TRUE(stream->Write(request));
  for (size_t at : {size_t{0}, size_t{1} << 20}) {
    request.set_ciphertext_chunk(ciphertext.substr(at, 1 << 20));
    ASSERT_TRUE(stream->Write(request));
  }
  const std::string counted =
      "sealbox_key_decryption_failures_total{tenant=\"alpha\",key=\"default\"} 1";
  for (int i = 0; i < 250 && server_->RenderMetrics().find(counted) == std::string::npos; ++i) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_THAT(server_->RenderMetrics(), HasSubstr(counted));
  // The first MiB's plaintext still arrives whole, then the one uniform failure.
  std::string opened;
  v1::OpenStreamResponse response;
  while (stream->Read(&response)) opened.append(response.plaintext_chunk());
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "decryption failed");
  EXPECT_LE(opened.size(), size_t{1} << 20);
  EXPECT_EQ(opened, plaintext.substr(0, opened.size()));
  // Counted, and the stream's slot given back, before the client had its status.
  const std::string metrics = server_->RenderMetrics();
  EXPECT_THAT(metrics, HasSubstr("sealbox_active_streams 0"));
  EXPECT_THAT(metrics, HasSubstr("sealbox_decryption_failures_total 1"));
  EXPECT_THAT(metrics, HasSubstr(counted));  // once
  EXPECT_THAT(metrics,
              HasSubstr("sealbox_rpcs_total{method=\"OpenStream\",code=\"INVALID_ARGUMENT\"} 1"));
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

// What a tenant sees for another tenant's key or ciphertext is exactly what it sees
// for a key or ciphertext that exists nowhere: the same code and message.
TEST_F(ServiceTest, TenantIsolationErrorsAreIdentical) {
  auto status_of = [](const grpc::Status& s) {
    return absl::StrCat(s.error_code(), ": ", s.error_message());
  };
  auto beta_sees = [&](const std::string& key, const std::string& ciphertext) {
    v1::SealResponse sealed;
    v1::OpenResponse opened;
    std::vector<std::string> seen = {
        status_of(Seal("beta", key, "x", "", &sealed)),
        status_of(Open("beta", key, ciphertext, "", &opened)),
    };
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_["beta"]);
    v1::RewrapRequest rewrap;
    rewrap.set_key(key);
    rewrap.set_ciphertext(ciphertext);
    v1::RewrapResponse rewrapped;
    seen.push_back(status_of(crypto_->Rewrap(&context, rewrap, &rewrapped)));
    return seen;
  };
  v1::SealResponse alpha_sealed;
  ASSERT_TRUE(Seal("alpha", "default", "alpha's data", "", &alpha_sealed).ok());
  // Garbage, but with the unary format byte: a stream's byte would be named as such.
  const std::string garbage = "\x01" + RandomString(alpha_sealed.ciphertext().size() - 1);

  // A key name: before and after alpha creates it, beta sees the same.
  const std::vector<std::string> before = beta_sees("hidden", garbage);
  v1::CreateKeyRequest key;
  key.set_tenant("alpha");
  key.set_key("hidden");
  v1::Key created;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::CreateKey, key, &created).ok());
  EXPECT_EQ(beta_sees("hidden", garbage), before);
  EXPECT_THAT(before[0], HasSubstr("5: "));  // NOT_FOUND

  // A ciphertext: alpha's, even of a version beta's key does not have, fails like
  // garbage, and like a ciphertext with a valid-looking header.
  v1::KeyRef rotate;
  rotate.set_tenant("alpha");
  rotate.set_key("default");
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::RotateKey, rotate, &created).ok());
  v1::SealResponse alpha_v2;
  ASSERT_TRUE(Seal("alpha", "default", "alpha's data", "", &alpha_v2).ok());
  std::string forged = alpha_sealed.ciphertext();
  forged.back() ^= 1;
  const std::vector<std::string> for_garbage = beta_sees("default", garbage);
  EXPECT_THAT(for_garbage[1], HasSubstr("decryption failed"));
  for (const std::string& ciphertext : {alpha_sealed.ciphertext(), alpha_v2.ciphertext(), forged}) {
    std::vector<std::string> seen = beta_sees("default", ciphertext);
    EXPECT_EQ(seen[1], for_garbage[1]);
    EXPECT_EQ(seen[2], for_garbage[2]);
  }
}

TEST_F(ServiceTest, AdminPlaneRefusesTenantTokens) {
  v1::Tenant tenant;
  v1::CreateTenantRequest create;
  create.set_name("gamma");
  EXPECT_EQ(
      AdminCall(&v1::Admin::Stub::CreateTenant, create, &tenant, tokens_["alpha"]).error_code(),
      grpc::StatusCode::PERMISSION_DENIED);
  v1::IssueTokenRequest issue;
  issue.set_tenant("alpha");
  v1::IssueTokenResponse issued;
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::IssueToken, issue, &issued, tokens_["alpha"]).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::KeyRef rotate;
  rotate.set_tenant("alpha");
  rotate.set_key("default");
  v1::Key key;
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::RotateKey, rotate, &key, tokens_["beta"]).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  v1::ListKeysRequest list;
  list.set_tenant("alpha");
  v1::ListKeysResponse keys;
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::ListKeys, list, &keys, tokens_["alpha"]).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(server_->RenderMetrics(),
              HasSubstr("sealbox_auth_failures_total{plane=\"admin\",reason=\"wrong_plane\"} 4"));
}

// Idle epochs swept every second, so a test sees a drop within seconds, and a Seal
// every 20 ms keeps its epoch even when a busy machine holds it up for most of a sweep.
constexpr absl::Duration kIdleEpochSweep = absl::Seconds(1);

class IdleEpochServiceTest : public ServiceTest {
 protected:
  void Configure(ServerConfig& config) override { config.idle_epoch_sweep = kIdleEpochSweep; }
};

TEST_F(IdleEpochServiceTest, AnIdleKeysEpochIsDroppedAndItsCiphertextsStillOpen) {
  // The epoch id sits after the format byte and the 4-byte version (docs/FORMAT.md).
  auto epoch_of = [](const std::string& ciphertext) { return ciphertext.substr(5, 16); };
  v1::SealResponse first, busy, later;
  ASSERT_TRUE(Seal("alpha", "default", "one", "", &first).ok());
  // Sealing more often than the sweep keeps the epoch, for more than two sweeps.
  const absl::Time busy_until = absl::Now() + kIdleEpochSweep * 5 / 2;
  while (absl::Now() < busy_until) {
    absl::SleepFor(absl::Milliseconds(20));
    ASSERT_TRUE(Seal("alpha", "default", "busy", "", &busy).ok());
  }
  EXPECT_EQ(epoch_of(busy.ciphertext()), epoch_of(first.ciphertext()));
  // Idle for more than two sweeps: dropped; the next Seal derives a new epoch. A Seal
  // is a use, so each look comes after a wait of its own; a sweeper held up on a busy
  // machine gets a few more.
  later = busy;
  for (int look = 0; look < 5 && epoch_of(later.ciphertext()) == epoch_of(first.ciphertext());
       ++look) {
    absl::SleepFor(kIdleEpochSweep * 5 / 2);
    ASSERT_TRUE(Seal("alpha", "default", "two", "", &later).ok());
  }
  EXPECT_NE(epoch_of(later.ciphertext()), epoch_of(first.ciphertext()));
  v1::OpenResponse opened;
  ASSERT_TRUE(Open("alpha", "default", first.ciphertext(), "", &opened).ok());
  EXPECT_EQ(opened.plaintext(), "one");
  ASSERT_TRUE(Open("alpha", "default", later.ciphertext(), "", &opened).ok());
  EXPECT_EQ(opened.plaintext(), "two");
}

// Small limits, so the tests reach them quickly (the idle timeout long enough that a
// busy machine's pauses do not end a stream the test holds open).
class LimitedServiceTest : public ServiceTest {
 protected:
  void Configure(ServerConfig& config) override {
    config.auth_limits.max_failures = 3;
    config.limits.max_decryption_failures_per_key = 3;
    config.limits.stream_idle_timeout = absl::Milliseconds(1500);
    config.limits.max_concurrent_streams = 2;
  }
};

TEST_F(LimitedServiceTest, FailedAuthenticationIsLimitedPerAddress) {
  v1::SealRequest request;
  request.set_key("default");
  v1::SealResponse response;
  for (int i = 0; i < 3; ++i) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer sbx_guess" + std::to_string(i));
    EXPECT_EQ(crypto_->Seal(&context, request, &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  // Now even a valid token from this address is refused, unchecked, on both planes.
  v1::SealResponse sealed;
  grpc::Status refused = Seal("alpha", "default", "x", "", &sealed);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("too many failed authentication"));
  v1::ListTenantsRequest list;
  v1::ListTenantsResponse tenants;
  EXPECT_EQ(AdminCall(&v1::Admin::Stub::ListTenants, list, &tenants).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  const std::string metrics = server_->RenderMetrics();
  EXPECT_THAT(metrics,
              HasSubstr("sealbox_auth_failures_total{plane=\"data\",reason=\"invalid\"} 3"));
  EXPECT_THAT(metrics, HasSubstr("sealbox_auth_limited_total{plane=\"data\"} 1"));
  EXPECT_THAT(metrics, HasSubstr("sealbox_auth_limited_total{plane=\"admin\"} 1"));
  EXPECT_EQ(metrics.find("sbx_guess"), std::string::npos);
}

TEST_F(LimitedServiceTest, KeysThatFailTooOftenStopOpeningUntilRotated) {
  v1::SealResponse sealed;
  ASSERT_TRUE(Seal("alpha", "default", "data", "", &sealed).ok());
  std::string forged = sealed.ciphertext();
  forged.back() ^= 1;
  v1::OpenResponse opened;
  // Unary Open, Rewrap and OpenStream all count.
  EXPECT_EQ(Open("alpha", "default", forged, "", &opened).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
    v1::RewrapRequest rewrap;
    rewrap.set_key("default");
    rewrap.set_ciphertext(forged);
    v1::RewrapResponse rewrapped;
    EXPECT_EQ(crypto_->Rewrap(&context, rewrap, &rewrapped).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  std::string stream_ciphertext, stream_opened;
  ASSERT_TRUE(SealStream("alpha", "stream data", 100, &stream_ciphertext).ok());
  std::string stream_forged = stream_ciphertext;
  stream_forged.back() ^= 1;
  EXPECT_EQ(OpenStream("alpha", stream_forged, 1000, &stream_opened).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // The third failure reached the limit: even a good ciphertext is refused now.
  grpc::Status refused = Open("alpha", "default", sealed.ciphertext(), "", &opened);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("too many decryption failures"));
  EXPECT_EQ(OpenStream("alpha", stream_ciphertext, 1000, &stream_opened).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Sealing goes on, and other tenants' keys are not affected.
  v1::SealResponse beta_sealed;
  ASSERT_TRUE(Seal("alpha", "default", "more", "", &beta_sealed).ok());
  ASSERT_TRUE(Seal("beta", "default", "beta", "", &beta_sealed).ok());
  EXPECT_TRUE(Open("beta", "default", beta_sealed.ciphertext(), "", &opened).ok());
  const std::string metrics = server_->RenderMetrics();
  EXPECT_THAT(metrics, HasSubstr("sealbox_decryption_failures_total 3"));
  EXPECT_THAT(
      metrics,
      HasSubstr("sealbox_key_decryption_failures_total{tenant=\"alpha\",key=\"default\"} 3"));
  EXPECT_THAT(metrics, HasSubstr("sealbox_decryption_refused_total 2"));
  // Rotation starts a fresh count; old versions open again.
  v1::KeyRef rotate;
  rotate.set_tenant("alpha");
  rotate.set_key("default");
  v1::Key key;
  ASSERT_TRUE(AdminCall(&v1::Admin::Stub::RotateKey, rotate, &key).ok());
  grpc::Status reopened = Open("alpha", "default", sealed.ciphertext(), "", &opened);
  EXPECT_TRUE(reopened.ok()) << reopened.error_message();
}

TEST_F(LimitedServiceTest, StalledStreamIsEndedAndItsSlotFreed) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
  auto stream = crypto_->SealStream(&context);
  v1::SealStreamRequest request;
  request.mutable_start()->set_key("default");
  ASSERT_TRUE(stream->Write(request));
  v1::SealStreamResponse header;
  ASSERT_TRUE(stream->Read(&header));  // the stream is open on the server
  EXPECT_THAT(server_->RenderMetrics(), HasSubstr("sealbox_active_streams 1"));
  const absl::Time stalled = absl::Now();
  // The client sends nothing more; the server gives up after the idle timeout.
  v1::SealStreamResponse more;
  EXPECT_FALSE(stream->Read(&more));
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
  EXPECT_LT(absl::Now() - stalled, absl::Seconds(5));
  for (int i = 0; i < 100; ++i) {
    if (server_->RenderMetrics().find("sealbox_active_streams 0") != std::string::npos) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  const std::string metrics = server_->RenderMetrics();
  EXPECT_THAT(metrics, HasSubstr("sealbox_active_streams 0"));
  EXPECT_THAT(metrics, HasSubstr("sealbox_stream_idle_timeouts_total 1"));
  EXPECT_THAT(metrics,
              HasSubstr("sealbox_rpcs_total{method=\"SealStream\",code=\"DEADLINE_EXCEEDED\"} 1"));
}

// Streams beyond --max-streams are refused; one that has ended frees its slot before
// its client hears so, so a client keeping the limit busy is never refused for an old
// stream. Each round ends a stream and at once starts another.
TEST_F(LimitedServiceTest, StreamsBeyondTheLimitAreRefusedAndAnEndedOneFreesItsSlot) {
  struct Open {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReaderWriter<v1::SealStreamRequest, v1::SealStreamResponse>> stream;
  };
  auto start = [&](Open& open) {
    open.context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
    open.stream = crypto_->SealStream(&open.context);
    v1::SealStreamRequest request;
    request.mutable_start()->set_key("default");
    open.stream->Write(request);
    v1::SealStreamResponse header;
    return open.stream->Read(&header);  // the header: admitted
  };
  auto end = [](Open& open) {
    open.stream->WritesDone();
    v1::SealStreamResponse response;
    while (open.stream->Read(&response)) {
    }
    return open.stream->Finish();
  };
  std::vector<std::unique_ptr<Open>> streams;
  for (int i = 0; i < 2; ++i) {
    streams.push_back(std::make_unique<Open>());
    ASSERT_TRUE(start(*streams.back())) << i;
  }
  Open third;
  EXPECT_FALSE(start(third));
  const grpc::Status refused = third.stream->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.error_message(), "too many concurrent streams");
  for (int round = 0; round < 20; ++round) {
    const grpc::Status ended = end(*streams[round % 2]);
    ASSERT_TRUE(ended.ok()) << round << ": " << ended.error_message();
    streams[round % 2] = std::make_unique<Open>();
    ASSERT_TRUE(start(*streams[round % 2])) << "round " << round << ": refused";
  }
  for (auto& open : streams) EXPECT_TRUE(end(*open).ok());
  EXPECT_THAT(server_->RenderMetrics(), HasSubstr("sealbox_active_streams 0"));
  EXPECT_THAT(server_->RenderMetrics(),
              HasSubstr("sealbox_rpcs_total{method=\"SealStream\",code=\"OK\"} 22"));
}

// A client that writes but never reads: the server answers each message before it
// reads the next, so it buffers only a few messages (flow control stops the client),
// and the idle timeout then ends the call.
TEST_F(LimitedServiceTest, ClientThatNeverReadsIsBoundedAndEnded) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + tokens_["alpha"]);
  // The client library may keep a blocked Write waiting after the server ended the
  // call; the deadline bounds the test, the server's metrics tell what it did.
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  auto stream = crypto_->SealStream(&context);
  v1::SealStreamRequest request;
  request.mutable_start()->set_key("default");
  ASSERT_TRUE(stream->Write(request));
  request.set_plaintext_chunk(RandomString(1 << 20));
  int written = 0;
  while (written < 200 && stream->Write(request)) ++written;
  // Writes stop succeeding once the server stopped reading and the call was ended.
  EXPECT_LT(written, 64) << "the server kept reading a client that never reads";
  EXPECT_FALSE(stream->Finish().ok());
  const std::string metrics = server_->RenderMetrics();
  EXPECT_THAT(metrics, HasSubstr("sealbox_stream_idle_timeouts_total 1"));
  EXPECT_THAT(metrics, HasSubstr("sealbox_active_streams 0"));
}

}  // namespace
}  // namespace sealbox::server
