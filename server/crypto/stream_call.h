// The protocol every streaming Crypto call follows, whatever its messages mean: read
// a message, answer with whatever output it completed (in slices of at most
// kMaxResponseChunk), and meanwhile read the next, which waits until that answer is
// written. One message in flight each way keeps memory bounded by a message, a
// chunk and a segment, however long the stream; reading while writing keeps the
// transport busy both ways. The first message must be `start`; the caller is
// admitted on it. A StreamHandler says what the messages mean (crypto_streams.cc has
// SealStream's and OpenStream's).
#ifndef SEALBOX_SERVER_CRYPTO_STREAM_CALL_H_
#define SEALBOX_SERVER_CRYPTO_STREAM_CALL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "crypto/secret/secure_wipe.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "sealbox/v1/data.pb.h"
#include "server/crypto/admission.h"
#include "server/crypto/call_outcome.h"
#include "server/crypto/stream_watchdog.h"
#include "server/grpc_status.h"
#include "server/log.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// Responses carry at most this much, so a 4 MiB segment never meets gRPC's default
// 4 MiB message limit on either side. It is more than 1 MiB so that what a 1 MiB
// request completes (sixteen 64 KiB segments and their tags) goes out as one
// response, not as 1 MiB and a 256-byte remainder that the next request waits for.
inline constexpr size_t kMaxResponseChunk = 2 << 20;

// What the streams of one service share: how many are open (at most `max_open`),
// and the watchdog that cancels idle ones.
struct StreamSlots {
  StreamSlots(int max_open, absl::Duration idle_timeout)
      : max_open(max_open), watchdog(idle_timeout) {}
  const int max_open;
  std::atomic<int> open{0};
  StreamWatchdog watchdog;
};

// What one kind of stream does with its messages.
template <typename Request, typename Response>
class StreamHandler {
 public:
  virtual ~StreamHandler() = default;
  // The start message, once the caller is admitted: set up, and append any output
  // (the stream header) to `out`.
  virtual absl::Status Begin(Caller caller, const v1::StreamStart& start,
                             std::string& out) = 0;
  // Every later message.
  virtual absl::Status Consume(Request& request, std::string& out) = 0;
  // The client's half-close.
  virtual absl::Status End(std::string& out) = 0;
  // The response's bytes field, which output goes into.
  virtual std::string& Payload(Response& response) = 0;
  // Completes a response whose payload is in place (the key version, and metrics).
  virtual void Stamp(Response& response) = 0;
  // Whether output is plaintext, to be wiped once sent.
  virtual bool OutputIsSecret() const = 0;
  // A response was sent: wipe what it held if that was plaintext.
  virtual void Sent(Response& response) = 0;
  // The call is about to fail with `status` (before the client hears of it, so its
  // next call sees anything counted here).
  virtual void Failed(const absl::Status&) {}
};

template <typename Request, typename Response>
class StreamCall final : public grpc::ServerBidiReactor<Request, Response> {
 public:
  using Handler = StreamHandler<Request, Response>;

  // Starts the call: the object deletes itself when gRPC is done with it.
  static StreamCall* Start(grpc::CallbackServerContext* context, const char* method,
                           const Admission& admission, StreamSlots& slots,
                           Metrics& metrics, std::unique_ptr<Handler> handler) {
    auto* call =
        new StreamCall(context, method, admission, slots, metrics, std::move(handler));
    call->Begin();
    return call;
  }

  // Plaintext output is wiped whichever way the call ends.
  ~StreamCall() override { WipeOutput(); }

  // gRPC may run this and OnWriteDone at the same time, on different threads.
  void OnReadDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    if (ok) slots_.watchdog.Touch(watch_id_);
    if (writing_) {  // the previous answer is still going out: this message waits
      parked_ = true;
      parked_ok_ = ok;
      return;
    }
    Process(ok);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    handler_->Sent(response_);
    if (finished_) return;
    if (!ok) return Fail(absl::CancelledError("client stopped reading"));
    slots_.watchdog.Touch(watch_id_);
    if (sent_ < out_.size()) return Send();
    WipeOutput();
    out_.clear();
    sent_ = 0;
    if (finishing_) return FinishOk();
    if (parked_) {
      parked_ = false;
      Process(parked_ok_);
    }
    // Otherwise the next message is still being read; OnReadDone takes it.
  }

  // After every operation has ended: nothing else runs any more.
  void OnDone() override {
    {
      absl::MutexLock lock(&mu_);  // released before the object goes
      if (slots_.watchdog.Forget(watch_id_)) {
        outcome_ = absl::DeadlineExceededError(absl::StrCat(
            "no progress for ", absl::FormatDuration(slots_.watchdog.idle()),
            " (--stream-idle-seconds)"));
        metrics_.CountStreamIdleTimeout();
        Log("stream_idle_timeout", "warning").Add("method", method_).Add("peer", peer_);
      }
      RecordCallOutcome(
          method_, outcome_, started_, [this] { return peer_; }, metrics_);
    }
    slots_.open.fetch_sub(1);
    metrics_.StreamEnded();
    delete this;
  }

 private:
  StreamCall(grpc::CallbackServerContext* context, const char* method,
             const Admission& admission, StreamSlots& slots, Metrics& metrics,
             std::unique_ptr<Handler> handler)
      : context_(context),
        method_(method),
        admission_(admission),
        slots_(slots),
        metrics_(metrics),
        handler_(std::move(handler)),
        started_(absl::Now()) {}

  // Once the whole object is built, so that no reaction reaches a half-made one.
  void Begin() {
    metrics_.StreamStarted();
    peer_ = context_->peer();  // a cancelled call no longer knows it
    absl::MutexLock lock(&mu_);
    if (slots_.open.fetch_add(1) >= slots_.max_open) {
      return Fail(absl::ResourceExhaustedError("too many concurrent streams"));
    }
    watch_id_ = slots_.watchdog.Watch(context_);
    Read();
  }

  // The message in request_ (or the end of the client's half, `ok` false), with no
  // answer being written.
  void Process(bool ok) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!ok) {  // the client half-closed, or went away
      // A cancelled call is not a truncated stream: nothing to finish or count.
      if (context_->IsCancelled()) return Fail(absl::CancelledError("client cancelled"));
      if (!begun_) {
        return Fail(
            absl::InvalidArgumentError("the stream ended before its start message"));
      }
      if (absl::Status s = handler_->End(out_); !s.ok()) return Fail(s);
      finishing_ = true;
      if (out_.empty()) return FinishOk();
      return Send();
    }
    absl::Status status = begun_ ? NextMessage() : FirstMessage();
    if (!status.ok()) return Fail(status);
    if (!out_.empty()) Send();
    Read();  // the handler is done with request_: it may take the next message
  }

  void Read() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { this->StartRead(&request_); }

  // Ciphertext needs no wiping, and a 1 MiB memset per message is a cost Echo does
  // not pay.
  void WipeOutput() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    if (handler_->OutputIsSecret()) crypto::SecureWipe(out_.data(), out_.size());
  }

  absl::Status FirstMessage() {
    if (!request_.has_start()) {
      return absl::InvalidArgumentError("the first message must be `start`");
    }
    const v1::StreamStart& start = request_.start();
    absl::StatusOr<Caller> caller =
        admission_.Admit(*context_, start.key(), start.associated_data(),
                         /*size=*/0, /*limit=*/0);
    if (!caller.ok()) return caller.status();
    begun_ = true;
    return handler_->Begin(*std::move(caller), start, out_);
  }

  absl::Status NextMessage() {
    if (request_.has_start()) {
      return absl::InvalidArgumentError("`start` may only be the first message");
    }
    return handler_->Consume(request_, out_);
  }

  // Sends the next slice of out_; OnWriteDone sends the rest. Output that fits one
  // response (the usual case) is swapped into it, not copied; out_ gets the last
  // response's buffer back, wiped by Sent if it held plaintext.
  void Send() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::string& payload = handler_->Payload(response_);
    if (sent_ == 0 && out_.size() <= kMaxResponseChunk) {
      payload.swap(out_);
      out_.clear();
    } else {
      const size_t n = std::min(kMaxResponseChunk, out_.size() - sent_);
      payload.assign(out_, sent_, n);
      sent_ += n;
    }
    handler_->Stamp(response_);
    writing_ = true;
    this->StartWrite(&response_);
  }

  // Called with no write outstanding; a read may be (gRPC ends it, not ok).
  void FinishOk() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    this->Finish(grpc::Status::OK);
  }

  void Fail(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    outcome_ = status;
    handler_->Failed(status);
    this->Finish(ToGrpcStatus(status));
  }

  grpc::CallbackServerContext* const context_;
  const char* const method_;
  const Admission& admission_;
  StreamSlots& slots_;
  Metrics& metrics_;
  const std::unique_ptr<Handler> handler_;
  const absl::Time started_;
  uint64_t watch_id_ = 0;
  std::string peer_;
  absl::Mutex mu_;
  absl::Status outcome_ ABSL_GUARDED_BY(mu_);
  Request request_ ABSL_GUARDED_BY(mu_);
  Response response_ ABSL_GUARDED_BY(mu_);
  std::string out_ ABSL_GUARDED_BY(mu_);           // output not yet sent
  size_t sent_ ABSL_GUARDED_BY(mu_) = 0;           // how much of out_ has been sent
  bool begun_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;  // the last answer is going out
  bool finished_ ABSL_GUARDED_BY(mu_) = false;   // Finish was called
  bool writing_ ABSL_GUARDED_BY(mu_) = false;    // a StartWrite is outstanding
  bool parked_ ABSL_GUARDED_BY(mu_) = false;     // a read done, waiting for the write
  bool parked_ok_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_CRYPTO_STREAM_CALL_H_
