// Startup settings of the server process: secrets out of core dumps (and a report on
// whether they are out of swap), and room for many connections.
#ifndef SEALBOX_SERVER_PROCESS_PROCESS_HARDENING_H_
#define SEALBOX_SERVER_PROCESS_PROCESS_HARDENING_H_

#include <cstdint>

namespace sealbox::server {

struct CoreDumpReport {
  bool rlimit_zero = false;   // RLIMIT_CORE set to 0 (soft and hard)
  bool not_dumpable = false;  // prctl(PR_SET_DUMPABLE, 0): no core, no ptrace attach
};

// Call first thing in main, before any secret is read.
CoreDumpReport DisableCoreDumps();

// Raises the open-file soft limit to the hard one, so many client connections do not
// run out of descriptors at a distribution's default of 1024.
void RaiseOpenFileLimit();

// Logs one "process_hardening" line: what DisableCoreDumps did, and whether the
// secret memory allocated so far (crypto/secret/locked_memory.h) is locked in RAM
// ("memory_lock":"ok"), or not ("unavailable", a warning naming RLIMIT_MEMLOCK).
void LogProcessHardening(const CoreDumpReport& core_dumps);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_PROCESS_HARDENING_H_
