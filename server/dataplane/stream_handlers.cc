#include "server/dataplane/stream_handlers.h"

#include <string>
#include <utility>

#include "crypto/aes_gcm.h"
#include "server/engine/open_outcome.h"
#include "server/rpc/bytes.h"

namespace sealbox::server {
namespace {

class SealStreamHandler final : public StreamHandler {
 public:
  SealStreamHandler(DataPlaneEngine& engine, Metrics& metrics)
      : engine_(engine), metrics_(metrics) {}

  Operation operation() const override { return Operation::kSeal; }

  absl::Status Begin(Caller caller, const v1::StreamStart& start,
                     crypto::OutputBytes& out) override {
    absl::StatusOr<std::unique_ptr<crypto::StreamSealer>> sealer = engine_.NewStreamSealer(
        CallKey{caller.snapshot, caller.tenant, start.key()}, AsBytes(start.associated_data()),
        start.segment_size(), key_version_);
    if (!sealer.ok()) return sealer.status();
    sealer_ = *std::move(sealer);
    return sealer_->Update({}, out);  // the header, at once
  }

  absl::Status Consume(absl::Span<const uint8_t> piece, crypto::OutputBytes& out) override {
    metrics_.AddBytesSealed(piece.size());
    return sealer_->Update(piece, out);
  }

  absl::Status End(crypto::OutputBytes& out) override { return sealer_->Finish(out); }

  uint32_t key_version() const override { return key_version_; }
  bool OutputIsSecret() const override { return false; }  // ciphertext only

 private:
  DataPlaneEngine& engine_;
  Metrics& metrics_;
  std::unique_ptr<crypto::StreamSealer> sealer_;
  uint32_t key_version_ = 0;
};

class OpenStreamHandler final : public StreamHandler {
 public:
  OpenStreamHandler(DataPlaneEngine& engine, Metrics& metrics)
      : engine_(engine), metrics_(metrics) {}

  Operation operation() const override { return Operation::kOpen; }

  absl::Status Begin(Caller caller, const v1::StreamStart& start, crypto::OutputBytes&) override {
    absl::StatusOr<std::unique_ptr<crypto::StreamOpener>> opener = engine_.NewStreamOpener(
        CallKey{caller.snapshot, caller.tenant, start.key()}, AsBytes(start.associated_data()));
    CountOpenOutcome(opener.status(), caller.tenant, start.key(), metrics_);
    if (!opener.ok()) return opener.status();
    opener_ = *std::move(opener);
    caller_ = std::move(caller);
    key_ = start.key();
    return absl::OkStatus();
  }

  absl::Status Consume(absl::Span<const uint8_t> piece, crypto::OutputBytes& out) override {
    if (!first_byte_checked_ && !piece.empty()) {
      first_byte_checked_ = true;
      absl::Status s = CheckOpenStreamFormat(piece[0]);
      if (!s.ok()) return s;
    }
    return opener_->Update(piece, out);
  }

  absl::Status End(crypto::OutputBytes& out) override { return opener_->Finish(out); }

  uint32_t key_version() const override {
    return opener_ != nullptr ? opener_->key_version() : 0;  // none before Begin
  }
  bool OutputIsSecret() const override { return true; }  // plaintext
  void Sending(size_t bytes) override { metrics_.AddBytesOpened(bytes); }

  void Failed(const absl::Status& outcome) override {
    if (opener_ == nullptr || !crypto::IsDecryptionFailure(outcome)) return;
    CountOpenOutcome(outcome, caller_.tenant, key_, metrics_);
    engine_.RecordStreamDecryptionFailure(CallKey{caller_.snapshot, caller_.tenant, key_});
  }

 private:
  DataPlaneEngine& engine_;
  Metrics& metrics_;
  std::unique_ptr<crypto::StreamOpener> opener_;
  bool first_byte_checked_ = false;
  // The caller and their key, for counting a failure against it.
  Caller caller_;
  std::string key_;
};

}  // namespace

std::unique_ptr<StreamHandler> NewSealStreamHandler(DataPlaneEngine& engine, Metrics& metrics) {
  return std::make_unique<SealStreamHandler>(engine, metrics);
}

std::unique_ptr<StreamHandler> NewOpenStreamHandler(DataPlaneEngine& engine, Metrics& metrics) {
  return std::make_unique<OpenStreamHandler>(engine, metrics);
}

}  // namespace sealbox::server
