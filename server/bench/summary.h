// The last line of `tools/dev bench service`, the figures that runs are compared by:
//
//   service: unary1k=0.90 unary64k=0.60 stream64k=0.71 stream1m=0.80 open1k=0.94
//            rss_growth_mib=36.5          (one line)
#ifndef SEALBOX_SERVER_BENCH_SUMMARY_H_
#define SEALBOX_SERVER_BENCH_SUMMARY_H_

#include <optional>
#include <string>

namespace sealbox::server::bench {

// Each a ratio to Echo in the same run, or nullopt where its scenario did not run.
struct ServiceFigures {
  std::optional<double> unary_1k_seal;    // Seal/Echo requests per second, 1 KiB
  std::optional<double> unary_64k_seal;   // the same at 64 KiB
  std::optional<double> stream_64k_seal;  // SealStream/EchoStream MB/s, 64 KiB messages
  std::optional<double> stream_1m_seal;   // the same with 1 MiB messages
  std::optional<double> unary_1k_open;    // Open/Echo requests per second, 1 KiB
  // The most the server's RSS grew within one stream; nullopt when not measured.
  std::optional<double> rss_growth_mib;
};

// "service: unary1k=... unary64k=... stream64k=... stream1m=... open1k=...
// rss_growth_mib=...", ratios to two decimals, MiB to one, "n/a" for what is missing.
std::string ServiceSummaryLine(const ServiceFigures& figures);

}  // namespace sealbox::server::bench

#endif  // SEALBOX_SERVER_BENCH_SUMMARY_H_
