// How the server asks glibc's malloc to behave: few arenas, and freed request
// buffers kept for the next request instead of handed back to the kernel at once.
#ifndef SEALBOX_SERVER_PROCESS_MALLOC_TUNING_H_
#define SEALBOX_SERVER_PROCESS_MALLOC_TUNING_H_

#include <cstddef>

namespace sealbox::server {

// Freed memory at the top of a heap is returned to the kernel only beyond this, and
// allocations below it never get a mapping of their own. It covers the largest
// message (a 4 MiB stream segment) with room to spare.
inline constexpr size_t kMallocKeepBytes = size_t{8} << 20;

// Call once, before the threads start.
void TuneMalloc();

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_PROCESS_MALLOC_TUNING_H_
