// The last line of a crypto benchmark run, one figure that runs can be compared by:
//
//   crypto: x86_vaes_avx512 vs openssl-3.5: min=0.89 at Open/128/16384
//
// the worst sealbox / OpenSSL ratio of one implementation, Seal or Open, over every
// key and message size that ran.
#ifndef SEALBOX_CRYPTO_BENCH_SUMMARY_H_
#define SEALBOX_CRYPTO_BENCH_SUMMARY_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace sealbox::crypto::bench {

// sealbox / OpenSSL for one operation ("Seal" or "Open"), key size and message size.
struct MeasuredRatio {
  std::string op;
  int key_bits = 0;
  size_t message_bytes = 0;
  double ratio = 0;
};

// "crypto: <implementation> vs <openssl>: min=<ratio> at <op>/<bits>/<bytes>" for the
// lowest of `ratios` (the first of equals), "min=n/a" when there are none. A run
// narrowed by --benchmark_filter is not comparable with a full one, so when fewer than
// `ratios_in_full_run` ran the line ends with how many did.
std::string CryptoSummaryLine(absl::string_view implementation, absl::string_view openssl,
                              const std::vector<MeasuredRatio>& ratios, size_t ratios_in_full_run);

}  // namespace sealbox::crypto::bench

#endif  // SEALBOX_CRYPTO_BENCH_SUMMARY_H_
