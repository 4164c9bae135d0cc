// What the keystore tells its callers about tenants, keys and tokens: never key
// material, never a token's hash. The admin service turns these into the admin API's
// messages at its edge.
#ifndef SEALBOX_SERVER_KEYSTORE_INFO_H_
#define SEALBOX_SERVER_KEYSTORE_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace sealbox::server {

// How a key's material is used. Numbered as the admin API numbers its Algorithm, so a
// value the keystore does not know passes through to be refused.
enum class KeyAlgorithm : int {
  kUnspecified = 0,  // CreateKey: the default, AES-256-GCM
  kAes128Gcm = 1,
  kAes256Gcm = 2,
};

// Numbered as the admin API numbers its KeyVersionState.
enum class VersionState : int {
  kEnabled = 1,
  kDisabled = 2,   // kept, but opens nothing until enabled again
  kDestroyed = 3,  // material wiped; the version number stays
};

// For the static_asserts of code that converts another enum (the admin API's, the
// stored records') by a cast: whether its values, given in this order, are numbered
// as the keystore's.
template <typename Enum>
constexpr bool NumberedAsKeyAlgorithm(Enum unspecified, Enum aes_128_gcm, Enum aes_256_gcm) {
  return static_cast<int>(unspecified) == static_cast<int>(KeyAlgorithm::kUnspecified) &&
         static_cast<int>(aes_128_gcm) == static_cast<int>(KeyAlgorithm::kAes128Gcm) &&
         static_cast<int>(aes_256_gcm) == static_cast<int>(KeyAlgorithm::kAes256Gcm);
}
template <typename Enum>
constexpr bool NumberedAsVersionState(Enum enabled, Enum disabled, Enum destroyed) {
  return static_cast<int>(enabled) == static_cast<int>(VersionState::kEnabled) &&
         static_cast<int>(disabled) == static_cast<int>(VersionState::kDisabled) &&
         static_cast<int>(destroyed) == static_cast<int>(VersionState::kDestroyed);
}

// A data-plane operation, for a token's scope; each covers its unary, stream and
// batch calls. Numbered as the admin API numbers its Operation.
enum class Operation : int {
  kSeal = 1,
  kOpen = 2,
  kRewrap = 3,
  kGenerateDataKey = 4,
};
template <typename Enum>
constexpr bool NumberedAsOperation(Enum seal, Enum open, Enum rewrap, Enum datakey) {
  return static_cast<int>(seal) == static_cast<int>(Operation::kSeal) &&
         static_cast<int>(open) == static_cast<int>(Operation::kOpen) &&
         static_cast<int>(rewrap) == static_cast<int>(Operation::kRewrap) &&
         static_cast<int>(datakey) == static_cast<int>(Operation::kGenerateDataKey);
}

// What a token may use. Both empty (every token issued before scopes existed):
// everything its tenant has.
struct TokenScope {
  std::vector<Operation> operations;  // empty: every operation
  std::vector<std::string> keys;      // exact names or "prefix*"; empty: every key
};

struct KeyVersionInfo {
  uint32_t version = 0;
  VersionState state = VersionState::kEnabled;
  absl::Time create_time;  // whole seconds
  bool imported = false;
};

// A key's name, algorithm and which of its versions serve: what describing a key
// (KeyInfo) and using it (the snapshot's KeyEntry) share.
struct KeySummary {
  std::string tenant;
  std::string name;
  KeyAlgorithm algorithm = KeyAlgorithm::kUnspecified;
  uint32_t primary_version = 0;
  uint32_t min_decryption_version = 0;
  uint32_t min_available_version = 1;                     // versions below were trimmed
  absl::Duration rotation_period = absl::ZeroDuration();  // zero: not automatic
  absl::Time primary_create_time;  // the next rotation is due this + rotation_period
  bool disabled = false;           // DisableKey: no version seals or opens
  bool exportable = false;         // its versions may leave wrapped (ExportKey)
};

// A key as admin calls describe it.
struct KeyInfo : KeySummary {
  std::vector<KeyVersionInfo> versions;  // ascending
};

// Times in whole seconds.
struct TokenInfo {
  std::string id;
  std::string description;
  absl::Time create_time;
  absl::Time expire_time = absl::InfiniteFuture();      // never, unless set
  absl::Time max_expire_time = absl::InfiniteFuture();  // how far renewal may go
  TokenScope scope;
  std::string renewed_from;  // the id of the token this one renewed
  bool read_only = false;    // admin tokens: may only read
};

// What IssueToken is asked for.
struct TokenRequest {
  std::string description;
  TokenScope scope;
  absl::Duration ttl = absl::ZeroDuration();      // zero: never expires
  absl::Duration max_ttl = absl::ZeroDuration();  // zero: renewals without limit
};

struct TenantInfo {
  std::string name;
  std::vector<TokenInfo> tokens;  // live tokens
  std::vector<std::string> keys;  // key names, sorted
};

// A token just issued: the only time its secret is seen.
struct IssuedToken {
  std::string token;
  TokenInfo info;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_INFO_H_
