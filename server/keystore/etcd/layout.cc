#include "server/keystore/etcd/layout.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sealbox::server::etcd {

std::string PrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      ++end.back();
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key (etcd's convention)
}

Layout::Layout(std::string prefix) : prefix_(std::move(prefix)) {
  if (!absl::EndsWith(prefix_, "/")) prefix_ += '/';
}

std::string Layout::KeyOf(const RecordName& name) const {
  switch (name.kind) {
    case RecordName::Kind::kTenant:
      return absl::StrCat(prefix_, "tenants/", name.tenant);
    case RecordName::Kind::kKey:
      return absl::StrCat(prefix_, "tenants/", name.tenant, "/keys/", name.name);
    case RecordName::Kind::kToken:
      return absl::StrCat(prefix_, "tenants/", name.tenant, "/tokens/", name.name);
  }
  return prefix_;
}

std::string Layout::ChildrenOf(const std::string& tenant) const {
  return absl::StrCat(prefix_, "tenants/", tenant, "/");
}

std::optional<RecordName> Layout::Parse(absl::string_view etcd_key) const {
  if (!absl::ConsumePrefix(&etcd_key, prefix_) || !absl::ConsumePrefix(&etcd_key, "tenants/")) {
    return std::nullopt;
  }
  std::vector<std::string> parts = absl::StrSplit(etcd_key, '/');
  for (const std::string& part : parts) {
    if (part.empty()) return std::nullopt;
  }
  if (parts.size() == 1) return RecordName::Tenant(parts[0]);
  if (parts.size() != 3) return std::nullopt;
  if (parts[1] == "keys") return RecordName::Key(parts[0], parts[2]);
  if (parts[1] == "tokens") return RecordName::Token(parts[0], parts[2]);
  return std::nullopt;
}

}  // namespace sealbox::server::etcd
