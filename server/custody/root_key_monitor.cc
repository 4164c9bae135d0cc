#include "server/custody/root_key_monitor.h"

#include <utility>

namespace sealbox::server::custody {

RootKeyMonitor::RootKeyMonitor(RootKey* root_key, absl::Duration interval, OnChange on_change)
    : root_key_(root_key), interval_(interval), on_change_(std::move(on_change)) {
  thread_ = std::thread([this] { Run(); });
}

RootKeyMonitor::~RootKeyMonitor() {
  stop_.Notify();
  thread_.join();
}

void RootKeyMonitor::Run() {
  bool usable = true;
  while (!stop_.WaitForNotificationWithTimeout(interval_)) {
    absl::Status now = root_key_->Check();
    if (now.ok() == usable) continue;
    usable = now.ok();
    on_change_(now);
  }
}

}  // namespace sealbox::server::custody
