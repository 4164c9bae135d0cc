#include "server/crypto_service.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/aes_gcm.h"
#include "crypto/format/unary.h"
#include "crypto/secret/secure_wipe.h"
#include "server/grpc_status.h"
#include "server/keystore/names.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

// Responses carry at most this much, so a 4 MiB segment never meets gRPC's default
// 4 MiB message limit on either side.
constexpr size_t kMaxResponseChunk = 1 << 20;

absl::Span<const uint8_t> AsBytes(const std::string& s) {
  return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()),
                                   s.size());
}

std::string AsString(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// Overwrites a protobuf bytes field that held plaintext before it is freed.
void WipeString(std::string* s) { crypto::SecureWipe(s->data(), s->size()); }

// Finishes a unary call and records it.
class UnaryCall {
 public:
  UnaryCall(grpc::CallbackServerContext* context, Metrics* metrics, const char* method)
      : context_(context), metrics_(metrics), method_(method), started_(absl::Now()) {}

  grpc::ServerUnaryReactor* Done(const absl::Status& status) {
    metrics_->RecordOutcome(method_, status, started_);
    if (absl::IsUnauthenticated(status)) {
      Log("auth_failed", "warning").Add("method", method_).Add("peer", context_->peer());
    }
    grpc::ServerUnaryReactor* reactor = context_->DefaultReactor();
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }

 private:
  grpc::CallbackServerContext* context_;
  Metrics* metrics_;
  const char* method_;
  absl::Time started_;
};

absl::Status CheckAssociatedData(const std::string& aad) {
  if (aad.size() <= kMaxAssociatedDataBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "associated data of ", aad.size(), " bytes exceeds the limit of ",
      kMaxAssociatedDataBytes / 1024, " KiB (", kMaxAssociatedDataBytes, " bytes)"));
}

absl::Status TooLarge(size_t size, size_t limit) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "message of ", size, " bytes exceeds the unary limit of ", limit,
      " bytes; use SealStream/OpenStream"));
}

}  // namespace

CryptoService::CryptoService(Keystore* keystore, const Authenticator* authenticator,
                             DataPlaneLimits limits, Metrics* metrics)
    : keystore_(keystore),
      authenticator_(authenticator),
      limits_(limits),
      metrics_(metrics),
      data_plane_(/*max_cached_epochs=*/4096, limits.max_decryption_failures_per_key,
                  [keystore] { return keystore->CaughtUpSnapshot(); }),
      watchdog_(limits.stream_idle_timeout) {}

void CryptoService::CountOpenOutcome(const absl::Status& status,
                                     const std::string& tenant, const std::string& key) {
  if (crypto::IsDecryptionFailure(status)) {
    metrics_->CountKeyDecryptionFailure(tenant, key);
  } else if (IsDecryptionLimitReached(status)) {
    metrics_->CountDecryptionRefused();
  }
}

absl::StatusOr<CryptoService::Caller> CryptoService::Admit(
    const grpc::CallbackServerContext& context, const std::string& key,
    const std::string& aad, size_t size, size_t limit) const {
  // Before the keystore has loaded no token is known: say so, rather than count every
  // caller as a failed authentication.
  if (absl::Status loaded = keystore_->Loaded(); !loaded.ok()) return loaded;
  Caller caller{keystore_->snapshot(), {}};
  absl::StatusOr<std::string> tenant = authenticator_->Tenant(context, caller.snapshot);
  if (!tenant.ok()) return tenant.status();
  caller.tenant = *std::move(tenant);
  // The admin plane's rule: a name no key can have is refused before any lookup, and
  // never echoed.
  if (absl::Status s = ValidateKeyName(key); !s.ok()) return s;
  if (absl::Status s = CheckAssociatedData(aad); !s.ok()) return s;
  if (size > limit) return TooLarge(size, limit);
  return caller;
}

grpc::ServerUnaryReactor* CryptoService::Seal(grpc::CallbackServerContext* context,
                                              const v1::SealRequest* request,
                                              v1::SealResponse* response) {
  UnaryCall call(context, metrics_, "Seal");
  absl::StatusOr<Caller> caller =
      Admit(*context, request->key(), request->associated_data(),
            request->plaintext().size(), limits_.max_unary_bytes);
  if (!caller.ok()) return call.Done(caller.status());
  absl::StatusOr<Sealed> sealed = data_plane_.Seal(
      *caller->snapshot, caller->tenant, request->key(), AsBytes(request->plaintext()),
      AsBytes(request->associated_data()));
  if (!sealed.ok()) return call.Done(sealed.status());
  metrics_->AddBytesSealed(request->plaintext().size());
  response->set_ciphertext(AsString(sealed->ciphertext));
  response->set_key_version(sealed->key_version);
  return call.Done(absl::OkStatus());
}

grpc::ServerUnaryReactor* CryptoService::Open(grpc::CallbackServerContext* context,
                                              const v1::OpenRequest* request,
                                              v1::OpenResponse* response) {
  UnaryCall call(context, metrics_, "Open");
  absl::StatusOr<Caller> caller =
      Admit(*context, request->key(), request->associated_data(),
            request->ciphertext().size(), MaxUnaryCiphertextBytes());
  if (!caller.ok()) return call.Done(caller.status());
  absl::StatusOr<Opened> opened = data_plane_.Open(
      *caller->snapshot, caller->tenant, request->key(), AsBytes(request->ciphertext()),
      AsBytes(request->associated_data()));
  CountOpenOutcome(opened.status(), caller->tenant, request->key());
  if (!opened.ok()) return call.Done(opened.status());
  metrics_->AddBytesOpened(opened->plaintext.size());
  response->set_plaintext(AsString(opened->plaintext));
  crypto::SecureWipe(opened->plaintext.data(), opened->plaintext.size());
  response->set_key_version(opened->key_version);
  return call.Done(absl::OkStatus());
}

grpc::ServerUnaryReactor* CryptoService::Rewrap(grpc::CallbackServerContext* context,
                                                const v1::RewrapRequest* request,
                                                v1::RewrapResponse* response) {
  UnaryCall call(context, metrics_, "Rewrap");
  absl::StatusOr<Caller> caller =
      Admit(*context, request->key(), request->associated_data(),
            request->ciphertext().size(), MaxUnaryCiphertextBytes());
  if (!caller.ok()) return call.Done(caller.status());
  absl::StatusOr<Rewrapped> rewrapped = data_plane_.Rewrap(
      *caller->snapshot, caller->tenant, request->key(), AsBytes(request->ciphertext()),
      AsBytes(request->associated_data()));
  CountOpenOutcome(rewrapped.status(), caller->tenant, request->key());
  if (!rewrapped.ok()) return call.Done(rewrapped.status());
  response->set_ciphertext(AsString(rewrapped->ciphertext));
  response->set_key_version(rewrapped->key_version);
  response->set_previous_key_version(rewrapped->previous_key_version);
  return call.Done(absl::OkStatus());
}

// The life of one streaming call, shared by SealStream and OpenStream: read a
// message, answer with whatever output it completed (in slices of at most
// kMaxResponseChunk), and only then read the next. One message in flight each way
// keeps memory bounded by a chunk and a segment, however long the stream. The
// subclass supplies what a message means (Begin, Consume, End) and where output goes.
template <typename Request, typename Response>
class StreamCall : public grpc::ServerBidiReactor<Request, Response> {
 public:
  StreamCall(CryptoService* service, grpc::CallbackServerContext* context,
             const char* method)
      : service_(service), context_(context), method_(method), started_(absl::Now()) {}

  // Called once the whole object is built, so no reaction can reach a subclass
  // that is still being constructed.
  StreamCall* Start() {
    service_->metrics_->StreamStarted();
    if (service_->active_streams_.fetch_add(1) >= service_->limits_.max_concurrent_streams) {
      Fail(absl::ResourceExhaustedError("too many concurrent streams"));
    } else {
      watch_id_ = service_->watchdog_.Watch(context_);
      peer_ = context_->peer();  // a cancelled call no longer knows it
      this->StartRead(&request_);
    }
    return this;
  }

  // Output may be plaintext: wiped whichever way the call ends.
  ~StreamCall() override { crypto::SecureWipe(out_.data(), out_.size()); }

  void OnReadDone(bool ok) override {
    if (ok) service_->watchdog_.Touch(watch_id_);
    out_.clear();
    sent_ = 0;
    if (!ok) {  // the client half-closed, or went away
      // A cancelled call is not a truncated stream: nothing to finish or count.
      if (context_->IsCancelled()) return Fail(absl::CancelledError("client cancelled"));
      if (!begun_) {
        return Fail(
            absl::InvalidArgumentError("the stream ended before its start message"));
      }
      if (absl::Status s = End(out_); !s.ok()) return Fail(s);
      finishing_ = true;
      if (out_.empty()) return this->Finish(grpc::Status::OK);
      return Send();
    }
    absl::Status status = begun_ ? NextMessage() : FirstMessage();
    if (!status.ok()) return Fail(status);
    if (out_.empty()) return this->StartRead(&request_);
    Send();
  }

  void OnWriteDone(bool ok) override {
    WipeResponse(response_);
    if (!ok) return Fail(absl::CancelledError("client stopped reading"));
    service_->watchdog_.Touch(watch_id_);
    if (sent_ < out_.size()) return Send();
    crypto::SecureWipe(out_.data(), out_.size());
    if (finishing_) return this->Finish(grpc::Status::OK);
    this->StartRead(&request_);
  }

  void OnDone() override {
    if (service_->watchdog_.Forget(watch_id_)) {
      outcome_ = absl::DeadlineExceededError(absl::StrCat(
          "no progress for ", absl::FormatDuration(service_->watchdog_.idle()),
          " (--stream-idle-seconds)"));
      service_->metrics_->CountStreamIdleTimeout();
      Log("stream_idle_timeout", "warning")
          .Add("method", method_)
          .Add("peer", peer_);
    }
    service_->metrics_->RecordOutcome(method_, outcome_, started_);
    if (absl::IsUnauthenticated(outcome_)) {
      Log("auth_failed", "warning").Add("method", method_).Add("peer", context_->peer());
    }
    service_->active_streams_.fetch_sub(1);
    service_->metrics_->StreamEnded();
    delete this;
  }

 protected:
  // The start message, once the caller is authenticated: set up, and append any
  // output (the stream header) to `out`.
  virtual absl::Status Begin(std::shared_ptr<const Snapshot> snapshot,
                             const std::string& tenant, const v1::StreamStart& start,
                             std::vector<uint8_t>& out) = 0;
  // Every later message's chunk.
  virtual absl::Status Consume(Request& request, std::vector<uint8_t>& out) = 0;
  // The client's half-close.
  virtual absl::Status End(std::vector<uint8_t>& out) = 0;
  // Puts `size` bytes of output into a response.
  virtual void Fill(const uint8_t* data, size_t size, Response& response) = 0;
  virtual void WipeResponse(Response& response) = 0;
  // The call is about to fail with `status`.
  virtual void Failed(const absl::Status&) {}

  CryptoService* service_;

 private:
  absl::Status FirstMessage() {
    if (!request_.has_start()) {
      return absl::InvalidArgumentError("the first message must be `start`");
    }
    absl::StatusOr<CryptoService::Caller> caller = service_->Admit(
        *context_, request_.start().key(), request_.start().associated_data(),
        /*size=*/0, /*limit=*/0);
    if (!caller.ok()) return caller.status();
    begun_ = true;
    return Begin(std::move(caller->snapshot), caller->tenant, request_.start(), out_);
  }

  absl::Status NextMessage() {
    if (request_.has_start()) {
      return absl::InvalidArgumentError("`start` may only be the first message");
    }
    return Consume(request_, out_);
  }

  // Sends the next slice of out_; OnWriteDone sends the rest.
  void Send() {
    const size_t n = std::min(kMaxResponseChunk, out_.size() - sent_);
    Fill(out_.data() + sent_, n, response_);
    sent_ += n;
    this->StartWrite(&response_);
  }

  void Fail(const absl::Status& status) {
    outcome_ = status;
    // Before the client hears of it, so its next call sees the failure counted.
    Failed(status);
    this->Finish(ToGrpcStatus(status));
  }

  grpc::CallbackServerContext* context_;
  const char* method_;
  absl::Time started_;
  absl::Status outcome_;
  Request request_;
  Response response_;
  std::vector<uint8_t> out_;  // output not yet sent
  size_t sent_ = 0;           // how much of out_ has been sent
  bool begun_ = false;
  bool finishing_ = false;
  uint64_t watch_id_ = 0;
  std::string peer_;
};

class SealStreamCall final
    : public StreamCall<v1::SealStreamRequest, v1::SealStreamResponse> {
 public:
  SealStreamCall(CryptoService* service, grpc::CallbackServerContext* context)
      : StreamCall(service, context, "SealStream") {}

 private:
  absl::Status Begin(std::shared_ptr<const Snapshot> snapshot, const std::string& tenant,
                     const v1::StreamStart& start, std::vector<uint8_t>& out) override {
    absl::StatusOr<std::unique_ptr<crypto::StreamSealer>> sealer =
        service_->data_plane_.NewStreamSealer(*snapshot, tenant, start.key(),
                                              AsBytes(start.associated_data()),
                                              start.segment_size(), key_version_);
    if (!sealer.ok()) return sealer.status();
    sealer_ = *std::move(sealer);
    return sealer_->Update({}, out);  // the header, at once
  }

  absl::Status Consume(v1::SealStreamRequest& request,
                       std::vector<uint8_t>& out) override {
    service_->metrics_->AddBytesSealed(request.plaintext_chunk().size());
    absl::Status status = sealer_->Update(AsBytes(request.plaintext_chunk()), out);
    WipeString(request.mutable_plaintext_chunk());
    return status;
  }

  absl::Status End(std::vector<uint8_t>& out) override { return sealer_->Finish(out); }

  void Fill(const uint8_t* data, size_t size, v1::SealStreamResponse& response) override {
    response.set_ciphertext_chunk(reinterpret_cast<const char*>(data), size);
    response.set_key_version(key_version_);
  }

  void WipeResponse(v1::SealStreamResponse&) override {}  // ciphertext only

  std::unique_ptr<crypto::StreamSealer> sealer_;
  uint32_t key_version_ = 0;
};

// Plaintext leaves only as the opener releases it, segment by segment, after each
// tag verified.
class OpenStreamCall final
    : public StreamCall<v1::OpenStreamRequest, v1::OpenStreamResponse> {
 public:
  OpenStreamCall(CryptoService* service, grpc::CallbackServerContext* context)
      : StreamCall(service, context, "OpenStream") {}

 private:
  absl::Status Begin(std::shared_ptr<const Snapshot> snapshot, const std::string& tenant,
                     const v1::StreamStart& start, std::vector<uint8_t>&) override {
    absl::StatusOr<std::unique_ptr<crypto::StreamOpener>> opener =
        service_->data_plane_.NewStreamOpener(snapshot, tenant, start.key(),
                                              AsBytes(start.associated_data()));
    service_->CountOpenOutcome(opener.status(), tenant, start.key());
    if (!opener.ok()) return opener.status();
    opener_ = *std::move(opener);
    snapshot_ = std::move(snapshot);
    tenant_ = tenant;
    key_ = start.key();
    return absl::OkStatus();
  }

  void Failed(const absl::Status& outcome) override {
    if (opener_ == nullptr || !crypto::IsDecryptionFailure(outcome)) return;
    service_->CountOpenOutcome(outcome, tenant_, key_);
    service_->data_plane_.RecordStreamDecryptionFailure(*snapshot_, tenant_, key_);
  }

  absl::Status Consume(v1::OpenStreamRequest& request,
                       std::vector<uint8_t>& out) override {
    const std::string& chunk = request.ciphertext_chunk();
    if (!first_byte_checked_ && !chunk.empty()) {
      first_byte_checked_ = true;
      absl::Status s = CheckOpenStreamFormat(static_cast<uint8_t>(chunk[0]));
      if (!s.ok()) return s;
    }
    return opener_->Update(AsBytes(chunk), out);
  }

  absl::Status End(std::vector<uint8_t>& out) override { return opener_->Finish(out); }

  void Fill(const uint8_t* data, size_t size, v1::OpenStreamResponse& response) override {
    service_->metrics_->AddBytesOpened(size);
    response.set_plaintext_chunk(reinterpret_cast<const char*>(data), size);
    response.set_key_version(opener_->key_version());
  }

  void WipeResponse(v1::OpenStreamResponse& response) override {
    WipeString(response.mutable_plaintext_chunk());
  }

  std::unique_ptr<crypto::StreamOpener> opener_;
  bool first_byte_checked_ = false;
  // The caller's key, for counting a failure against it.
  std::shared_ptr<const Snapshot> snapshot_;
  std::string tenant_;
  std::string key_;
};

grpc::ServerBidiReactor<v1::SealStreamRequest, v1::SealStreamResponse>*
CryptoService::SealStream(grpc::CallbackServerContext* context) {
  return (new SealStreamCall(this, context))->Start();
}

grpc::ServerBidiReactor<v1::OpenStreamRequest, v1::OpenStreamResponse>*
CryptoService::OpenStream(grpc::CallbackServerContext* context) {
  return (new OpenStreamCall(this, context))->Start();
}

}  // namespace sealbox::server
