#include "server/process/malloc_tuning.h"

#include <malloc.h>

namespace sealbox::server {

void TuneMalloc() {
  // glibc gives each busy thread its own arena; gRPC's many threads then hold tens
  // of MiB of freed stream buffers each. Two arenas keep the server's memory flat
  // during long streams (docs/PERFORMANCE.md).
  mallopt(M_ARENA_MAX, 2);
  // By default a request's buffers (a 64 KiB message is parsed, sealed and
  // serialized into four or five of them) are trimmed back to the kernel as soon
  // as they are freed, so the next request faults the same pages in again and every
  // trim interrupts the other core to flush its TLB (in a profile of unary 64 KiB
  // Seal, the largest cost after the cipher: docs/PERFORMANCE.md). Keeping up to
  // kMallocKeepBytes at the
  // top of each of the three heaps (main and two arenas) bounds what stays resident
  // for reuse. Setting these fixes them: glibc's own sliding thresholds stop moving.
  mallopt(M_TRIM_THRESHOLD, static_cast<int>(kMallocKeepBytes));
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMallocKeepBytes));
}

}  // namespace sealbox::server
