// A process's CPU time and memory, read from /proc/<pid>: how the load generator
// charges each call or stream to the server (and, for streams, to itself). Linux
// only; every reader answers 0 where /proc cannot be read, so a run without a
// --server_pid, or in a sandbox, still prints its rates.
#ifndef SEALBOX_SERVER_BENCH_PROCESS_STATS_H_
#define SEALBOX_SERVER_BENCH_PROCESS_STATS_H_

#include <atomic>
#include <cstdint>
#include <thread>

namespace sealbox::load {

// A "VmRSS:" style field of /proc/<pid>/status, in KiB; 0 when unreadable.
int64_t ProcStatusKib(int pid, const char* field);

// The CPU time the process has used (user and system, all threads), in seconds; 0
// when unreadable. Clock ticks, so 10 ms steps: fine over a stream of a second.
double ProcessCpuSeconds(int pid);

// A process's RSS over one measurement.
struct RssDuring {
  int64_t before_kib = 0;
  int64_t peak_kib = 0;
  int64_t after_kib = 0;
  int64_t growth_kib() const { return peak_kib - before_kib; }
};

// Follows a process's RSS while one measurement runs: VmHWM reset at the start
// where allowed, and VmRSS sampled every 5 ms in any case. Pid 0 measures nothing.
class RssMonitor {
 public:
  explicit RssMonitor(int pid);
  RssMonitor(const RssMonitor&) = delete;
  RssMonitor& operator=(const RssMonitor&) = delete;

  // Call once, before the monitor goes.
  RssDuring Stop();

 private:
  int pid_;
  bool hwm_reset_ = false;
  RssDuring result_;
  std::atomic<bool> done_{false};
  std::thread sampler_;
};

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_PROCESS_STATS_H_
