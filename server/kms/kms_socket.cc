#include "server/kms/kms_socket.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "server/keystore/names.h"

namespace sealbox::server {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat("--kms-socket: cannot ", what, " ", path, ": ", std::strerror(errno)));
}

// Whether a process accepts connections on the socket at `path`.
bool Answers(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  const bool connected =
      connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return connected;
}

// Makes `path` free for a new socket: nothing there, or a dead socket removed.
absl::Status Clear(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? absl::OkStatus() : Errno("inspect", path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--kms-socket: ", path, " exists and is not a socket; not replacing it"));
  }
  if (Answers(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--kms-socket: another process serves ", path, " (a second sealbox-server?)"));
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) return Errno("remove the old socket", path);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KmsKey> ParseKmsKey(absl::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(text, '/');
  if (parts.size() != 2 || !ValidateTenantName(parts[0]).ok() || !ValidateKeyName(parts[1]).ok()) {
    return absl::InvalidArgumentError(
        "--kms-key must be TENANT/KEY, a tenant and a key name (--kms-socket serves that key)");
  }
  return KmsKey{parts[0], parts[1]};
}

absl::StatusOr<std::unique_ptr<KmsListener>> KmsListener::Start(const KmsSocketOptions& options,
                                                                grpc::Service* service) {
  const std::string& path = options.path;
  const std::string temporary = absl::StrCat(path, ".", getpid(), ".tmp");
  if (temporary.size() >= sizeof(sockaddr_un::sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--kms-socket: ", path, " is too long for a unix socket (at most ",
        sizeof(sockaddr_un::sun_path) - 1 - (temporary.size() - path.size()), " bytes here)"));
  }
  gid_t gid = static_cast<gid_t>(-1);
  if (!options.group.empty()) {
    const group* found = getgrnam(options.group.c_str());
    if (found == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kms-socket-group: no group named ", options.group));
    }
    gid = found->gr_gid;
  }
  if (absl::Status cleared = Clear(path); !cleared.ok()) return cleared;
  if (absl::Status cleared = Clear(temporary); !cleared.ok()) return cleared;

  std::unique_ptr<KmsListener> listener(new KmsListener);
  grpc::ServerBuilder builder;
  // No TLS on a unix socket: only processes that may open the file can connect.
  builder.AddListeningPort(absl::StrCat("unix:", temporary), grpc::InsecureServerCredentials());
  builder.RegisterService(service);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  listener->server_ = builder.BuildAndStart();
  if (listener->server_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("--kms-socket: cannot listen on ", temporary));
  }
  absl::Status placed = absl::OkStatus();
  if (chmod(temporary.c_str(), options.mode) != 0) {
    placed = Errno("set the mode of", temporary);
  } else if (gid != static_cast<gid_t>(-1) && chown(temporary.c_str(), -1, gid) != 0) {
    placed = Errno("set the group of", temporary);
  } else if (rename(temporary.c_str(), path.c_str()) != 0) {
    placed = Errno("move the socket to", path);
  }
  if (!placed.ok()) {
    unlink(temporary.c_str());
    return placed;
  }
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return Errno("inspect", path);
  listener->path_ = path;
  listener->inode_ = st.st_ino;
  return listener;
}

void KmsListener::Shutdown(absl::Time deadline) {
  if (server_ == nullptr) return;
  server_->Shutdown(absl::ToChronoTime(deadline));
  server_->Wait();
  server_.reset();
  // Only the socket this listener made: a newer process may own the path by now.
  struct stat st;
  if (lstat(path_.c_str(), &st) == 0 && st.st_ino == inode_) unlink(path_.c_str());
}

KmsListener::~KmsListener() { Shutdown(absl::Now()); }

}  // namespace sealbox::server
