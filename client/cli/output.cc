#include "client/cli/output.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "client/cli/pipe_buffer.h"

namespace sealbox::client {
namespace {

absl::Status ErrnoStatus(absl::string_view what, absl::string_view name, int error) {
  return absl::UnknownError(absl::StrCat("cannot ", what, " ", name, ": ", std::strerror(error)));
}

// The temporary file to remove if the process is interrupted (one Output at a time).
char g_temp_path[PATH_MAX];

void RemoveTempAndDie(int signal_number) {
  if (g_temp_path[0] != '\0') unlink(g_temp_path);
  signal(signal_number, SIG_DFL);
  raise(signal_number);
}

void RemoveOnSignal(const std::string& path) {
  if (path.size() >= sizeof(g_temp_path)) return;
  std::memcpy(g_temp_path, path.c_str(), path.size() + 1);
  struct sigaction action = {};
  action.sa_handler = RemoveTempAndDie;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    sigaction(signal_number, &action, nullptr);
  }
}

void ForgetTemp() { g_temp_path[0] = '\0'; }

// "dir/.name.sealbox-XXXXXX" for "dir/name".
std::string TempTemplate(const std::string& target) {
  size_t slash = target.rfind('/');
  std::string dir = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  return absl::StrCat(dir, ".", base, ".sealbox-XXXXXX");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Output>> Output::Create(const std::string& path) {
  if (path.empty() || path == "-") {
    EnlargePipeBuffer(STDOUT_FILENO);
    return std::unique_ptr<Output>(new Output(STDOUT_FILENO, false, "stdout", ""));
  }
  std::string target = path;
  struct stat st;
  bool exists = stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return ErrnoStatus("write", path, EISDIR);
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a pipe: nothing to replace, so write into it directly.
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open", path, errno);
    return std::unique_ptr<Output>(new Output(fd, true, path, ""));
  }
  // Replace the file a symlink points to, not the link.
  char resolved[PATH_MAX];
  if (exists && realpath(path.c_str(), resolved) != nullptr) target = resolved;

  std::string temp = TempTemplate(target);
  int fd = mkostemp(&temp[0], O_CLOEXEC);  // mode 0600
  if (fd < 0) return ErrnoStatus("create a temporary file beside", path, errno);
  if (exists) fchmod(fd, st.st_mode & 07777);
  RemoveOnSignal(temp);
  auto output = std::unique_ptr<Output>(new Output(fd, true, path, temp));
  output->target_ = target;
  return output;
}

Output::~Output() {
  if (owned_) close(fd_);
  if (!temp_path_.empty() && !committed_) {
    unlink(temp_path_.c_str());
    ForgetTemp();
  }
}

bool Output::is_terminal() const { return isatty(fd_) == 1; }

absl::Status Output::Write(absl::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write", name_, errno);
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status Output::Commit() {
  if (temp_path_.empty()) return absl::OkStatus();
  if (fsync(fd_) != 0) return ErrnoStatus("write", name_, errno);
  if (rename(temp_path_.c_str(), target_.c_str()) != 0) {
    return ErrnoStatus("rename the output to", name_, errno);
  }
  committed_ = true;
  ForgetTemp();
  return absl::OkStatus();
}

}  // namespace sealbox::client
