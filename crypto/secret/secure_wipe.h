#ifndef SEALBOX_CRYPTO_SECRET_SECURE_WIPE_H_
#define SEALBOX_CRYPTO_SECRET_SECURE_WIPE_H_

#include <cstddef>

namespace sealbox::crypto {

// Overwrites `size` bytes at `data` with zeros in a way the compiler may not elide,
// for key material and plaintext that must not outlive its use.
void SecureWipe(void* data, size_t size);

// Wipes a buffer holding a secret (a std::string, a std::vector: anything with data()
// and size()) when it goes out of scope, on every path out.
template <typename Buffer>
class WipeOnExit {
 public:
  explicit WipeOnExit(Buffer& buffer) : buffer_(buffer) {}
  ~WipeOnExit() { SecureWipe(buffer_.data(), buffer_.size()); }
  WipeOnExit(const WipeOnExit&) = delete;
  WipeOnExit& operator=(const WipeOnExit&) = delete;

 private:
  Buffer& buffer_;
};

// Called by SecureWipe after each wipe with the range it zeroed, while the memory is
// still alive: lets a test see what the library wipes (crypto/tests/secret_wipe_test.cc).
// Pass nullptr to remove it. For tests only; when unset, the cost is one relaxed
// atomic load per wipe.
using WipeObserver = void (*)(const void* data, size_t size);
void SetWipeObserverForTesting(WipeObserver observer);

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_SECRET_SECURE_WIPE_H_
