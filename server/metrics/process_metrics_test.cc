#include "server/metrics/process_metrics.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

// The value of `name`'s one unlabelled series, checking its type; NaN when missing.
double Single(const std::vector<MetricFamily>& families, const std::string& name, MetricType type) {
  for (const MetricFamily& family : families) {
    if (family.name != name) continue;
    EXPECT_EQ(family.type, type) << name;
    EXPECT_FALSE(family.help.empty()) << name;
    if (family.metric.size() != 1 || !family.metric[0].label.empty()) {
      ADD_FAILURE() << name << " is not one unlabelled series";
      return std::nan("");
    }
    return type == MetricType::Counter ? family.metric[0].counter.value
                                       : family.metric[0].gauge.value;
  }
  ADD_FAILURE() << name << " is not collected";
  return std::nan("");
}

TEST(ProcessMetrics, HasTheStandardNamesAndTypes) {
  const std::vector<MetricFamily> families = ProcessMetrics().Collect();
  // Linux with /proc and a finite descriptor limit: all six are there.
  EXPECT_EQ(families.size(), 6u);
  EXPECT_GE(Single(families, "process_cpu_seconds_total", MetricType::Counter), 0);
  const double resident = Single(families, "process_resident_memory_bytes", MetricType::Gauge);
  const double virtual_bytes = Single(families, "process_virtual_memory_bytes", MetricType::Gauge);
  EXPECT_GT(resident, 0);
  EXPECT_GE(virtual_bytes, resident);
  EXPECT_GT(Single(families, "process_open_fds", MetricType::Gauge), 0);
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  EXPECT_EQ(Single(families, "process_max_fds", MetricType::Gauge),
            static_cast<double>(files.rlim_cur));
}

TEST(ProcessMetrics, StartTimeIsThisProcesssStart) {
  const double start =
      Single(ProcessMetrics().Collect(), "process_start_time_seconds", MetricType::Gauge);
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  // Started before now, and recently (boot time is whole seconds; ticks are 10 ms).
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 600);
}

TEST(ProcessMetrics, OpenFdsCountsDescriptorsAtEachScrape) {
  const ProcessMetrics metrics;
  const double before = Single(metrics.Collect(), "process_open_fds", MetricType::Gauge);
  int fds[3];
  for (int& fd : fds) {
    fd = open("/dev/null", O_RDONLY);
    ASSERT_GE(fd, 0);
  }
  const double during = Single(metrics.Collect(), "process_open_fds", MetricType::Gauge);
  for (int fd : fds) close(fd);
  EXPECT_EQ(during, before + 3);
  EXPECT_EQ(Single(metrics.Collect(), "process_open_fds", MetricType::Gauge), before);
}

TEST(ProcessMetrics, CpuSecondsGrowWithWork) {
  const ProcessMetrics metrics;
  const double before = Single(metrics.Collect(), "process_cpu_seconds_total", MetricType::Counter);
  // Spin for 50 ms of CPU time; /proc counts in ticks of 10 ms, rounded down.
  const std::clock_t start = std::clock();
  volatile uint64_t sink = 0;
  while (std::clock() - start < CLOCKS_PER_SEC / 20) sink = sink + 1;
  const double after = Single(metrics.Collect(), "process_cpu_seconds_total", MetricType::Counter);
  EXPECT_GE(after - before, 0.03);
  EXPECT_LT(after - before, 5);
}

}  // namespace
}  // namespace sealbox::server
