#include "server/crypto/crypto_streams.h"

#include <string>
#include <utility>

#include "crypto/aes_gcm.h"
#include "crypto/secret/secure_wipe.h"
#include "server/crypto/bytes.h"
#include "server/crypto/call_outcome.h"

namespace sealbox::server {
namespace {

class SealStreamHandler final
    : public StreamHandler<v1::SealStreamRequest, v1::SealStreamResponse> {
 public:
  SealStreamHandler(CryptoEngine& engine, Metrics& metrics)
      : engine_(engine), metrics_(metrics) {}

  absl::Status Begin(Caller caller, const v1::StreamStart& start,
                     std::string& out) override {
    absl::StatusOr<std::unique_ptr<crypto::StreamSealer>> sealer =
        engine_.NewStreamSealer(*caller.snapshot, caller.tenant, start.key(),
                                AsBytes(start.associated_data()), start.segment_size(),
                                key_version_);
    if (!sealer.ok()) return sealer.status();
    sealer_ = *std::move(sealer);
    return sealer_->Update({}, out);  // the header, at once
  }

  absl::Status Consume(v1::SealStreamRequest& request, std::string& out) override {
    metrics_.AddBytesSealed(request.plaintext_chunk().size());
    absl::Status status = sealer_->Update(AsBytes(request.plaintext_chunk()), out);
    WipeString(request.mutable_plaintext_chunk());
    return status;
  }

  absl::Status End(std::string& out) override { return sealer_->Finish(out); }

  std::string& Payload(v1::SealStreamResponse& response) override {
    return *response.mutable_ciphertext_chunk();
  }

  void Stamp(v1::SealStreamResponse& response) override {
    response.set_key_version(key_version_);
  }

  bool OutputIsSecret() const override { return false; }  // ciphertext only
  void Sent(v1::SealStreamResponse&) override {}

 private:
  CryptoEngine& engine_;
  Metrics& metrics_;
  std::unique_ptr<crypto::StreamSealer> sealer_;
  uint32_t key_version_ = 0;
};

class OpenStreamHandler final
    : public StreamHandler<v1::OpenStreamRequest, v1::OpenStreamResponse> {
 public:
  OpenStreamHandler(CryptoEngine& engine, Metrics& metrics)
      : engine_(engine), metrics_(metrics) {}

  absl::Status Begin(Caller caller, const v1::StreamStart& start,
                     std::string&) override {
    absl::StatusOr<std::unique_ptr<crypto::StreamOpener>> opener = engine_.NewStreamOpener(
        caller.snapshot, caller.tenant, start.key(), AsBytes(start.associated_data()));
    CountOpenOutcome(opener.status(), caller.tenant, start.key(), metrics_);
    if (!opener.ok()) return opener.status();
    opener_ = *std::move(opener);
    caller_ = std::move(caller);
    key_ = start.key();
    return absl::OkStatus();
  }

  absl::Status Consume(v1::OpenStreamRequest& request, std::string& out) override {
    const std::string& chunk = request.ciphertext_chunk();
    if (!first_byte_checked_ && !chunk.empty()) {
      first_byte_checked_ = true;
      absl::Status s = CheckOpenStreamFormat(static_cast<uint8_t>(chunk[0]));
      if (!s.ok()) return s;
    }
    return opener_->Update(AsBytes(chunk), out);
  }

  absl::Status End(std::string& out) override { return opener_->Finish(out); }

  std::string& Payload(v1::OpenStreamResponse& response) override {
    return *response.mutable_plaintext_chunk();
  }

  void Stamp(v1::OpenStreamResponse& response) override {
    metrics_.AddBytesOpened(response.plaintext_chunk().size());
    response.set_key_version(opener_->key_version());
  }

  bool OutputIsSecret() const override { return true; }
  void Sent(v1::OpenStreamResponse& response) override {
    WipeString(response.mutable_plaintext_chunk());
  }

  void Failed(const absl::Status& outcome) override {
    if (opener_ == nullptr || !crypto::IsDecryptionFailure(outcome)) return;
    CountOpenOutcome(outcome, caller_.tenant, key_, metrics_);
    engine_.RecordStreamDecryptionFailure(*caller_.snapshot, caller_.tenant, key_);
  }

 private:
  CryptoEngine& engine_;
  Metrics& metrics_;
  std::unique_ptr<crypto::StreamOpener> opener_;
  bool first_byte_checked_ = false;
  // The caller and their key, for counting a failure against it.
  Caller caller_;
  std::string key_;
};

}  // namespace

std::unique_ptr<StreamHandler<v1::SealStreamRequest, v1::SealStreamResponse>>
NewSealStreamHandler(CryptoEngine& engine, Metrics& metrics) {
  return std::make_unique<SealStreamHandler>(engine, metrics);
}

std::unique_ptr<StreamHandler<v1::OpenStreamRequest, v1::OpenStreamResponse>>
NewOpenStreamHandler(CryptoEngine& engine, Metrics& metrics) {
  return std::make_unique<OpenStreamHandler>(engine, metrics);
}

}  // namespace sealbox::server
