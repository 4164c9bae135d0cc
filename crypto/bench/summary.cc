#include "crypto/bench/summary.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sealbox::crypto::bench {

std::string CryptoSummaryLine(absl::string_view implementation, absl::string_view openssl,
                              const std::vector<MeasuredRatio>& ratios, size_t ratios_in_full_run) {
  std::string line = absl::StrCat("crypto: ", implementation, " vs ", openssl, ": min=");
  if (ratios.empty()) return absl::StrCat(line, "n/a (no row of both ran)");
  const MeasuredRatio* worst = &ratios[0];
  for (const MeasuredRatio& r : ratios) {
    if (r.ratio < worst->ratio) worst = &r;
  }
  absl::StrAppendFormat(&line, "%.2f at %s/%d/%d", worst->ratio, worst->op, worst->key_bits,
                        worst->message_bytes);
  if (ratios.size() < ratios_in_full_run) {
    absl::StrAppend(&line, " (", ratios.size(), " of ", ratios_in_full_run, " ratios ran)");
  }
  return line;
}

}  // namespace sealbox::crypto::bench
