#include "server/keystore/file/durable_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sealbox::server {
namespace {

// A failed system call as a status. Only a missing file keeps its own code (the
// loader asks for it); any other failure is the server's (INTERNAL), never
// PERMISSION_DENIED or UNAVAILABLE, which callers would read as a problem with their
// credentials or a reason to retry.
absl::Status Errno(absl::string_view what, const std::string& path) {
  const int error = errno;
  const std::string message = absl::StrCat(what, " ", path, ": ", std::strerror(error));
  if (error == ENOENT) return absl::NotFoundError(message);
  return absl::InternalError(message);
}

std::string Directory(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

absl::Status WriteAll(int fd, absl::Span<const uint8_t> bytes, const std::string& path) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("writing", path);
    bytes.remove_prefix(n);
  }
  return absl::OkStatus();
}

// Removes <path>.tmp.* left by writers killed before their rename. The caller holds
// the flock, so no other writer is mid-write: each one is stale, and it holds a whole
// keystore, material of versions destroyed since included.
void RemoveStaleTemps(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string prefix =
      absl::StrCat(slash == std::string::npos ? path : path.substr(slash + 1), ".tmp.");
  DIR* dir = opendir(Directory(path).c_str());
  if (dir == nullptr) return;
  while (const dirent* entry = readdir(dir)) {
    if (absl::StartsWith(entry->d_name, prefix)) unlinkat(dirfd(dir), entry->d_name, 0);
  }
  closedir(dir);
}

FileIdentity IdentityOf(const struct stat& st) {
  return {st.st_dev, st.st_ino, st.st_size,
          int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace

absl::StatusOr<FileRead> ReadFile(const std::string& path, size_t max_bytes) {
  Fd file{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return Errno("opening", path);
  struct stat st;
  if (fstat(file.fd, &st) != 0) return Errno("reading", path);
  FileRead read;
  read.identity = IdentityOf(st);
  read.bytes.resize(std::min<size_t>(st.st_size, max_bytes));
  size_t done = 0;
  while (done < read.bytes.size()) {
    ssize_t n = ::read(file.fd, read.bytes.data() + done, read.bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("reading", path);
    if (n == 0) break;  // shorter than fstat said: return what is there
    done += n;
  }
  read.bytes.resize(done);
  return read;
}

absl::StatusOr<FileIdentity> ReplaceFile(const std::string& path, absl::Span<const uint8_t> bytes,
                                         const std::function<bool()>& fail_before_rename) {
  RemoveStaleTemps(path);
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  Fd file{open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
  if (file.fd < 0) return Errno("creating", temp);
  absl::Status status = WriteAll(file.fd, bytes, temp);
  if (status.ok() && fsync(file.fd) != 0) status = Errno("syncing", temp);
  if (status.ok() && fail_before_rename && fail_before_rename()) {
    status = absl::InternalError(absl::StrCat("writing ", temp, ": injected failure"));
  }
  if (status.ok() && rename(temp.c_str(), path.c_str()) != 0) {
    status = Errno("renaming over", path);
  }
  if (!status.ok()) {
    unlink(temp.c_str());
    return status;
  }
  // The new file is in place. Its identity, taken after the rename (which may touch
  // ctime, though not what FileIdentity compares).
  struct stat st;
  if (fstat(file.fd, &st) != 0) return Errno("reading", path);
  Fd dir{open(Directory(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0 || fsync(dir.fd) != 0) return Errno("syncing", Directory(path));
  return IdentityOf(st);
}

absl::Status CreateFileIfAbsent(const std::string& path, absl::Span<const uint8_t> bytes) {
  const std::string temp = absl::StrCat(path, ".tmp.", getpid());
  absl::Status status;
  {
    Fd file{open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
    if (file.fd < 0) return Errno("creating", temp);
    status = WriteAll(file.fd, bytes, temp);
    if (status.ok() && fsync(file.fd) != 0) status = Errno("syncing", temp);
  }
  if (status.ok() && link(temp.c_str(), path.c_str()) != 0) {
    status = errno == EEXIST ? absl::AlreadyExistsError(absl::StrCat(path, " exists"))
                             : Errno("creating", path);
  }
  unlink(temp.c_str());
  if (!status.ok()) return status;
  Fd dir{open(Directory(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0 || fsync(dir.fd) != 0) return Errno("syncing", Directory(path));
  return absl::OkStatus();
}

absl::Status MakeDirectories(const std::string& path, mode_t mode) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (!prefix.empty() && mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) {
      return Errno("creating", prefix);
    }
    if (end == std::string::npos) return absl::OkStatus();
  }
}

absl::StatusOr<FileLock> FileLock::Acquire(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("opening", path);
  while (flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    absl::Status status = Errno("locking", path);
    close(fd);
    return status;
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

}  // namespace sealbox::server
