#include "crypto/format/hkdf.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>

#include "absl/status/status.h"

namespace sealbox::crypto {
namespace {

constexpr size_t kHashBytes = 32;

// OpenSSL wants a non-null pointer even for zero bytes.
const uint8_t* NonNull(absl::Span<const uint8_t> bytes) {
  static const uint8_t kEmpty = 0;
  return bytes.empty() ? &kEmpty : bytes.data();
}

absl::Status HmacSha256(absl::Span<const uint8_t> key, absl::Span<const uint8_t> data,
                        uint8_t out[kHashBytes]) {
  unsigned int out_len = 0;
  if (HMAC(EVP_sha256(), NonNull(key), static_cast<int>(key.size()), NonNull(data), data.size(),
           out, &out_len) == nullptr ||
      out_len != kHashBytes) {
    return absl::InternalError("HMAC-SHA256 failed");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SecretBytes> HkdfSha256(absl::Span<const uint8_t> ikm,
                                       absl::Span<const uint8_t> salt,
                                       absl::Span<const uint8_t> info, size_t length) {
  if (length > 255 * kHashBytes) {
    return absl::InvalidArgumentError("HKDF output is limited to 255 * 32 bytes");
  }
  // Extract. An empty salt means HashLen zero bytes (RFC 5869 2.2); HMAC zero-pads
  // its key to the block size anyway, so passing it empty is the same thing.
  SecretBytes prk(kHashBytes);
  absl::Status status = HmacSha256(salt, ikm, prk.data());
  if (!status.ok()) return status;

  // Expand: T(i) = HMAC(PRK, T(i-1) || info || i), OKM = T(1) || T(2) || ...
  SecretBytes okm(length);
  SecretBytes block(kHashBytes + info.size() + 1);
  SecretBytes t(kHashBytes);
  size_t t_len = 0;  // T(0) is empty
  for (size_t done = 0, i = 1; done < length; ++i) {
    uint8_t* p = std::copy_n(t.data(), t_len, block.data());
    p = std::copy(info.begin(), info.end(), p);
    *p++ = static_cast<uint8_t>(i);
    status = HmacSha256(prk.span(), absl::MakeConstSpan(block.data(), p), t.data());
    if (!status.ok()) return status;
    t_len = kHashBytes;
    size_t n = std::min(kHashBytes, length - done);
    std::copy_n(t.data(), n, okm.data() + done);
    done += n;
  }
  return okm;
}

}  // namespace sealbox::crypto
