// Watches a root key while the server runs: Check() every interval, and a call to
// `on_change` whenever the answer changes. The server keeps serving when the root key
// goes away (its KEK is already in memory); what it cannot do without it, it says.
#ifndef SEALBOX_SERVER_CUSTODY_ROOT_KEY_MONITOR_H_
#define SEALBOX_SERVER_CUSTODY_ROOT_KEY_MONITOR_H_

#include <functional>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/custody/root_key.h"

namespace sealbox::server::custody {

class RootKeyMonitor {
 public:
  // Called from the monitor's thread with each new answer: OK once the key is
  // usable again, UNAVAILABLE (why) once it is not.
  using OnChange = std::function<void(const absl::Status&)>;

  // Starts checking `root_key` (which must outlive the monitor) every `interval`.
  // The key was usable when this starts.
  RootKeyMonitor(RootKey* root_key, absl::Duration interval, OnChange on_change);
  ~RootKeyMonitor();

  RootKeyMonitor(const RootKeyMonitor&) = delete;
  RootKeyMonitor& operator=(const RootKeyMonitor&) = delete;

 private:
  void Run();

  RootKey* const root_key_;
  const absl::Duration interval_;
  const OnChange on_change_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_ROOT_KEY_MONITOR_H_
