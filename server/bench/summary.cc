#include "server/bench/summary.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sealbox::server::bench {
namespace {

constexpr char kNotMeasured[] = "n/a";

std::string Ratio(const std::optional<double>& ratio) {
  return ratio ? absl::StrFormat("%.2f", *ratio) : kNotMeasured;
}

std::string Mib(const std::optional<double>& mib) {
  return mib ? absl::StrFormat("%.1f", *mib) : kNotMeasured;
}

}  // namespace

std::string ServiceSummaryLine(const ServiceFigures& figures) {
  return absl::StrCat(
      "service: unary1k=", Ratio(figures.unary_1k_seal),
      " unary64k=", Ratio(figures.unary_64k_seal), " stream64k=", Ratio(figures.stream_64k_seal),
      " stream1m=", Ratio(figures.stream_1m_seal), " open1k=", Ratio(figures.unary_1k_open),
      " rss_growth_mib=", Mib(figures.rss_growth_mib));
}

}  // namespace sealbox::server::bench
