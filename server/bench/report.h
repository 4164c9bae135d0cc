// The end of `tools/dev bench service`'s output: each target (issues 18 to 20), a
// ratio to a baseline of the same run, with its verdict; the server's peak RSS; and
// the summary line (summary.h) that tools/dev and later runs compare by.
#ifndef SEALBOX_SERVER_BENCH_REPORT_H_
#define SEALBOX_SERVER_BENCH_REPORT_H_

#include <optional>

#include "server/bench/figures.h"
#include "server/bench/summary.h"

namespace sealbox::load {

// What the tables measured.
struct RunFigures {
  UnaryRatios unary;
  std::optional<double> batch_gain;   // nullopt: no batch rows
  std::optional<double> audit_ratio;  // nullopt: no audit rows
  StreamFigures streams;
  int server_pid = 0;  // 0: the server's memory was not measured
};

// The summary line's figures: unary ratios are medians over the concurrencies run,
// stream ratios the medians over the rounds, each at its one message size.
server::bench::ServiceFigures SummaryFigures(const RunFigures& run);

// Prints the targets and the summary line.
void PrintReport(const RunFigures& run);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_REPORT_H_
