#include "crypto/kernel/secure_wipe.h"

#include <cstring>

namespace sealbox::crypto {

void SecureWipe(void* data, size_t size) {
  if (size == 0) return;
  std::memset(data, 0, size);
  // The barrier tells the compiler the zeroed memory is observed, so the memset of a
  // buffer that is about to die is not removed as a dead store.
  __asm__ __volatile__("" : : "r"(data) : "memory");
}

}  // namespace sealbox::crypto
