// A connection to an etcd cluster over the v3 gRPC API, with stubs generated from
// etcd's own protos (//third_party/etcd): one channel per endpoint, the next
// endpoint tried when one stops answering, TLS, and user/password authentication.
// Only what the etcd keystore needs: Range, Txn, Watch.
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_CLIENT_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_CLIENT_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace sealbox::server::etcd {

struct EtcdOptions {
  // HOST:PORT, or http://HOST:PORT / https://HOST:PORT as etcdctl takes them.
  std::vector<std::string> endpoints;
  // TLS: on when a CA is given (or an endpoint says https://). PEM file paths; the
  // client certificate and key together, for etcd's --client-cert-auth.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // etcd authentication (etcdctl auth enable): a user and its password.
  std::string user;
  std::string password;
  // Deadline of each Range and Txn.
  absl::Duration request_timeout = absl::Seconds(5);
};

class EtcdClient {
 public:
  // Checks the options and reads the TLS files; connects lazily.
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(EtcdOptions options);

  // "10.0.0.1:2379,10.0.0.2:2379", for messages and logs.
  std::string Endpoints() const;

  // A Range, tried on each endpoint in turn until one answers. Errors: UNAVAILABLE
  // (no endpoint answered), OUT_OF_RANGE (a revision compacted away), or etcd's own
  // (PERMISSION_DENIED, INVALID_ARGUMENT for a failed login, ...), each naming etcd.
  absl::StatusOr<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request);

  // A Txn on the current endpoint, never resent: a Txn that fails in flight may
  // still commit, and only the caller can tell whether it did. An endpoint that does
  // not answer is left for the next call.
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request);

  // A watch stream on the current endpoint. `context` must outlive the stream;
  // cancelling it ends the stream.
  struct WatchStream {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<grpc::ClientReaderWriter<etcdserverpb::WatchRequest,
                                             etcdserverpb::WatchResponse>>
        stream;
    size_t endpoint = 0;
  };
  absl::StatusOr<WatchStream> Watch();
  // The stream on `endpoint` failed: later calls start with the next endpoint.
  void EndpointFailed(size_t endpoint);

 private:
  struct Endpoint {
    std::string address;  // HOST:PORT
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<etcdserverpb::Auth::Stub> auth;
  };

  explicit EtcdClient(EtcdOptions options) : options_(std::move(options)) {}

  // Sets the deadline (unless `stream`) and the auth token on a new context.
  absl::Status Prepare(grpc::ClientContext& context, size_t endpoint, bool stream);
  absl::Status Authenticate(size_t endpoint, const std::string& stale_token);
  absl::Status FromGrpc(const grpc::Status& status, size_t endpoint) const;
  static bool EndpointDown(const grpc::Status& status);
  static bool TokenExpired(const grpc::Status& status);

  const EtcdOptions options_;
  std::vector<Endpoint> endpoints_;
  std::atomic<size_t> current_{0};
  absl::Mutex token_mu_;
  std::string token_ ABSL_GUARDED_BY(token_mu_);
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_CLIENT_H_
