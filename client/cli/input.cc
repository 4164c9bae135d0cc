#include "client/cli/input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "client/cli/pipe_buffer.h"

namespace sealbox::client {
namespace {

constexpr size_t kReadBlock = 256 * 1024;

absl::Status ErrnoStatus(absl::string_view what, const std::string& name, int error) {
  return absl::Status(error == ENOENT ? absl::StatusCode::kNotFound : absl::StatusCode::kUnknown,
                      absl::StrCat("cannot ", what, " ", name, ": ", std::strerror(error)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Input>> Input::Open(const std::string& path) {
  int fd = STDIN_FILENO;
  bool owned = false;
  std::string name = "stdin";
  if (!path.empty() && path != "-") {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    owned = true;
    name = path;
  }
  std::optional<uint64_t> size;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      if (owned) close(fd);
      return ErrnoStatus("read", name, EISDIR);
    }
    if (S_ISREG(st.st_mode)) size = static_cast<uint64_t>(st.st_size);
  }
  EnlargePipeBuffer(fd);
  return std::unique_ptr<Input>(new Input(fd, owned, std::move(name), size));
}

Input::~Input() {
  if (owned_) close(fd_);
}

bool Input::is_terminal() const { return isatty(fd_) == 1; }

absl::StatusOr<size_t> Input::Read(size_t max, std::string& out) {
  size_t start = out.size();
  out.resize(start + max);
  absl::StatusOr<size_t> got = Fill(&out[start], max);
  out.resize(start + (got.ok() ? *got : 0));
  return got;
}

absl::Status Input::ReadChunk(size_t max, std::string& chunk) {
  if (chunk.size() != max) chunk.resize(max);
  absl::StatusOr<size_t> got = Fill(&chunk[0], max);
  if (!got.ok()) {
    chunk.clear();
    return got.status();
  }
  if (*got < max) chunk.resize(*got);
  return absl::OkStatus();
}

absl::StatusOr<size_t> Input::Fill(char* buffer, size_t max) {
  size_t got = 0;
  while (got < max) {
    ssize_t n = read(fd_, buffer + got, max - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("read", name_, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

absl::StatusOr<bool> Input::ReadUpTo(size_t limit, std::string& out) {
  size_t appended = 0;
  while (appended <= limit) {
    absl::StatusOr<size_t> n = Read(std::min(kReadBlock, limit + 1 - appended), out);
    if (!n.ok()) return n.status();
    if (*n == 0) return true;
    appended += *n;
  }
  return false;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path, size_t max_bytes) {
  absl::StatusOr<std::unique_ptr<Input>> input = Input::Open(path);
  if (!input.ok()) return input.status();
  std::string contents;
  absl::StatusOr<bool> ended = (*input)->ReadUpTo(max_bytes, contents);
  if (!ended.ok()) return ended.status();
  if (!*ended) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is larger than ", max_bytes, " bytes"));
  }
  return contents;
}

}  // namespace sealbox::client
