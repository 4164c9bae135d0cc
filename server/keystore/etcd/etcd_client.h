// A connection to an etcd cluster over the v3 gRPC API, with stubs generated from
// etcd's own protos (//third_party/etcd): one channel per endpoint, the next
// endpoint tried when one stops answering, TLS, and user/password authentication.
// Only what the etcd keystore needs: Range, Txn, Watch.
//
// After an outage a channel waits out gRPC's reconnect backoff, and a connection
// attempt made while packets were dropped waits out TCP's SYN retries: seconds, either
// way. FindAnsweringMember instead dials every member afresh, many times a second,
// and moves the client to the first that answers.
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_CLIENT_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_CLIENT_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/credentials.h"
#include "server/keystore/etcd/etcd_options.h"

namespace sealbox::server::etcd {

class EtcdClient {
 public:
  // Checks the options and reads the TLS files; connects lazily.
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Create(EtcdOptions options);
  ~EtcdClient();

  // "10.0.0.1:2379,10.0.0.2:2379", for messages and logs.
  std::string Endpoints() const;

  // A Range, tried on each endpoint in turn until one answers. Errors: UNAVAILABLE
  // (no endpoint answered), OUT_OF_RANGE (a revision compacted away), or etcd's own
  // (PERMISSION_DENIED, INVALID_ARGUMENT for a failed login, ...), each naming etcd.
  absl::StatusOr<etcdserverpb::RangeResponse> Range(const etcdserverpb::RangeRequest& request);

  // etcd's revision now, read linearizably (through the leader) from the current
  // endpoint only, within `timeout`: at or after every change committed before
  // the call. `key` is any key the client may read.
  absl::StatusOr<int64_t> CurrentRevision(const std::string& key, absl::Duration timeout);

  // A Txn on the current endpoint, never resent: a Txn that fails in flight may
  // still commit, and only the caller can tell whether it did. An endpoint that does
  // not answer is left for the next call.
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request);
  // The same within `timeout` instead of the options' request_timeout.
  absl::StatusOr<etcdserverpb::TxnResponse> Txn(const etcdserverpb::TxnRequest& request,
                                                absl::Duration timeout);

  // One channel to a member and the stubs over it.
  struct Connection {
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> kv;
    std::unique_ptr<etcdserverpb::Watch::Stub> watch;
    std::unique_ptr<etcdserverpb::Auth::Stub> auth;
  };

  // A watch stream on the current endpoint, on `context`, which must outlive it:
  // cancelling the context, even while this call waits for a connection, ends the
  // stream.
  struct WatchStream {
    std::shared_ptr<const Connection> connection;  // kept while the stream lives
    std::unique_ptr<
        grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
        stream;
    size_t endpoint = 0;
  };
  absl::StatusOr<WatchStream> Watch(grpc::ClientContext* context);
  // A call on `endpoint` over `connection` found it down: later calls start with the
  // next endpoint (unless the endpoint has a new connection since).
  void EndpointFailed(size_t endpoint, const Connection* connection);

  // Dials every endpoint on new connections many times a second, each attempt a
  // linearizable read of `key`, until one answers (or `stop` is notified, or
  // `within` passes). That endpoint, with its new connection, becomes current; its
  // index is returned. Attempts in flight are bounded, and cancelled (not waited
  // for) on return. One search at a time.
  std::optional<size_t> FindAnsweringMember(const std::string& key, absl::Duration within,
                                            const absl::Notification& stop);
  // Frees the attempts a search left that have finished since.
  void TidyProbes();

 private:
  struct Endpoint;
  class Prober;

  explicit EtcdClient(EtcdOptions options);

  // A new channel to `endpoint`. `own_pool`: sharing no connection with other
  // channels (gRPC pools them process-wide), so that it dials now rather than wait
  // on an attempt stuck in backoff. `connect_timeout`: how long each connection
  // attempt may take (zero: gRPC's default).
  std::shared_ptr<Connection> Connect(size_t endpoint, bool own_pool,
                                      absl::Duration connect_timeout) const;
  std::shared_ptr<const Connection> ConnectionOf(size_t endpoint) const;
  void Adopt(size_t endpoint, std::shared_ptr<const Connection> connection);

  // Sets the deadline (unless `stream`) and the auth token on a new context.
  absl::Status Prepare(grpc::ClientContext& context, size_t endpoint, bool stream,
                       absl::Duration timeout);
  // The auth token, without logging in; empty without one.
  std::string Token();
  absl::Status Authenticate(size_t endpoint, const std::string& stale_token);
  absl::StatusOr<std::string> Password() const;
  absl::Status FromGrpc(const grpc::Status& status, size_t endpoint) const;
  static bool EndpointDown(const grpc::Status& status);
  static bool TokenExpired(const grpc::Status& status);

  const EtcdOptions options_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
  std::atomic<size_t> current_{0};
  absl::Mutex prober_mu_;
  const std::unique_ptr<Prober> prober_ ABSL_GUARDED_BY(prober_mu_);
  absl::Mutex token_mu_;
  std::string token_ ABSL_GUARDED_BY(token_mu_);
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_CLIENT_H_
