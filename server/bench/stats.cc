#include "server/bench/stats.h"

#include <algorithm>
#include <cmath>

namespace sealbox::server::bench {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 1.0) * (values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(rank));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - below) * (values[above] - values[below]);
}

}  // namespace sealbox::server::bench
