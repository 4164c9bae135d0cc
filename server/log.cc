#include "server/log.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace sealbox::server {

void AppendJsonString(absl::string_view text, std::string& out) {
  out += '"';
  // Names, ids and addresses need no escaping: one append (the audit log writes
  // fifteen strings a line).
  if (std::none_of(text.begin(), text.end(),
                   [](unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; })) {
    out.append(text.data(), text.size());
    out += '"';
    return;
  }
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

Log::Log(absl::string_view event, absl::string_view level) {
  line_ = "{\"ts\":";
  AppendJsonString(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()),
                   line_);
  line_ += ",\"level\":";
  AppendJsonString(level, line_);
  line_ += ",\"event\":";
  AppendJsonString(event, line_);
}

Log& Log::Add(absl::string_view key, absl::string_view value) {
  line_ += ',';
  AppendJsonString(key, line_);
  line_ += ':';
  AppendJsonString(value, line_);
  return *this;
}

Log& Log::Add(absl::string_view key, int64_t value) {
  line_ += ',';
  AppendJsonString(key, line_);
  absl::StrAppend(&line_, ":", value);
  return *this;
}

Log& Log::Add(absl::string_view key, bool value) {
  line_ += ',';
  AppendJsonString(key, line_);
  line_ += value ? ":true" : ":false";
  return *this;
}

Log::~Log() {
  line_ += "}\n";
  // One write per line, so concurrent lines do not interleave.
  std::fwrite(line_.data(), 1, line_.size(), stderr);
  std::fflush(stderr);
}

}  // namespace sealbox::server
