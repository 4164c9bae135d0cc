#include "server/bench/echo_service.h"

#include <utility>

#include "absl/synchronization/mutex.h"

namespace sealbox::server::bench {
namespace {

using sealbox::bench::EchoMessage;

// Answers each message with itself, reading the next while the last goes out: one
// message in flight each way, the pacing of the Crypto streams (StreamCall), so the
// two compare like for like.
class EchoStreamReactor : public grpc::ServerBidiReactor<EchoMessage, EchoMessage> {
 public:
  EchoStreamReactor() {
    absl::MutexLock lock(&mu_);
    StartRead(&reading_);
  }

  // gRPC may run this and OnWriteDone at the same time, on different threads.
  void OnReadDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    if (writing_now_) {  // the last answer is still going out: this one waits
      parked_ = true;
      parked_ok_ = ok;
      return;
    }
    Answer(ok);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_now_ = false;
    if (finished_) return;
    if (!ok) {
      finished_ = true;
      return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client stopped reading"));
    }
    if (parked_) {
      parked_ = false;
      Answer(parked_ok_);
    }
  }

  void OnDone() override { delete this; }

 private:
  // The message just read (or the client's half-close), with no write outstanding.
  void Answer(bool ok) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!ok) {  // the client half-closed
      finished_ = true;
      return Finish(grpc::Status::OK);
    }
    std::swap(reading_, writing_);
    writing_now_ = true;
    StartWrite(&writing_);
    StartRead(&reading_);
  }

  absl::Mutex mu_;
  EchoMessage reading_ ABSL_GUARDED_BY(mu_);
  EchoMessage writing_ ABSL_GUARDED_BY(mu_);
  bool writing_now_ ABSL_GUARDED_BY(mu_) = false;
  bool parked_ ABSL_GUARDED_BY(mu_) = false;  // a read done, waiting for the write
  bool parked_ok_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// Reads every message and drops it, counting its bytes.
class DiscardReactor : public grpc::ServerReadReactor<EchoMessage> {
 public:
  explicit DiscardReactor(sealbox::bench::DiscardSummary* summary) : summary_(summary) {
    StartRead(&message_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::OK);  // the client half-closed (or left)
    summary_->set_bytes(summary_->bytes() + static_cast<int64_t>(message_.data().size()));
    StartRead(&message_);
  }

  void OnDone() override { delete this; }

 private:
  sealbox::bench::DiscardSummary* const summary_;
  EchoMessage message_;
};

}  // namespace

grpc::ServerUnaryReactor* EchoService::Echo(grpc::CallbackServerContext* context,
                                            const EchoMessage* request, EchoMessage* response) {
  // A copy, as Seal and Open copy their output into the response.
  response->set_data(request->data());
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerBidiReactor<EchoMessage, EchoMessage>* EchoService::EchoStream(
    grpc::CallbackServerContext* /*context*/) {
  return new EchoStreamReactor;
}

grpc::ServerReadReactor<EchoMessage>* EchoService::Discard(
    grpc::CallbackServerContext* /*context*/, sealbox::bench::DiscardSummary* summary) {
  return new DiscardReactor(summary);
}

}  // namespace sealbox::server::bench
