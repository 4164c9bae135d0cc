// The load generator's stream clients, driven from gRPC's own threads (the callback
// API): the next request goes out as soon as the last is written, and each response
// is taken as it arrives, so neither direction waits on the other. The blocking
// API's writer and reader threads handed every message between threads and spent
// more CPU than the server did, so the client, not the server, set the rate.
#ifndef SEALBOX_SERVER_BENCH_STREAM_REACTORS_H_
#define SEALBOX_SERVER_BENCH_STREAM_REACTORS_H_

#include <functional>
#include <utility>

#include "absl/synchronization/notification.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/client_callback.h"
#include "grpcpp/support/status.h"
#include "sealbox/bench/echo.grpc.pb.h"

namespace sealbox::load {

// One bidirectional stream: EchoStream, SealStream, OpenStream.
template <typename Request, typename Response>
class Pump final : public grpc::ClientBidiReactor<Request, Response> {
 public:
  // `next` fills the next request, or returns false at the end of the stream.
  Pump(std::function<bool(Request&)> next, std::function<void(const Response&)> on_response)
      : next_(std::move(next)), on_response_(std::move(on_response)) {}

  // Runs the call `begin` (a stub's async() method, bound to this reactor) to its end.
  grpc::Status Run(const std::function<void(grpc::ClientContext*, Pump*)>& begin) {
    begin(&context_, this);
    this->StartRead(&response_);
    WriteNext();
    this->StartCall();
    done_.WaitForNotification();
    return status_;
  }

  grpc::ClientContext& context() { return context_; }

  void OnWriteDone(bool ok) override {
    if (ok) WriteNext();  // else the call is failing: OnDone says how
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    on_response_(response_);
    this->StartRead(&response_);
  }

  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }

 private:
  void WriteNext() {
    if (next_(request_)) {
      this->StartWrite(&request_);
    } else {
      this->StartWritesDone();
    }
  }

  std::function<bool(Request&)> next_;
  std::function<void(const Response&)> on_response_;
  grpc::ClientContext context_;
  Request request_;
  Response response_;
  grpc::Status status_;
  absl::Notification done_;
};

// A client stream driven the same way, one way only: for Discard.
class Push final : public grpc::ClientWriteReactor<bench::EchoMessage> {
 public:
  // `next` fills the next message, or returns false at the end of the stream.
  explicit Push(std::function<bool(bench::EchoMessage&)> next) : next_(std::move(next)) {}

  grpc::Status Run(bench::Echo::Stub& echo, bench::DiscardSummary& summary);

  void OnWriteDone(bool ok) override {
    if (ok) WriteNext();
  }

  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }

 private:
  void WriteNext();

  std::function<bool(bench::EchoMessage&)> next_;
  grpc::ClientContext context_;
  bench::EchoMessage message_;
  grpc::Status status_;
  absl::Notification done_;
};

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_STREAM_REACTORS_H_
