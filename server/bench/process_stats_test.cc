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
  // Spin until the kernel has charged this process more CPU (it counts in clock
  // ticks), not for a fixed time: on a busy machine 50 ms of wall time can be less
  // than one tick of CPU. Bounded: 10 s of wall time.
  const double before = ProcessCpuSeconds(getpid());
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  volatile uint64_t spin = 0;
  double after = before;
  while (after <= before && std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 1000000; ++i) spin = spin + 1;
    after = ProcessCpuSeconds(getpid());
  }
  EXPECT_GT(after, before);
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
