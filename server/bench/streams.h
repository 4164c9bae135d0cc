// The four streams `tools/dev bench service` times against one another: Discard
// (bytes one way, the transport's own rate), EchoStream (the baseline), SealStream
// and OpenStream, each moving --stream_bytes and measured alike: MB/s, the CPU time
// per MiB of the server and of this client, and the server's RSS in the stream.
#ifndef SEALBOX_SERVER_BENCH_STREAMS_H_
#define SEALBOX_SERVER_BENCH_STREAMS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "sealbox/bench/echo.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/bench/process_stats.h"

namespace sealbox::load {

struct StreamResult {
  double mb_per_second = 0;
  double server_cpu_us_per_mib = 0;  // the server's CPU time per MiB of data
  double client_cpu_us_per_mib = 0;  // this process's
  RssDuring rss;
};

// Every stream's client does the same work per byte, as a client moving a large
// object would: it sends each message from a buffer the size of the stream, and
// copies each response into another. Checks (Echo's and Open's bytes are the
// plaintext again) run after the clock stops. At 1 MiB messages the one client core
// is the busier side, so uneven client work (SealStream keeping its ciphertext while
// EchoStream only compared with a cached pattern) showed up in the ratios.
class Streams {
 public:
  // Allocates and fills the buffers (about three times `stream_bytes`) up front, so
  // that no stream pays for first touches.
  Streams(std::shared_ptr<grpc::Channel> channel, std::string token, int server_pid,
          uint64_t stream_bytes);

  // The transport's one-way rate: messages out, nothing back.
  absl::StatusOr<StreamResult> Discard(size_t message_bytes);

  absl::StatusOr<StreamResult> EchoStream(size_t message_bytes);

  // Keeps the ciphertext for OpenStream.
  absl::StatusOr<StreamResult> SealStream(size_t message_bytes);

  // Opens the ciphertext of the last SealStream.
  absl::StatusOr<StreamResult> OpenStream(size_t message_bytes);

 private:
  void Authorize(grpc::ClientContext& context) const;

  // Times `run`, with the server's RSS and both processes' CPU time around it.
  absl::StatusOr<StreamResult> Measure(const std::function<absl::Status()>& run);

  std::unique_ptr<v1::Crypto::Stub> crypto_;
  std::unique_ptr<bench::Echo::Stub> echo_;
  std::string token_;
  int server_pid_;
  uint64_t stream_bytes_;
  const std::string plaintext_;  // what every stream sends (Open: sealed)
  std::string ciphertext_;       // of the last SealStream: its first
  size_t ciphertext_size_ = 0;   // ciphertext_size_ bytes
  std::string received_;         // EchoStream's and OpenStream's responses
};

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_STREAMS_H_
