// The admin API's messages made from the keystore's own types (server/keystore/info.h),
// and the keystore's types from what requests carry: every conversion between the
// two, at the admin service's edge.
#ifndef SEALBOX_SERVER_ADMIN_ADMIN_PROTOS_H_
#define SEALBOX_SERVER_ADMIN_ADMIN_PROTOS_H_

#include <vector>

#include "sealbox/v1/admin.pb.h"
#include "server/keystore/info.h"

namespace sealbox::server {

v1::Key ToProto(const KeyInfo& key);
v1::Tenant ToProto(const TenantInfo& tenant);
v1::IssueTokenResponse ToProto(const IssuedToken& issued);
v1::ListAdminTokensResponse ToProto(const std::vector<TokenInfo>& admin_tokens);
absl::Duration FromProto(const google::protobuf::Duration& duration);

// An operation the keystore does not know passes through, for it to refuse.
TokenRequest FromProto(const v1::IssueTokenRequest& request);

// Same numbers: an algorithm the keystore does not know passes through, for it to
// refuse with INVALID_ARGUMENT after it has checked the names.
KeyAlgorithm FromProto(v1::Algorithm algorithm);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_ADMIN_ADMIN_PROTOS_H_
