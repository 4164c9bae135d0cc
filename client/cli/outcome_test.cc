#include "client/cli/outcome.h"

#include "proto/sealbox/v1/error_reason.h"

#include "gtest/gtest.h"

namespace sealbox::client {
namespace {

TEST(ExitCodeForTest, EachStatusCodeHasItsDocumentedExitCode) {
  EXPECT_EQ(ExitCodeFor(grpc::Status::OK), 0);
  EXPECT_EQ(ExitCodeFor(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "unknown token")), 4);
  EXPECT_EQ(ExitCodeFor(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "admin only")), 4);
  EXPECT_EQ(ExitCodeFor(grpc::Status(grpc::StatusCode::NOT_FOUND, "no key")), 5);
  EXPECT_EQ(ExitCodeFor(grpc::Status(grpc::StatusCode::UNAVAILABLE, "refused")), 6);
  for (grpc::StatusCode code :
       {grpc::StatusCode::CANCELLED, grpc::StatusCode::DEADLINE_EXCEEDED,
        grpc::StatusCode::RESOURCE_EXHAUSTED, grpc::StatusCode::FAILED_PRECONDITION,
        grpc::StatusCode::UNIMPLEMENTED, grpc::StatusCode::INTERNAL,
        grpc::StatusCode::ALREADY_EXISTS}) {
    EXPECT_EQ(ExitCodeFor(grpc::Status(code, "x")), 1) << code;
  }
}

TEST(ExitCodeForTest, OnlyTheServersDecryptionFailureIsExitThree) {
  EXPECT_EQ(ExitCodeFor(v1::StatusWithReason(grpc::StatusCode::INVALID_ARGUMENT,
                                             "decryption failed", v1::DECRYPTION_FAILED)),
            3);
  // The reason decides, not the words: the same message without it is an error.
  EXPECT_EQ(ExitCodeFor(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "decryption failed")), 1);
  EXPECT_EQ(ExitCodeFor(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "aad too long")), 1);
  EXPECT_EQ(
      ExitCodeFor(v1::StatusWithReason(grpc::StatusCode::INTERNAL, "x", v1::DECRYPTION_FAILED)), 1);
  // Details that are not a google.rpc.Status are ignored.
  EXPECT_EQ(ExitCodeFor(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "decryption failed",
                                     "\xff not a proto")),
            1);
}

TEST(OutcomeTest, RpcNamesTheCallTheCodeAndTheServersMessage) {
  Outcome outcome = Outcome::Rpc("get key acme/k",
                                 grpc::Status(grpc::StatusCode::NOT_FOUND, "key \"k\" not found"));
  EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.exit_code(), kExitNotFound);
  EXPECT_EQ(outcome.message(), "get key acme/k: NOT_FOUND: key \"k\" not found");
}

TEST(OutcomeTest, RpcKeepsAServerMessageOnOneLine) {
  Outcome outcome = Outcome::Rpc(
      "seal", grpc::Status(grpc::StatusCode::INTERNAL, "line one\nline two\r\x1b[31m\x7f"));
  EXPECT_EQ(outcome.message(), "seal: INTERNAL: line one line two  [31m ");
}

TEST(OutcomeTest, RpcOfAnOkStatusIsOk) {
  Outcome outcome = Outcome::Rpc("seal", grpc::Status::OK);
  EXPECT_TRUE(outcome.ok());
  EXPECT_EQ(outcome.exit_code(), kExitOk);
  EXPECT_EQ(outcome.message(), "");
}

TEST(OutcomeTest, LocalOutcomesCarryTheirExitCodes) {
  EXPECT_EQ(Outcome::Usage("u").exit_code(), 2);
  EXPECT_EQ(Outcome::Error("e").exit_code(), 1);
  EXPECT_EQ(Outcome::DecryptionFailed("d").exit_code(), 3);
  EXPECT_EQ(Outcome::Usage("missing command").message(), "missing command");
  EXPECT_TRUE(Outcome::Ok().ok());
}

TEST(StatusCodeNameTest, NamesAsInTheGrpcDocumentation) {
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::RESOURCE_EXHAUSTED), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::DATA_LOSS), "DATA_LOSS");
  EXPECT_EQ(StatusCodeName(static_cast<grpc::StatusCode>(99)), "UNKNOWN");
}

TEST(OneLineTest, ReplacesControlCharactersOnly) {
  EXPECT_EQ(OneLine("a\tb\nc\0d"), "a b c");  // the literal ends at the NUL
  EXPECT_EQ(OneLine(absl::string_view("a\0b", 3)), "a b");
  EXPECT_EQ(OneLine("caf\xc3\xa9 ~"), "caf\xc3\xa9 ~");
}

}  // namespace
}  // namespace sealbox::client
