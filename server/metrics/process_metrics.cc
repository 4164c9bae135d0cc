#include "server/metrics/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>

#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"
#include "server/metrics/single_value.h"

namespace sealbox::server {
namespace {

// /proc/self/stat fields we use, counted from the first after the ")" that ends the
// command name (which may itself hold spaces and parentheses): see proc(5).
struct Stat {
  double user_ticks = 0;      // field 14, utime
  double system_ticks = 0;    // field 15, stime
  double start_ticks = 0;     // field 22, starttime (since boot)
  double virtual_bytes = 0;   // field 23, vsize
  double resident_pages = 0;  // field 24, rss
};

bool ReadStat(Stat& stat) {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return false;
  std::istringstream fields(text.substr(paren + 1));
  std::string field;
  for (int number = 3; fields >> field; ++number) {
    if (number == 14) stat.user_ticks = std::stod(field);
    if (number == 15) stat.system_ticks = std::stod(field);
    if (number == 22) stat.start_ticks = std::stod(field);
    if (number == 23) stat.virtual_bytes = std::stod(field);
    if (number == 24) {
      stat.resident_pages = std::stod(field);
      return true;
    }
  }
  return false;
}

// The boot time, in seconds since the epoch ("btime" in /proc/stat), or 0.
double BootTime() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Open descriptors, not counting the one that lists them; -1 if /proc is missing.
int OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;
}

}  // namespace

ProcessMetrics::ProcessMetrics() {
  Stat stat;
  const double boot = BootTime();
  if (boot > 0 && ReadStat(stat)) {
    start_time_seconds_ = boot + stat.start_ticks / sysconf(_SC_CLK_TCK);
  }
}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> families;
  Stat stat;
  if (ReadStat(stat)) {
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    families.push_back(
        SingleValue("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                    MetricType::Counter, (stat.user_ticks + stat.system_ticks) / ticks));
    families.push_back(SingleValue("process_virtual_memory_bytes", "Virtual memory size in bytes.",
                                   MetricType::Gauge, stat.virtual_bytes));
    families.push_back(SingleValue("process_resident_memory_bytes",
                                   "Resident memory size in bytes.", MetricType::Gauge,
                                   stat.resident_pages * sysconf(_SC_PAGESIZE)));
  }
  if (const int open = OpenFds(); open >= 0) {
    families.push_back(SingleValue("process_open_fds", "Number of open file descriptors.",
                                   MetricType::Gauge, open));
  }
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    families.push_back(SingleValue("process_max_fds", "Maximum number of open file descriptors.",
                                   MetricType::Gauge, static_cast<double>(files.rlim_cur)));
  }
  if (start_time_seconds_ > 0) {
    families.push_back(SingleValue("process_start_time_seconds",
                                   "Start time of the process since unix epoch in seconds.",
                                   MetricType::Gauge, start_time_seconds_));
  }
  return families;
}

}  // namespace sealbox::server
