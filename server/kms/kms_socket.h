// The unix socket the KMS v2 API is served on (--kms-socket), apart from the TCP
// listener: kube-apiserver dials only unix sockets, and sends no credentials, so the
// socket file's mode and group are the access control (docs/SECURITY.md).
//
// The socket is bound under a temporary name, given its mode and group, and only
// then renamed into place, so it is never reachable with looser permissions. A
// socket left by a process that died is replaced; one that a live process answers
// on is not (two servers on one path would split kube-apiserver's calls).
#ifndef SEALBOX_SERVER_KMS_KMS_SOCKET_H_
#define SEALBOX_SERVER_KMS_KMS_SOCKET_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "server/kms/kms_health.h"

namespace sealbox::server {

struct KmsSocketOptions {
  std::string path;  // empty: no KMS socket
  KmsKey key;        // the one key it serves
  mode_t mode = 0600;
  std::string group;  // empty: the process's own
};

// "acme/k8s-secrets" -> {"acme", "k8s-secrets"}; INVALID_ARGUMENT naming --kms-key.
absl::StatusOr<KmsKey> ParseKmsKey(absl::string_view text);

class KmsListener {
 public:
  // Serves `service` (which must outlive the listener) on options.path.
  static absl::StatusOr<std::unique_ptr<KmsListener>> Start(const KmsSocketOptions& options,
                                                            grpc::Service* service);
  // Stops accepting calls, lets in-flight ones finish until `deadline`, removes the
  // socket file.
  void Shutdown(absl::Time deadline);
  ~KmsListener();

  const std::string& path() const { return path_; }

 private:
  KmsListener() = default;

  std::string path_;
  ino_t inode_ = 0;  // the socket file this listener made: the one it may remove
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KMS_KMS_SOCKET_H_
