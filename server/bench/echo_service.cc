#include "server/bench/echo_service.h"

namespace sealbox::server::bench {
namespace {

using sealbox::bench::EchoMessage;

// Reads a message, writes it back, reads the next: one message in flight each way,
// the pacing of SealStreamReactor, so the two compare like for like.
class EchoStreamReactor : public grpc::ServerBidiReactor<EchoMessage, EchoMessage> {
 public:
  EchoStreamReactor() { StartRead(&message_); }

  void OnReadDone(bool ok) override {
    if (!ok) return Finish(grpc::Status::OK);  // the client half-closed
    StartWrite(&message_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok)
      return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "client stopped reading"));
    StartRead(&message_);
  }

  void OnDone() override { delete this; }

 private:
  EchoMessage message_;
};

}  // namespace

grpc::ServerUnaryReactor* EchoService::Echo(grpc::CallbackServerContext* context,
                                            const EchoMessage* request,
                                            EchoMessage* response) {
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

}  // namespace sealbox::server::bench
