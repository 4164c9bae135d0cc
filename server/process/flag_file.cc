#include "server/process/flag_file.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace sealbox::server {

absl::StatusOr<std::string> ReadFlagFile(const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read ", path));
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace sealbox::server
