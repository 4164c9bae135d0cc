// How to reach an etcd cluster: its endpoints, TLS files and credentials. Apart from
// etcd_client.h so that the server's configuration can hold them without compiling
// etcd's generated API (several seconds of every file that includes it).
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_OPTIONS_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_OPTIONS_H_

#include <string>
#include <vector>

#include "absl/time/time.h"

namespace sealbox::server::etcd {

struct EtcdOptions {
  // HOST:PORT, or http://HOST:PORT / https://HOST:PORT as etcdctl takes them.
  std::vector<std::string> endpoints;
  // TLS: on when a CA is given (or an endpoint says https://). PEM file paths; the
  // client certificate and key together, for etcd's --client-cert-auth. The files
  // are read again every `tls_reload_interval`, so renewed ones serve new
  // connections without a restart.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  absl::Duration tls_reload_interval = absl::Seconds(30);
  // etcd authentication (etcdctl auth enable): a user and its password, given as is
  // or as a file that is read again at each login (so a changed password is used
  // from the next one on).
  std::string user;
  std::string password;
  std::string password_file;
  // Deadline of each Range and Txn.
  absl::Duration request_timeout = absl::Seconds(5);
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_OPTIONS_H_
