// Structured logs: one JSON object per line on stderr, for log collectors.
//
//   Log("keystore_reloaded").Add("generation", 42);
//
// Never pass key material, tokens, plaintext or ciphertext.
#ifndef SEALBOX_SERVER_LOG_H_
#define SEALBOX_SERVER_LOG_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace sealbox::server {

// Appends `text` as a JSON string, quoted and escaped.
void AppendJsonString(absl::string_view text, std::string& out);

class Log {
 public:
  explicit Log(absl::string_view event, absl::string_view level = "info");
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;
  // Writes the line.
  ~Log();

  Log& Add(absl::string_view key, absl::string_view value);
  Log& Add(absl::string_view key, const char* value) { return Add(key, absl::string_view(value)); }
  Log& Add(absl::string_view key, int64_t value);
  Log& Add(absl::string_view key, bool value);

 private:
  std::string line_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_LOG_H_
