#include "server/admin/admin_protos.h"

namespace sealbox::server {
namespace {

static_assert(NumberedAsKeyAlgorithm(v1::ALGORITHM_UNSPECIFIED, v1::AES_128_GCM, v1::AES_256_GCM));
static_assert(NumberedAsVersionState(v1::ENABLED, v1::DISABLED, v1::DESTROYED));
static_assert(NumberedAsOperation(v1::SEAL, v1::OPEN, v1::REWRAP, v1::GENERATE_DATA_KEY));

// Times are whole seconds, and create_time is always set (even to the epoch).
void SetSeconds(absl::Time time, google::protobuf::Timestamp* out) {
  out->set_seconds(absl::ToUnixSeconds(time));
}

void ToProto(const TokenInfo& token, v1::TokenInfo* out) {
  out->set_id(token.id);
  out->set_description(token.description);
  SetSeconds(token.create_time, out->mutable_create_time());
  if (token.expire_time != absl::InfiniteFuture()) {
    SetSeconds(token.expire_time, out->mutable_expire_time());
  }
  if (token.max_expire_time != absl::InfiniteFuture()) {
    SetSeconds(token.max_expire_time, out->mutable_max_expire_time());
  }
  for (Operation operation : token.scope.operations) {
    out->add_operations(static_cast<v1::Operation>(operation));
  }
  for (const std::string& key : token.scope.keys) out->add_keys(key);
  out->set_renewed_from(token.renewed_from);
  out->set_read_only(token.read_only);
}

}  // namespace

v1::Key ToProto(const KeyInfo& key) {
  v1::Key out;
  out.set_tenant(key.tenant);
  out.set_name(key.name);
  out.set_algorithm(static_cast<v1::Algorithm>(key.algorithm));
  out.set_primary_version(key.primary_version);
  out.set_min_decryption_version(key.min_decryption_version);
  out.set_min_available_version(key.min_available_version);
  out.set_disabled(key.disabled);
  out.set_exportable(key.exportable);
  if (key.rotation_period > absl::ZeroDuration()) {
    out.mutable_rotation_period()->set_seconds(absl::ToInt64Seconds(key.rotation_period));
    SetSeconds(key.primary_create_time + key.rotation_period, out.mutable_next_rotation_time());
  }
  for (const KeyVersionInfo& version : key.versions) {
    v1::KeyVersion* v = out.add_versions();
    v->set_version(version.version);
    v->set_state(static_cast<v1::KeyVersionState>(version.state));
    SetSeconds(version.create_time, v->mutable_create_time());
    v->set_imported(version.imported);
  }
  return out;
}

v1::Tenant ToProto(const TenantInfo& tenant) {
  v1::Tenant out;
  out.set_name(tenant.name);
  for (const TokenInfo& token : tenant.tokens) ToProto(token, out.add_tokens());
  for (const std::string& key : tenant.keys) out.add_keys(key);
  return out;
}

v1::IssueTokenResponse ToProto(const IssuedToken& issued) {
  v1::IssueTokenResponse out;
  out.set_token(issued.token);
  ToProto(issued.info, out.mutable_info());
  return out;
}

v1::ListAdminTokensResponse ToProto(const std::vector<TokenInfo>& admin_tokens) {
  v1::ListAdminTokensResponse out;
  for (const TokenInfo& token : admin_tokens) ToProto(token, out.add_tokens());
  return out;
}

absl::Duration FromProto(const google::protobuf::Duration& duration) {
  return absl::Seconds(duration.seconds()) + absl::Nanoseconds(duration.nanos());
}

TokenRequest FromProto(const v1::IssueTokenRequest& request) {
  TokenRequest out;
  out.description = request.description();
  for (int operation : request.operations()) {
    out.scope.operations.push_back(static_cast<Operation>(operation));
  }
  out.scope.keys.assign(request.keys().begin(), request.keys().end());
  out.ttl = FromProto(request.ttl());
  out.max_ttl = FromProto(request.max_ttl());
  return out;
}

KeyAlgorithm FromProto(v1::Algorithm algorithm) { return static_cast<KeyAlgorithm>(algorithm); }

}  // namespace sealbox::server
