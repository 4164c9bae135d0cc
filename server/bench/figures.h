// What the tables of `tools/dev bench service` measured, as the report reads it: apart
// from the tables themselves, so that the report (and its test) need no load generator.
#ifndef SEALBOX_SERVER_BENCH_FIGURES_H_
#define SEALBOX_SERVER_BENCH_FIGURES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace sealbox::load {

// Seal/Echo and Open/Echo requests/s of each message size, one per concurrency:
// what the report's targets and summary line are taken from (unary_rows.h).
struct UnaryRatios {
  std::map<int64_t, std::vector<double>> seal;
  std::map<int64_t, std::vector<double>> open;
};

// The stream table's figures (stream_rows.h).
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

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_FIGURES_H_
