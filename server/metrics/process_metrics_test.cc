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
#include "server/metrics/collected_value.h"

namespace sealbox::server {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

TEST(ProcessMetrics, HasTheStandardNamesAndTypes) {
  const std::vector<MetricFamily> families = ProcessMetrics().Collect();
  // Linux with /proc and a finite descriptor limit: all six are there.
  EXPECT_EQ(families.size(), 6u);
  EXPECT_GE(CollectedValue(families, "process_cpu_seconds_total", MetricType::Counter), 0);
  const double resident =
      CollectedValue(families, "process_resident_memory_bytes", MetricType::Gauge);
  const double virtual_bytes =
      CollectedValue(families, "process_virtual_memory_bytes", MetricType::Gauge);
  EXPECT_GT(resident, 0);
  EXPECT_GE(virtual_bytes, resident);
  EXPECT_GT(CollectedValue(families, "process_open_fds", MetricType::Gauge), 0);
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  EXPECT_EQ(CollectedValue(families, "process_max_fds", MetricType::Gauge),
            static_cast<double>(files.rlim_cur));
}

TEST(ProcessMetrics, StartTimeIsThisProcesssStart) {
  const double start =
      CollectedValue(ProcessMetrics().Collect(), "process_start_time_seconds", MetricType::Gauge);
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  // Started before now, and recently (boot time is whole seconds; ticks are 10 ms).
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 600);
}

TEST(ProcessMetrics, OpenFdsCountsDescriptorsAtEachScrape) {
  const ProcessMetrics metrics;
  const double before = CollectedValue(metrics.Collect(), "process_open_fds", MetricType::Gauge);
  int fds[3];
  for (int& fd : fds) {
    fd = open("/dev/null", O_RDONLY);
    ASSERT_GE(fd, 0);
  }
  const double during = CollectedValue(metrics.Collect(), "process_open_fds", MetricType::Gauge);
  for (int fd : fds) close(fd);
  EXPECT_EQ(during, before + 3);
  EXPECT_EQ(CollectedValue(metrics.Collect(), "process_open_fds", MetricType::Gauge), before);
}

TEST(ProcessMetrics, CpuSecondsGrowWithWork) {
  const ProcessMetrics metrics;
  const double before =
      CollectedValue(metrics.Collect(), "process_cpu_seconds_total", MetricType::Counter);
  // Spin for 50 ms of CPU time; /proc counts in ticks of 10 ms, rounded down.
  const std::clock_t start = std::clock();
  volatile uint64_t sink = 0;
  while (std::clock() - start < CLOCKS_PER_SEC / 20) sink = sink + 1;
  const double after =
      CollectedValue(metrics.Collect(), "process_cpu_seconds_total", MetricType::Counter);
  EXPECT_GE(after - before, 0.03);
  EXPECT_LT(after - before, 5);
}

}  // namespace
}  // namespace sealbox::server
