// Where each record lives in etcd: one etcd key per record, under a prefix.
//
//   <prefix>keystore                      the marker: a keystore lives here
//   <prefix>kek                           the KEK sealed by an HSM key, when the
//                                         root of trust is one (server/custody)
//   <prefix>sync                          written (empty) by a replica catching up:
//                                         once its watch has seen this write, it
//                                         has every change made before
//   <prefix>tenants/<tenant>              a tenant (only its name)
//   <prefix>tenants/<tenant>/keys/<key>   a key, with every version
//   <prefix>tenants/<tenant>/tokens/<id>  a token (its SHA-256, never the token)
//
// Tenant and key names cannot hold '/' (names.h), so a tenant's keys and tokens are
// exactly the range under "<prefix>tenants/<tenant>/", which one DeleteRange clears.
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_LAYOUT_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_LAYOUT_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "server/keystore/storage.h"

namespace sealbox::server::etcd {

// The end of the range of every etcd key starting with `prefix` (etcd's range_end):
// the prefix with its last byte incremented.
std::string PrefixEnd(absl::string_view prefix);

class Layout {
 public:
  // `prefix` ends with '/' (one is added otherwise).
  explicit Layout(std::string prefix);

  const std::string& prefix() const { return prefix_; }
  std::string prefix_end() const { return PrefixEnd(prefix_); }
  std::string Marker() const { return prefix_ + "keystore"; }
  std::string Sync() const { return prefix_ + "sync"; }
  std::string SealedKek() const { return prefix_ + "kek"; }
  std::string KeyOf(const RecordName& name) const;
  // The range of a tenant's keys and tokens: [ChildrenOf, PrefixEnd(ChildrenOf)).
  std::string ChildrenOf(const std::string& tenant) const;

  // What an etcd key under the prefix names. The marker and keys that are none of
  // ours give nullopt (IsMarker tells the marker apart).
  std::optional<RecordName> Parse(absl::string_view etcd_key) const;
  bool IsMarker(absl::string_view etcd_key) const { return etcd_key == Marker(); }

 private:
  std::string prefix_;
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_LAYOUT_H_
