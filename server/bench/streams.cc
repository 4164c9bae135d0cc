#include "server/bench/streams.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/bench/load_common.h"
#include "server/bench/stream_reactors.h"

namespace sealbox::load {
namespace {

constexpr size_t kPatternBytes = 1 << 20;  // the stream plaintext repeats this much

std::string Repeated(const std::string& pattern, size_t size) {
  std::string out(size, '\0');
  for (size_t at = 0; at < size; at += pattern.size()) {
    std::memcpy(out.data() + at, pattern.data(), std::min(pattern.size(), size - at));
  }
  return out;
}

// Where a stream's responses go: appended to a buffer written before timing, so
// that no stream pays for first touches. Past its end bytes are counted, not kept.
class Sink {
 public:
  explicit Sink(std::string& buffer) : buffer_(buffer) {}

  void Keep(const std::string& bytes) {
    if (size_ + bytes.size() <= buffer_.size()) {
      std::memcpy(buffer_.data() + size_, bytes.data(), bytes.size());
    }
    size_ += bytes.size();
  }

  size_t size() const { return size_; }
  bool fits() const { return size_ <= buffer_.size(); }
  // Whether what was kept is exactly `expected`.
  bool Holds(std::string_view expected) const {
    return size_ == expected.size() && std::memcmp(buffer_.data(), expected.data(), size_) == 0;
  }

 private:
  std::string& buffer_;
  size_t size_ = 0;
};

// A measured stream whose bytes came back is wrong unless they are the plaintext.
absl::StatusOr<StreamResult> Checked(absl::StatusOr<StreamResult> result, const Sink& sink,
                                     const std::string& plaintext) {
  if (!result.ok() || sink.Holds(plaintext)) return result;
  return absl::InternalError(
      absl::StrCat("got back ", sink.size(), " of ", plaintext.size(), " bytes, or some wrong"));
}

}  // namespace

Streams::Streams(std::shared_ptr<grpc::Channel> channel, std::string token, int server_pid,
                 uint64_t stream_bytes)
    : crypto_(v1::Crypto::NewStub(channel)),
      echo_(bench::Echo::NewStub(channel)),
      token_(std::move(token)),
      server_pid_(server_pid),
      stream_bytes_(stream_bytes),
      plaintext_(Repeated(RandomBytes(kPatternBytes), stream_bytes)),
      // The ciphertext has a header and a 16-byte tag per segment (64 KiB or
      // larger); both buffers get some slack, so that a wrong size is seen whole.
      ciphertext_(stream_bytes + stream_bytes / 1024 + (1 << 20), '\0'),
      received_(stream_bytes + (1 << 20), '\0') {}

absl::StatusOr<StreamResult> Streams::Discard(size_t message_bytes) {
  return Measure([&] {
    uint64_t sent = 0;
    Push push([&](bench::EchoMessage& message) {
      if (sent == stream_bytes_) return false;
      const size_t n = std::min<uint64_t>(message_bytes, stream_bytes_ - sent);
      message.set_data(plaintext_.data() + sent, n);
      sent += n;
      return true;
    });
    bench::DiscardSummary summary;
    grpc::Status status = push.Run(*echo_, summary);
    if (!status.ok()) return absl::InternalError(status.error_message());
    if (static_cast<uint64_t>(summary.bytes()) != stream_bytes_) {
      return absl::InternalError(
          absl::StrCat("Discard received ", summary.bytes(), " of ", stream_bytes_, " bytes"));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<StreamResult> Streams::EchoStream(size_t message_bytes) {
  Sink sink(received_);
  absl::StatusOr<StreamResult> result = Measure([&] {
    uint64_t sent = 0;
    Pump<bench::EchoMessage, bench::EchoMessage> pump(
        [&](bench::EchoMessage& message) {
          if (sent == stream_bytes_) return false;
          const size_t n = std::min<uint64_t>(message_bytes, stream_bytes_ - sent);
          message.set_data(plaintext_.data() + sent, n);
          sent += n;
          return true;
        },
        [&](const bench::EchoMessage& message) { sink.Keep(message.data()); });
    Authorize(pump.context());  // as SealStream's and OpenStream's calls are
    grpc::Status status = pump.Run([&](grpc::ClientContext* context, auto* reactor) {
      echo_->async()->EchoStream(context, reactor);
    });
    return status.ok() ? absl::OkStatus() : absl::InternalError(status.error_message());
  });
  return Checked(std::move(result), sink, plaintext_);
}

absl::StatusOr<StreamResult> Streams::SealStream(size_t message_bytes) {
  Sink sink(ciphertext_);
  ciphertext_size_ = 0;
  absl::StatusOr<StreamResult> result = Measure([&] {
    uint64_t sent = 0;
    bool started = false;
    Pump<v1::SealStreamRequest, v1::SealStreamResponse> pump(
        [&](v1::SealStreamRequest& request) {
          if (!started) {
            started = true;
            request.mutable_start()->set_key(kKey);
            return true;
          }
          if (sent == stream_bytes_) return false;
          const size_t n = std::min<uint64_t>(message_bytes, stream_bytes_ - sent);
          request.set_plaintext_chunk(plaintext_.data() + sent, n);
          sent += n;
          return true;
        },
        [&](const v1::SealStreamResponse& response) { sink.Keep(response.ciphertext_chunk()); });
    Authorize(pump.context());
    grpc::Status status = pump.Run([&](grpc::ClientContext* context, auto* reactor) {
      crypto_->async()->SealStream(context, reactor);
    });
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat("SealStream failed: ", status.error_message()));
    }
    if (!sink.fits()) {
      return absl::InternalError("SealStream returned more ciphertext than expected");
    }
    return absl::OkStatus();
  });
  ciphertext_size_ = sink.size();
  return result;
}

absl::StatusOr<StreamResult> Streams::OpenStream(size_t message_bytes) {
  Sink sink(received_);
  absl::StatusOr<StreamResult> result = Measure([&] {
    size_t sent = 0;
    bool started = false;
    Pump<v1::OpenStreamRequest, v1::OpenStreamResponse> pump(
        [&](v1::OpenStreamRequest& request) {
          if (!started) {
            started = true;
            request.mutable_start()->set_key(kKey);
            return true;
          }
          if (sent == ciphertext_size_) return false;
          const size_t n = std::min(message_bytes, ciphertext_size_ - sent);
          request.set_ciphertext_chunk(ciphertext_.data() + sent, n);
          sent += n;
          return true;
        },
        [&](const v1::OpenStreamResponse& response) { sink.Keep(response.plaintext_chunk()); });
    Authorize(pump.context());
    grpc::Status status = pump.Run([&](grpc::ClientContext* context, auto* reactor) {
      crypto_->async()->OpenStream(context, reactor);
    });
    return status.ok() ? absl::OkStatus() : absl::InternalError(status.error_message());
  });
  return Checked(std::move(result), sink, plaintext_);
}

void Streams::Authorize(grpc::ClientContext& context) const {
  context.AddMetadata("authorization", "Bearer " + token_);
}

absl::StatusOr<StreamResult> Streams::Measure(const std::function<absl::Status()>& run) {
  RssMonitor rss(server_pid_);
  const double cpu_before = server_pid_ ? ProcessCpuSeconds(server_pid_) : 0;
  const double client_cpu_before = ProcessCpuSeconds(getpid());
  const Clock::time_point start = Clock::now();
  absl::Status status = run();
  const double seconds = Seconds(Clock::now() - start);
  StreamResult result;
  result.rss = rss.Stop();
  if (!status.ok()) return status;
  result.mb_per_second = stream_bytes_ / seconds / 1e6;
  const double mib = static_cast<double>(stream_bytes_) / (1 << 20);
  result.client_cpu_us_per_mib = (ProcessCpuSeconds(getpid()) - client_cpu_before) * 1e6 / mib;
  if (server_pid_ != 0) {
    result.server_cpu_us_per_mib = (ProcessCpuSeconds(server_pid_) - cpu_before) * 1e6 / mib;
  }
  return result;
}

}  // namespace sealbox::load
