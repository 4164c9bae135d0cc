#include "server/bench/process_stats.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "gtest/gtest.h"

namespace sealbox::load {
namespace {

constexpr int kNoSuchPid = 0x7ffffff0;  // above any pid_max

TEST(ProcStatusKibTest, ReadsThisProcessAndZeroForWhatIsMissing) {
  EXPECT_GT(ProcStatusKib(getpid(), "VmRSS:"), 0);
  EXPECT_EQ(ProcStatusKib(getpid(), "NoSuchField:"), 0);
  EXPECT_EQ(ProcStatusKib(kNoSuchPid, "VmRSS:"), 0);
}

TEST(ProcessCpuSecondsTest, CountsThisProcessesWorkAndZeroForNoProcess) {
  const double before = ProcessCpuSeconds(getpid());
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  volatile uint64_t spin = 0;
  while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  EXPECT_GT(ProcessCpuSeconds(getpid()), before);
  EXPECT_EQ(ProcessCpuSeconds(kNoSuchPid), 0);
}

TEST(RssMonitorTest, PidZeroMeasuresNothing) {
  RssMonitor monitor(0);
  const RssDuring rss = monitor.Stop();
  EXPECT_EQ(rss.before_kib, 0);
  EXPECT_EQ(rss.peak_kib, 0);
  EXPECT_EQ(rss.growth_kib(), 0);
}

TEST(RssMonitorTest, SeesMemoryTouchedAndFreedWhileItRuns) {
  constexpr size_t kBytes = 64 << 20;
  RssMonitor monitor(getpid());
  {
    std::unique_ptr<char[]> block(new char[kBytes]);
    std::memset(block.get(), 1, kBytes);
    // Long enough for the sampler where VmHWM cannot be reset.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const RssDuring rss = monitor.Stop();
  EXPECT_GT(rss.before_kib, 0);
  EXPECT_GE(rss.growth_kib(), 32 << 10);
}

}  // namespace
}  // namespace sealbox::load
