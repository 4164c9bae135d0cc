// Where a command reads its data: a file, or stdin for "-" or no -i at all.
#ifndef SEALBOX_CLIENT_CLI_INPUT_H_
#define SEALBOX_CLIENT_CLI_INPUT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace sealbox::client {

class Input {
 public:
  // `path` empty or "-" is stdin.
  static absl::StatusOr<std::unique_ptr<Input>> Open(const std::string& path);
  ~Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;

  // The path, or "stdin"; for messages.
  const std::string& name() const { return name_; }
  // The size of a regular file; unknown for pipes, terminals and devices.
  std::optional<uint64_t> size() const { return size_; }
  bool is_terminal() const;

  // Appends up to `max` bytes to `out` (fewer only at the end); returns how many
  // were appended, 0 at the end.
  absl::StatusOr<size_t> Read(size_t max, std::string& out);

  // Replaces `chunk` with the next up to `max` bytes (fewer only at the end; empty
  // at the end). A `chunk` already `max` bytes long is read into as it is: unlike
  // Read, a stream's chunk buffer is not zero-filled again for every message.
  absl::Status ReadChunk(size_t max, std::string& chunk);

  // Appends until the end or until more than `limit` bytes were appended; true when
  // the end came first (the whole input, at most `limit` bytes, is in `out`).
  absl::StatusOr<bool> ReadUpTo(size_t limit, std::string& out);

 private:
  // Reads into `buffer` until `max` bytes or the end; how many.
  absl::StatusOr<size_t> Fill(char* buffer, size_t max);

  Input(int fd, bool owned, std::string name, std::optional<uint64_t> size)
      : fd_(fd), owned_(owned), name_(std::move(name)), size_(size) {}

  int fd_;
  bool owned_;
  std::string name_;
  std::optional<uint64_t> size_;
};

// The whole of a small file (PEM, AAD, key material); INVALID_ARGUMENT past `max_bytes`.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_INPUT_H_
