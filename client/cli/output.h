// Where a command writes its result.
//
// A regular file (new or existing) is written under a temporary name beside it,
// `.NAME.sealbox-XXXXXX`, and renamed over NAME only by Commit: a failed or
// interrupted command never leaves partial output under the target name. Stdout,
// and devices such as /dev/null, get the bytes as they come.
#ifndef SEALBOX_CLIENT_CLI_OUTPUT_H_
#define SEALBOX_CLIENT_CLI_OUTPUT_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sealbox::client {

class Output {
 public:
  // `path` empty or "-" is stdout.
  static absl::StatusOr<std::unique_ptr<Output>> Create(const std::string& path);
  // Removes the temporary file unless Commit succeeded.
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  absl::Status Write(absl::string_view bytes);
  // Flushes to disk and renames the temporary file into place.
  absl::Status Commit();

  const std::string& name() const { return name_; }
  bool is_terminal() const;

 private:
  Output(int fd, bool owned, std::string name, std::string temp_path)
      : fd_(fd), owned_(owned), name_(std::move(name)), temp_path_(std::move(temp_path)) {}

  int fd_;
  bool owned_;
  std::string name_;       // what the user named, or "stdout"
  std::string temp_path_;  // empty when writing in place
  std::string target_;     // what the temporary file is renamed to
  bool committed_ = false;
};

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_OUTPUT_H_
