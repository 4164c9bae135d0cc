#include "server/bench/report.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <vector>

#include "absl/strings/str_format.h"
#include "server/bench/stats.h"

namespace sealbox::load {
namespace {

const char* Verdict(bool met) { return met ? "met" : "NOT met"; }

// The median over the concurrencies run of one unary size's ratios to Echo.
std::optional<double> MedianRatio(const std::map<int64_t, std::vector<double>>& by_size,
                                  int64_t size) {
  auto it = by_size.find(size);
  if (it == by_size.end()) return std::nullopt;
  return server::bench::Median(it->second);
}

std::optional<double> RatioAt(const std::map<int64_t, double>& by_size, int64_t size) {
  auto it = by_size.find(size);
  if (it == by_size.end()) return std::nullopt;
  return it->second;
}

void PrintTarget(const char* what, std::optional<double> ratio, double at_least) {
  std::printf("  %-40s %-12s %s\n", what, ratio ? absl::StrFormat("%.2f", *ratio).c_str() : "-",
              ratio ? Verdict(*ratio >= at_least) : "not measured");
}

// Issue 18's targets, each a ratio to the Echo baseline of the same run, and those
// of issues 19 and 20 where their rows ran.
void PrintTargets(const RunFigures& run, const server::bench::ServiceFigures& figures) {
  std::printf(
      "\nTargets (unary: medians over the concurrencies run; streams: the lower of the "
      "message sizes' medians over the rounds)\n");
  PrintTarget("unary Seal 1 KiB >= 0.95 of Echo:", figures.unary_1k_seal, 0.95);
  PrintTarget("unary Open 1 KiB >= 0.95 of Echo:", figures.unary_1k_open, 0.95);
  PrintTarget("unary Seal 64 KiB >= 0.90 of Echo:", figures.unary_64k_seal, 0.90);
  if (run.batch_gain) {
    std::printf("  %-40s %-12s %s\n", "SealBatch items/s >= 5x unary Seal's:",
                absl::StrFormat("%.1fx", *run.batch_gain).c_str(), Verdict(*run.batch_gain >= 5));
  }
  if (run.audit_ratio) {
    PrintTarget("unary Seal 1 KiB, audit on >= 0.95 of off:", run.audit_ratio, 0.95);
  }
  PrintTarget("SealStream >= 0.95 of EchoStream:", run.streams.worst_seal_ratio, 0.95);
  PrintTarget("OpenStream >= 0.95 of EchoStream:", run.streams.worst_open_ratio, 0.95);
  if (figures.rss_growth_mib) {
    std::printf("  %-40s %-12s %s\n", "server RSS growth in a stream < 16 MiB:",
                absl::StrFormat("%.1f MiB", *figures.rss_growth_mib).c_str(),
                Verdict(*figures.rss_growth_mib < 16));
  }
  if (run.server_pid != 0) {
    std::printf("  server peak RSS (VmHWM) over the run:    %.1f MiB\n",
                run.streams.peak_rss_kib / 1024.0);
  } else {
    std::printf("  server RSS: not measured (give --server_pid)\n");
  }
}

}  // namespace

server::bench::ServiceFigures SummaryFigures(const RunFigures& run) {
  server::bench::ServiceFigures figures;
  figures.unary_1k_seal = MedianRatio(run.unary.seal, 1024);
  figures.unary_64k_seal = MedianRatio(run.unary.seal, 65536);
  figures.stream_64k_seal = RatioAt(run.streams.seal_ratios, 65536);
  figures.stream_1m_seal = RatioAt(run.streams.seal_ratios, 1 << 20);
  figures.unary_1k_open = MedianRatio(run.unary.open, 1024);
  if (run.server_pid != 0 && !run.streams.seal_ratios.empty()) {
    figures.rss_growth_mib = run.streams.worst_growth_kib / 1024.0;
  }
  return figures;
}

void PrintReport(const RunFigures& run) {
  const server::bench::ServiceFigures figures = SummaryFigures(run);
  PrintTargets(run, figures);
  std::printf("\n%s\n", server::bench::ServiceSummaryLine(figures).c_str());
}

}  // namespace sealbox::load
