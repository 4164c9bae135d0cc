// The protocol every streaming data-plane call follows, whatever its messages mean: read
// a message, answer with whatever output it completed (in responses of at most
// kMaxResponseChunk), and meanwhile read the next. A message is processed as soon
// as it arrives, even while the last answer is being written, unless output is
// already waiting; so the cipher overlaps the transport, and memory stays bounded
// by a request, a response being written, one waiting output and a segment,
// however long the stream. The first message must be `start`; the caller is
// admitted on it. Messages are read and written in their wire form (stream_wire.h),
// so a chunk's bytes are used where gRPC received them and the output is handed to
// gRPC as it is. A StreamHandler says what the messages mean (stream_handlers.cc has
// SealStream's and OpenStream's).
#ifndef SEALBOX_SERVER_DATAPLANE_STREAM_CALL_H_
#define SEALBOX_SERVER_DATAPLANE_STREAM_CALL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "crypto/format/output_bytes.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"
#include "sealbox/v1/data.pb.h"
#include "server/audit/audit_log.h"
#include "server/auth/admission.h"
#include "server/dataplane/stream_watchdog.h"
#include "server/metrics/metrics.h"
#include "server/rpc/call_scope.h"

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
class StreamHandler {
 public:
  virtual ~StreamHandler() = default;
  // What the caller's token must be allowed to do on the stream's key.
  virtual Operation operation() const = 0;
  // The start message, once the caller is admitted: set up, and append any output
  // (the stream header) to `out`.
  virtual absl::Status Begin(Caller caller, const v1::StreamStart& start,
                             crypto::OutputBytes& out) = 0;
  // A later message's chunk, piece by piece as it lies in gRPC's buffers.
  virtual absl::Status Consume(absl::Span<const uint8_t> piece, crypto::OutputBytes& out) = 0;
  // The client's half-close.
  virtual absl::Status End(crypto::OutputBytes& out) = 0;
  // The key version every response carries (0 until known).
  virtual uint32_t key_version() const = 0;
  // Whether output is plaintext, to be wiped once sent.
  virtual bool OutputIsSecret() const = 0;
  // `bytes` of output are about to be sent.
  virtual void Sending(size_t /*bytes*/) {}
  // The call is about to fail with `status` (before the client hears of it, so its
  // next call sees anything counted here).
  virtual void Failed(const absl::Status&) {}
};

class StreamCall final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // Starts the call: the object deletes itself when gRPC is done with it. `audit`
  // (may be null) gets its record as it ends, before the client hears the outcome.
  static StreamCall* Start(grpc::CallbackServerContext* context, const char* method,
                           const Admission& admission, StreamSlots& slots, Metrics& metrics,
                           AuditLog* audit, std::unique_ptr<StreamHandler> handler);

  // Plaintext output is wiped whichever way the call ends.
  ~StreamCall() override;

  // gRPC may run this and OnWriteDone at the same time, on different threads.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  // After every operation has ended: nothing else runs any more.
  void OnDone() override;

 private:
  StreamCall(grpc::CallbackServerContext* context, const char* method, const Admission& admission,
             StreamSlots& slots, Metrics& metrics, AuditLog* audit,
             std::unique_ptr<StreamHandler> handler);

  void Begin();
  bool CanProcess(bool ok) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Process(bool ok) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FirstMessage(const v1::StreamStart* start) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Read() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Send() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WipeOutput() ABSL_NO_THREAD_SAFETY_ANALYSIS;
  void FinishOk() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Fail(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void End(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  grpc::CallbackServerContext* const context_;
  const char* const method_;
  const Admission& admission_;
  StreamSlots& slots_;
  Metrics& metrics_;
  const std::unique_ptr<StreamHandler> handler_;
  uint64_t watch_id_ = 0;
  absl::Mutex mu_;
  CallScope scope_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer request_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer response_ ABSL_GUARDED_BY(mu_);
  crypto::OutputBytes out_ ABSL_GUARDED_BY(mu_);  // output not yet sent
  size_t sent_ ABSL_GUARDED_BY(mu_) = 0;          // how much of out_ has been sent
  bool begun_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;  // the last answer is going out
  bool finished_ ABSL_GUARDED_BY(mu_) = false;   // Finish was called
  bool writing_ ABSL_GUARDED_BY(mu_) = false;    // a StartWrite is outstanding
  bool parked_ ABSL_GUARDED_BY(mu_) = false;     // a read done, waiting for the write
  bool parked_ok_ ABSL_GUARDED_BY(mu_) = false;
  // Not OK once a message failed while a write was in flight: sent when it is done.
  absl::Status failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_STREAM_CALL_H_
