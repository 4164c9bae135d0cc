// EtcdClient's search for a member that answers (FindAnsweringMember): the attempts
// in flight and the first answer. Private to EtcdClient; a header of its own so
// that the client reads as connections and calls.
#ifndef SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_PROBER_H_
#define SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_PROBER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "grpcpp/client_context.h"
#include "grpcpp/completion_queue.h"
#include "grpcpp/support/async_unary_call.h"
#include "server/keystore/etcd/etcd_client.h"

namespace sealbox::server::etcd {

// Attempts in flight per member, at most: a member that drops packets holds a few
// dozen sockets at most.
inline constexpr int kMaxProbesPerMember = 40;

// Probes (FindAnsweringMember): each a linearizable Range on a connection of its
// own, completing on a queue drained on the searching thread. Not gRPC's callback
// threads, which the server's calls share: a cut can keep those busy just when a
// member must be found. A search that ends cancels what is left without waiting;
// the next search, or Tidy, frees it.
class EtcdClient::Prober {
 public:
  explicit Prober(EtcdClient* client) : client_(client) {}

  ~Prober() {
    CancelAll();
    while (!running_.empty() && Next(absl::InfiniteFuture())) {
    }
    queue_.Shutdown();
    void* tag;
    bool ok;
    while (queue_.Next(&tag, &ok)) {
    }
  }

  // Starts a search: frees what finished, forgets the last answer.
  void Begin(const std::string& key) {
    Tidy();
    key_ = key;
    answer_ = nullptr;
  }

  // Frees attempts that have finished, without waiting for any.
  void Tidy() {
    while (Next(absl::Now())) {
    }
  }

  void CancelAll() {
    for (auto& [attempt, owned] : running_) attempt->context.TryCancel();
  }

  // A new attempt on `endpoint`, unless it has kMaxProbesPerMember in flight.
  void Launch(size_t endpoint, absl::Duration timeout) {
    if (in_flight_[endpoint] >= kMaxProbesPerMember) return;
    ++in_flight_[endpoint];
    auto attempt = std::make_unique<Attempt>();
    attempt->endpoint = endpoint;
    attempt->connection = client_->Connect(endpoint, /*own_pool=*/true, timeout);
    attempt->context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    // The token as it is: logging in is the heartbeat's work. A member that refuses
    // it has still answered.
    if (std::string token = client_->Token(); !token.empty()) {
      attempt->context.AddMetadata("token", token);
    }
    etcdserverpb::RangeRequest request;
    request.set_key(key_);
    request.set_count_only(true);
    attempt->reader = attempt->connection->kv->AsyncRange(&attempt->context, request, &queue_);
    attempt->reader->Finish(&attempt->response, &attempt->status, attempt.get());
    running_[attempt.get()] = std::move(attempt);
  }

  // The first endpoint to answer within `patience`, with the connection it answered on.
  std::optional<std::pair<size_t, std::shared_ptr<const Connection>>> WaitForAnswer(
      absl::Duration patience) {
    const absl::Time deadline = absl::Now() + patience;
    while (answer_ == nullptr && Next(deadline)) {
    }
    if (answer_ == nullptr) return std::nullopt;
    return std::make_pair(answer_endpoint_, answer_);
  }

 private:
  struct Attempt {
    std::shared_ptr<Connection> connection;
    grpc::ClientContext context;
    etcdserverpb::RangeResponse response;
    grpc::Status status;
    std::unique_ptr<grpc::ClientAsyncResponseReader<etcdserverpb::RangeResponse>> reader;
    size_t endpoint = 0;
  };

  // Takes one finished attempt off the queue; false when none finished by `deadline`.
  bool Next(absl::Time deadline) {
    void* tag = nullptr;
    bool ok = false;
    if (queue_.AsyncNext(&tag, &ok, absl::ToChronoTime(deadline)) !=
        grpc::CompletionQueue::GOT_EVENT) {
      return false;
    }
    auto it = running_.find(static_cast<Attempt*>(tag));
    std::unique_ptr<Attempt> attempt = std::move(it->second);
    running_.erase(it);
    --in_flight_[attempt->endpoint];
    // Any answer but "down" means the member is there and reachable: a refused
    // token is the heartbeat's to mend.
    const grpc::Status& status = attempt->status;
    if (answer_ == nullptr && !key_.empty() && status.error_code() != grpc::StatusCode::CANCELLED &&
        !EndpointDown(status)) {
      answer_endpoint_ = attempt->endpoint;
      answer_ = attempt->connection;
    }
    return true;
  }

  EtcdClient* const client_;
  std::string key_;  // empty between searches: a late answer is no answer
  grpc::CompletionQueue queue_;
  std::map<Attempt*, std::unique_ptr<Attempt>> running_;
  std::map<size_t, int> in_flight_;
  size_t answer_endpoint_ = 0;
  std::shared_ptr<const Connection> answer_;
};

}  // namespace sealbox::server::etcd

#endif  // SEALBOX_SERVER_KEYSTORE_ETCD_ETCD_PROBER_H_
