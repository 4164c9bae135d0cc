#include "crypto/secret/secure_wipe.h"

#include <atomic>
#include <cstring>

namespace sealbox::crypto {
namespace {

std::atomic<WipeObserver> wipe_observer{nullptr};

}  // namespace

void SecureWipe(void* data, size_t size) {
  if (size == 0) return;
  std::memset(data, 0, size);
  // The barrier tells the compiler the zeroed memory is observed, so the memset of a
  // buffer that is about to die is not removed as a dead store.
  __asm__ __volatile__("" : : "r"(data) : "memory");
  if (WipeObserver observer = wipe_observer.load(std::memory_order_relaxed)) {
    observer(data, size);
  }
}

void SetWipeObserverForTesting(WipeObserver observer) {
  wipe_observer.store(observer, std::memory_order_relaxed);
}

}  // namespace sealbox::crypto
