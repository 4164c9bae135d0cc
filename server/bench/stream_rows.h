// The stream table of `tools/dev bench service`: for each message size, rounds of
// Discard, EchoStream, SealStream and OpenStream (streams.h), a row per round and a
// row of each column's median, with the ratios the report judges.
#ifndef SEALBOX_SERVER_BENCH_STREAM_ROWS_H_
#define SEALBOX_SERVER_BENCH_STREAM_ROWS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "server/bench/options.h"

namespace sealbox::load {

struct StreamFigures {
  // SealStream/EchoStream MB/s, the median over the rounds, by message size.
  std::map<int64_t, double> seal_ratios;
  // The lowest of the message sizes' medians; nullopt until a stream has run.
  std::optional<double> worst_seal_ratio;
  std::optional<double> worst_open_ratio;  // OpenStream/EchoStream
  // The most the server's RSS grew within one EchoStream, SealStream or OpenStream.
  int64_t worst_growth_kib = 0;
  // The server's VmHWM over the whole run, carried by hand since each stream resets
  // it; 0 without --server_pid.
  int64_t peak_rss_kib = 0;
};

// Prints the table, a row as each round ends; no rows when --stream_bytes is 0.
// Errors name the stream that failed.
absl::StatusOr<StreamFigures> RunStreamRows(const Options& options,
                                            const std::shared_ptr<grpc::Channel>& channel,
                                            const std::string& token);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_STREAM_ROWS_H_
