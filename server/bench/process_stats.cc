#include "server/bench/process_stats.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace sealbox::load {
namespace {

// Resets VmHWM to the current RSS (Linux 4.0+); false where not allowed.
bool ResetPeakRss(int pid) {
  std::ofstream clear_refs(absl::StrCat("/proc/", pid, "/clear_refs"));
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

}  // namespace

int64_t ProcStatusKib(int pid, const char* field) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) != 0) continue;
    int64_t kib = 0;
    std::istringstream(line.substr(std::strlen(field))) >> kib;
    return kib;
  }
  return 0;
}

double ProcessCpuSeconds(int pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text;
  std::getline(stat, text);
  // Fields after the command name (which may hold spaces) in parentheses:
  // state(3) ... utime(14) stime(15).
  const size_t end = text.rfind(')');
  if (end == std::string::npos) return 0;
  std::istringstream fields(text.substr(end + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

RssMonitor::RssMonitor(int pid) : pid_(pid) {
  if (pid_ == 0) return;
  hwm_reset_ = ResetPeakRss(pid_);
  result_.before_kib = ProcStatusKib(pid_, "VmRSS:");
  result_.peak_kib = result_.before_kib;
  sampler_ = std::thread([this] {
    while (!done_.load()) {
      result_.peak_kib = std::max(result_.peak_kib, ProcStatusKib(pid_, "VmRSS:"));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
}

RssDuring RssMonitor::Stop() {
  if (pid_ == 0) return result_;
  done_ = true;
  sampler_.join();
  result_.after_kib = ProcStatusKib(pid_, "VmRSS:");
  result_.peak_kib = std::max(result_.peak_kib, result_.after_kib);
  if (hwm_reset_) result_.peak_kib = std::max(result_.peak_kib, ProcStatusKib(pid_, "VmHWM:"));
  return result_;
}

}  // namespace sealbox::load
