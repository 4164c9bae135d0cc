// Real etcd for tests: Debian's etcd-server (/usr/bin/etcd), one or more members on
// loopback ports, each with a fresh data directory. Killed when destroyed.
#ifndef SEALBOX_SERVER_KEYSTORE_TESTING_ETCD_CLUSTER_H_
#define SEALBOX_SERVER_KEYSTORE_TESTING_ETCD_CLUSTER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace sealbox::server::testing {

class EtcdCluster {
 public:
  // Starts `members` members and waits until the cluster answers.
  static absl::StatusOr<std::unique_ptr<EtcdCluster>> Start(int members = 1);
  ~EtcdCluster();

  // HOST:PORT of each member's client URL.
  std::vector<std::string> endpoints() const;

  // Stops a member abruptly (SIGKILL) / starts it again on its data directory.
  void Kill(int member);
  absl::Status Restart(int member);

 private:
  struct Member {
    std::string name;
    int client_port = 0;
    int peer_port = 0;
    std::string data_dir;
    std::string log;
    pid_t pid = -1;
  };
  EtcdCluster() = default;
  absl::Status Spawn(Member& member, bool initial);
  absl::Status WaitUntilServing(const std::vector<std::string>& endpoints);

  std::string initial_cluster_;
  std::vector<Member> members_;
};

}  // namespace sealbox::server::testing

#endif  // SEALBOX_SERVER_KEYSTORE_TESTING_ETCD_CLUSTER_H_
