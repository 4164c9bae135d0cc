// Files named by the server's flags (the KEK, tokens, TLS): read whole, with an error
// that names the flag.
#ifndef SEALBOX_SERVER_PROCESS_FLAG_FILE_H_
#define SEALBOX_SERVER_PROCESS_FLAG_FILE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sealbox::server {

// The contents of `path`, or INVALID_ARGUMENT "--<flag>: cannot read <path>".
absl::StatusOr<std::string> ReadFlagFile(const std::string& path, absl::string_view flag);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_FLAG_FILE_H_
