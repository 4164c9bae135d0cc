#include "server/crypto/crypto_service.h"

#include <string>
#include <utility>

#include "crypto/secret/secure_wipe.h"
#include "server/crypto/bytes.h"
#include "server/crypto/crypto_streams.h"
#include "server/crypto/call_outcome.h"
#include "server/grpc_status.h"

namespace sealbox::server {
namespace {

// Wipes a plaintext field of the response once gRPC is done with the call (Finish
// has serialized the response by then).
class WipeWhenDone final : public grpc::ServerUnaryReactor {
 public:
  explicit WipeWhenDone(std::string* plaintext) : plaintext_(plaintext) {}

  void OnDone() override {
    crypto::SecureWipe(plaintext_->data(), plaintext_->size());
    delete this;
  }

 private:
  std::string* const plaintext_;
};

// Finishes a unary call and records it.
class UnaryCall {
 public:
  UnaryCall(grpc::CallbackServerContext* context, Metrics* metrics, const char* method)
      : context_(context), metrics_(metrics), method_(method), started_(absl::Now()) {}

  // `plaintext`, when given, is the response's plaintext field: wiped at the end.
  grpc::ServerUnaryReactor* Done(const absl::Status& status,
                                 std::string* plaintext = nullptr) {
    RecordCallOutcome(
        method_, status, started_, [this] { return context_->peer(); }, *metrics_);
    grpc::ServerUnaryReactor* reactor = plaintext != nullptr
                                            ? new WipeWhenDone(plaintext)
                                            : context_->DefaultReactor();
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }

 private:
  grpc::CallbackServerContext* context_;
  Metrics* metrics_;
  const char* method_;
  absl::Time started_;
};

}  // namespace

CryptoService::CryptoService(Keystore* keystore, const Authenticator* authenticator,
                             CryptoLimits limits, Metrics* metrics)
    : admission_(keystore, authenticator),
      limits_(limits),
      metrics_(metrics),
      engine_(/*max_cached_epochs=*/4096, limits.max_decryption_failures_per_key,
              [keystore] { return keystore->CaughtUpSnapshot(); }),
      streams_(limits.max_concurrent_streams, limits.stream_idle_timeout) {}

grpc::ServerUnaryReactor* CryptoService::Seal(grpc::CallbackServerContext* context,
                                              const v1::SealRequest* request,
                                              v1::SealResponse* response) {
  UnaryCall call(context, metrics_, "Seal");
  absl::StatusOr<Caller> caller =
      admission_.Admit(*context, request->key(), request->associated_data(),
                       request->plaintext().size(), limits_.max_unary_bytes);
  if (!caller.ok()) return call.Done(caller.status());
  absl::StatusOr<Sealed> sealed = engine_.Seal(
      *caller->snapshot, caller->tenant, request->key(), AsBytes(request->plaintext()),
      AsBytes(request->associated_data()));
  if (!sealed.ok()) return call.Done(sealed.status());
  metrics_->AddBytesSealed(request->plaintext().size());
  response->set_ciphertext(std::move(sealed->ciphertext));
  response->set_key_version(sealed->key_version);
  return call.Done(absl::OkStatus());
}

grpc::ServerUnaryReactor* CryptoService::Open(grpc::CallbackServerContext* context,
                                              const v1::OpenRequest* request,
                                              v1::OpenResponse* response) {
  UnaryCall call(context, metrics_, "Open");
  absl::StatusOr<Caller> caller =
      admission_.Admit(*context, request->key(), request->associated_data(),
                       request->ciphertext().size(), MaxUnaryCiphertextBytes());
  if (!caller.ok()) return call.Done(caller.status());
  // Opened straight into the response; gRPC serializes it from there.
  std::string* plaintext = response->mutable_plaintext();
  absl::StatusOr<uint32_t> version = engine_.Open(
      *caller->snapshot, caller->tenant, request->key(), AsBytes(request->ciphertext()),
      AsBytes(request->associated_data()), *plaintext);
  CountOpenOutcome(version.status(), caller->tenant, request->key(), *metrics_);
  if (!version.ok()) return call.Done(version.status());
  metrics_->AddBytesOpened(plaintext->size());
  response->set_key_version(*version);
  return call.Done(absl::OkStatus(), plaintext);
}

grpc::ServerUnaryReactor* CryptoService::Rewrap(grpc::CallbackServerContext* context,
                                                const v1::RewrapRequest* request,
                                                v1::RewrapResponse* response) {
  UnaryCall call(context, metrics_, "Rewrap");
  absl::StatusOr<Caller> caller =
      admission_.Admit(*context, request->key(), request->associated_data(),
                       request->ciphertext().size(), MaxUnaryCiphertextBytes());
  if (!caller.ok()) return call.Done(caller.status());
  absl::StatusOr<Rewrapped> rewrapped = engine_.Rewrap(
      *caller->snapshot, caller->tenant, request->key(), AsBytes(request->ciphertext()),
      AsBytes(request->associated_data()));
  CountOpenOutcome(rewrapped.status(), caller->tenant, request->key(), *metrics_);
  if (!rewrapped.ok()) return call.Done(rewrapped.status());
  response->set_ciphertext(std::move(rewrapped->ciphertext));
  response->set_key_version(rewrapped->key_version);
  response->set_previous_key_version(rewrapped->previous_key_version);
  return call.Done(absl::OkStatus());
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* CryptoService::SealStream(
    grpc::CallbackServerContext* context) {
  return StreamCall::Start(
      context, "SealStream", admission_, streams_, *metrics_,
      NewSealStreamHandler(engine_, *metrics_));
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* CryptoService::OpenStream(
    grpc::CallbackServerContext* context) {
  return StreamCall::Start(
      context, "OpenStream", admission_, streams_, *metrics_,
      NewOpenStreamHandler(engine_, *metrics_));
}

}  // namespace sealbox::server
