// What the service-layer benchmarks report: medians and percentiles of their
// samples, all computed one way.
#ifndef SEALBOX_SERVER_BENCH_STATS_H_
#define SEALBOX_SERVER_BENCH_STATS_H_

#include <utility>
#include <vector>

namespace sealbox::server::bench {

// The value at fraction `p` (0 to 1) of `values`, interpolated linearly between the
// two nearest ranks, so 0.5 is the median; 0 for no values.
double Percentile(std::vector<double> values, double p);

inline double Median(std::vector<double> values) { return Percentile(std::move(values), 0.5); }

}  // namespace sealbox::server::bench

#endif  // SEALBOX_SERVER_BENCH_STATS_H_
