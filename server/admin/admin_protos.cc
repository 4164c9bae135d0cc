#include "server/admin/admin_protos.h"

namespace sealbox::server {
namespace {

static_assert(NumberedAsKeyAlgorithm(v1::ALGORITHM_UNSPECIFIED, v1::AES_128_GCM,
                                     v1::AES_256_GCM));
static_assert(NumberedAsVersionState(v1::ENABLED, v1::DISABLED, v1::DESTROYED));

// Times are whole seconds, and create_time is always set (even to the epoch).
void SetSeconds(absl::Time time, google::protobuf::Timestamp* out) {
  out->set_seconds(absl::ToUnixSeconds(time));
}

void ToProto(const TokenInfo& token, v1::TokenInfo* out) {
  out->set_id(token.id);
  out->set_description(token.description);
  SetSeconds(token.create_time, out->mutable_create_time());
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

KeyAlgorithm FromProto(v1::Algorithm algorithm) {
  return static_cast<KeyAlgorithm>(algorithm);
}

}  // namespace sealbox::server
