// Admission's parts that need no server: who the audit log says called, and what a
// read-only admin token may call. Authenticate and Admin are the authenticator's and
// the keystore's (tests/service and server/admin cover them over a real server).
#include "server/auth/admission.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

TEST(AdmissionTest, TheAuditRecordNamesTheCredential) {
  AuditRecord certificate;
  AuditCaller(Caller{CallSnapshot(), "acme", nullptr}, certificate);
  EXPECT_EQ(certificate.tenant, "acme");
  EXPECT_EQ(certificate.credential, "certificate");
  EXPECT_EQ(certificate.token_id, "");
  auto grant = std::make_shared<TokenGrant>();
  grant->id = "0123456789abcdef";
  AuditRecord token;
  AuditCaller(Caller{CallSnapshot(), "acme", grant}, token);
  EXPECT_EQ(token.credential, "token");
  EXPECT_EQ(token.token_id, "0123456789abcdef");
}

TEST(AdmissionTest, AReadOnlyAdminTokenIsRefusedWhatChangesSomething) {
  auto grant = std::make_shared<TokenGrant>();
  grant->read_only = true;
  const Principal read_only{"", grant};
  EXPECT_TRUE(AdminMayCall(read_only, "ListKeys").ok());
  const absl::Status refused = AdminMayCall(read_only, "RotateKey");
  EXPECT_TRUE(absl::IsPermissionDenied(refused)) << refused;
  EXPECT_EQ(refused.message(),
            "this admin token is read-only: it may call ListTenants, ListKeys, GetKey, "
            "ListAdminTokens and GetKekStatus, not RotateKey");
  // The bootstrap admin token (no grant) and a full admin token may call anything.
  EXPECT_TRUE(AdminMayCall(Principal{"", nullptr}, "RotateKey").ok());
  EXPECT_TRUE(AdminMayCall(Principal{"", std::make_shared<TokenGrant>()}, "RotateKey").ok());
}

TEST(AdmissionTest, AReadOnlyAdminTokenMayCallOnlyWhatChangesNothing) {
  for (const char* reader :
       {"ListTenants", "ListKeys", "GetKey", "ListAdminTokens", "GetKekStatus"}) {
    EXPECT_TRUE(AdminMethodOnlyReads(reader)) << reader;
  }
  for (const char* writer : {"CreateTenant", "IssueToken", "RotateKey", "ExportKey", "RotateKek",
                             "IssueAdminToken", "listkeys", ""}) {
    EXPECT_FALSE(AdminMethodOnlyReads(writer)) << writer;
  }
}

}  // namespace
}  // namespace sealbox::server
