#include "server/process/process_hardening.h"

#include <sys/prctl.h>
#include <sys/resource.h>

#include "crypto/secret/locked_memory.h"
#include "server/log.h"

namespace sealbox::server {

CoreDumpReport DisableCoreDumps() {
  CoreDumpReport report;
  const struct rlimit none = {0, 0};
  report.rlimit_zero = setrlimit(RLIMIT_CORE, &none) == 0;
  report.not_dumpable = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
  return report;
}

void RaiseOpenFileLimit() {
  struct rlimit files;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

void LogProcessHardening(const CoreDumpReport& core_dumps) {
  const crypto::SecretMemoryStats memory = crypto::LockedMemoryStats();
  const bool locked = memory.unlocked_bytes == 0 && memory.locked_bytes > 0;
  struct rlimit memlock = {0, 0};
  getrlimit(RLIMIT_MEMLOCK, &memlock);
  Log line("process_hardening", locked ? "info" : "warning");
  line.Add("core_dumps",
           core_dumps.rlimit_zero && core_dumps.not_dumpable ? "disabled" : "not fully disabled")
      .Add("rlimit_core_zero", core_dumps.rlimit_zero)
      .Add("dumpable", !core_dumps.not_dumpable)
      .Add("memory_lock", locked ? "ok" : "unavailable")
      .Add("secret_bytes_locked", static_cast<int64_t>(memory.locked_bytes))
      .Add("secret_bytes_unlocked", static_cast<int64_t>(memory.unlocked_bytes))
      .Add("rlimit_memlock", memlock.rlim_cur == RLIM_INFINITY
                                 ? int64_t{-1}
                                 : static_cast<int64_t>(memlock.rlim_cur));
  if (!locked) {
    line.Add("detail",
             "key material may be swapped out: raise RLIMIT_MEMLOCK (ulimit -l, "
             "LimitMEMLOCK=) or grant CAP_IPC_LOCK; it is still kept out of core dumps");
  }
}

}  // namespace sealbox::server
