// The file-system side of the keystore: whole-file reads that say which file they
// read, crash-safe replacement (temp + fsync + rename + fsync dir), and flock.
#ifndef SEALBOX_SERVER_KEYSTORE_FILE_DURABLE_FILE_H_
#define SEALBOX_SERVER_KEYSTORE_FILE_DURABLE_FILE_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace sealbox::server {

// Which file, as stat sees it. A replacement by rename always has a new inode while
// the old file is open, but inode numbers are reused, so callers that must not miss
// a change also compare something inside the file (the keystore's generation).
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;

  bool operator==(const FileIdentity& o) const {
    return device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};

struct FileRead {
  std::vector<uint8_t> bytes;
  FileIdentity identity;
};

// Reads up to `max_bytes` of a file (all of it by default) and the identity of the
// file read. NOT_FOUND when it does not exist.
absl::StatusOr<FileRead> ReadFile(const std::string& path, size_t max_bytes = SIZE_MAX);

// Replaces `path` with `bytes` so that a crash leaves the old or the new file: writes
// <path>.tmp.<pid> (mode 0600), fsyncs it, renames it over `path`, fsyncs the
// directory. On failure before the rename, removes the temp file and leaves `path`
// as it was. `fail_before_rename` (tests only) simulates a failed write. Callers
// hold the keystore's flock, so one temp name per process cannot collide, and any
// <path>.tmp.* already there is a killed writer's: it is removed first.
absl::StatusOr<FileIdentity> ReplaceFile(const std::string& path, absl::Span<const uint8_t> bytes,
                                         const std::function<bool()>& fail_before_rename);

// Creates `path` holding `bytes` unless it exists, so that nobody sees it half
// written: writes <path>.tmp.<pid> (mode 0600), fsyncs it, link(2)s it to `path`
// (which never replaces), fsyncs the directory. ALREADY_EXISTS when `path` was there
// (another writer won); the temp file is removed either way.
absl::Status CreateFileIfAbsent(const std::string& path, absl::Span<const uint8_t> bytes);

// mkdir -p with `mode` for the directories it creates.
absl::Status MakeDirectories(const std::string& path, mode_t mode);

// An exclusive flock on a lock file (created 0600 if missing), held until destroyed.
// flock locks belong to the open file, so two holders in one process exclude each
// other too.
class FileLock {
 public:
  static absl::StatusOr<FileLock> Acquire(const std::string& path);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_FILE_DURABLE_FILE_H_
