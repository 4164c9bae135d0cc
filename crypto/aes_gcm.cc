// The GCM mode layer (SP 800-38D), written once for every kernel: argument checks,
// J0, AAD, partial blocks, the lengths block, the tag, and the constant-time tag
// comparison. Kernels do only whole blocks.
#include "crypto/aes_gcm.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/byte_order/byte_order.h"
#include "crypto/dispatch/dispatch.h"
#include "crypto/kernel/kernel.h"
#include "crypto/secret/locked_memory.h"
#include "crypto/secret/secure_wipe.h"

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define SEALBOX_HAVE_MEMCHECK 1
#endif
#endif

namespace sealbox::crypto {
namespace {

using kernel::kBlockBytes;

// The tag-compare verdict is derived from secrets but is meant to be acted on. Under
// valgrind's constant-time check (secrets marked undefined) this marks it defined,
// so the one intended branch is not reported; elsewhere it costs nothing.
void Declassify(const void* data, size_t size) {
#ifdef SEALBOX_HAVE_MEMCHECK
  VALGRIND_MAKE_MEM_DEFINED(data, size);
#else
  (void)data;
  (void)size;
#endif
}

// Whether the first `size` bytes of the two tags agree. Every byte is compared
// whatever the earlier ones held; only the verdict is declassified.
bool TagsMatch(const uint8_t* expected, const uint8_t* received, size_t size) {
  uint8_t difference = 0;
  for (size_t i = 0; i < size; ++i) {
    difference |= expected[i] ^ received[i];
#ifdef SEALBOX_EARLY_EXIT_TAG_COMPARE_FOR_CT_CHECK
    // Never in a real build: the negative control of //crypto/constant_time, an
    // exit at the first differing byte, which the check must report.
    if (difference != 0) break;
#endif
  }
  Declassify(&difference, sizeof(difference));
  return difference == 0;
}

bool IsValidTagSize(size_t size) { return size == 4 || size == 8 || (size >= 12 && size <= 16); }

// True if the two byte ranges share memory without being the same range.
bool PartiallyOverlap(const uint8_t* a, const uint8_t* b, size_t size) {
  if (size == 0 || a == b) return false;
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b);
  return x < y + size && y < x + size;
}

// A block's bytes as two little-endian 64-bit halves.
uint64_t LoadHalf(const uint8_t* in) {
  uint64_t half;
  std::memcpy(&half, in, 8);
  return half;
}

// Writes a block with one 16-byte store (GCC vector extension; one instruction on
// x86-64 and AArch64). A kernel that loads the block right after then takes it
// straight from that store, where bytes written piecewise would make its 16-byte
// load wait for them all to reach the cache: a dozen cycles, several times per
// message.
void StoreBlock(uint64_t first_half, uint64_t second_half, uint8_t out[kBlockBytes]) {
  typedef uint64_t Halves __attribute__((vector_size(16), aligned(1)));
  const Halves block = {first_half, second_half};
  std::memcpy(out, &block, kBlockBytes);
}

// The second half of a block whose last four bytes are the big-endian 32-bit
// `count`.
uint64_t WithCount32(uint64_t second_half, uint32_t count) {
  return (second_half & 0xffffffffu) | (uint64_t{__builtin_bswap32(count)} << 32);
}

// The big-endian 32-bit counter in the last four bytes of a block's second half.
uint32_t Count32(uint64_t second_half) {
  return __builtin_bswap32(static_cast<uint32_t>(second_half >> 32));
}

// GCM's inc32 without a carry branch: for IVs other than 12 bytes the counter is
// derived from H, so its bits must not steer control flow.
void IncrementCounter32(uint8_t counter[16]) {
  StoreBigEndian32(LoadBigEndian32(counter + 12) + 1, counter + 12);
}

absl::Status CheckArguments(absl::Span<const uint8_t> iv, absl::Span<const uint8_t> input,
                            absl::Span<const uint8_t> output) {
  if (iv.empty()) return absl::InvalidArgumentError("AES-GCM IV must not be empty");
  if (input.size() > kMaxPlaintextBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AES-GCM message of ", input.size(), " bytes exceeds the limit of ", kMaxPlaintextBytes));
  }
  if (output.size() != input.size()) {
    return absl::InvalidArgumentError(absl::StrCat("AES-GCM output buffer holds ", output.size(),
                                                   " bytes, input has ", input.size()));
  }
  if (PartiallyOverlap(input.data(), output.data(), input.size())) {
    return absl::InvalidArgumentError(
        "AES-GCM input and output must be the same buffer or not overlap");
  }
  return absl::OkStatus();
}

// One message's GCM state. Holds secrets (GHASH accumulator, counters, E(J0)) and
// wipes them when it goes out of scope.
class Message {
 public:
  Message(const kernel::Kernel& kernel, const kernel::KeySchedule& schedule,
          absl::Span<const uint8_t> iv)
      : kernel_(kernel), schedule_(schedule) {
    uint8_t j0[kBlockBytes] = {};
    if (iv.size() == 12) {
      // The fast path: J0 = IV || 0^31 || 1.
      uint32_t iv_end;
      std::memcpy(&iv_end, iv.data() + 8, 4);
      StoreBlock(LoadHalf(iv.data()), WithCount32(iv_end, 1), j0);
    } else {
      // J0 = GHASH(IV || 0^s || 0^64 || [len(IV)]_64).
      Absorb(iv);
      uint8_t lengths[kBlockBytes] = {};
      StoreBigEndian64(uint64_t{iv.size()} * 8, lengths + 8);
      kernel_.ghash(schedule_, x_, lengths, 1);
      std::memcpy(j0, x_, kBlockBytes);
      std::memset(x_, 0, kBlockBytes);
    }
    kernel_.encrypt_block(schedule_, j0, tag_mask_);
    const uint64_t j0_end = LoadHalf(j0 + 8);
    StoreBlock(LoadHalf(j0), WithCount32(j0_end, Count32(j0_end) + 1), counter_);
    SecureWipe(j0, sizeof(j0));
  }

  ~Message() {
    SecureWipe(x_, sizeof(x_));
    SecureWipe(counter_, sizeof(counter_));
    SecureWipe(tag_mask_, sizeof(tag_mask_));
  }

  // GHASH over `data`, zero-padding its last partial block.
  void Absorb(absl::Span<const uint8_t> data) {
    const size_t whole = data.size() / kBlockBytes;
    if (whole > 0) kernel_.ghash(schedule_, x_, data.data(), whole);
    const size_t rest = data.size() % kBlockBytes;
    if (rest > 0) {
      uint8_t block[kBlockBytes] = {};
      std::memcpy(block, data.data() + whole * kBlockBytes, rest);
      kernel_.ghash(schedule_, x_, block, 1);
      SecureWipe(block, sizeof(block));
    }
  }

  // CTR over `in` into `out` (same size, same buffer or disjoint), absorbing the
  // ciphertext: `out` when sealing, `in` when opening.
  void Crypt(const uint8_t* in, uint8_t* out, size_t size, bool seal) {
    const size_t whole = size / kBlockBytes;
    if (whole > 0) {
      (seal ? kernel_.seal_blocks : kernel_.open_blocks)(schedule_, counter_, x_, in, out, whole);
    }
    const size_t rest = size % kBlockBytes;
    if (rest == 0) return;
    const size_t done = whole * kBlockBytes;
    uint8_t keystream[kBlockBytes];
    uint8_t block[kBlockBytes] = {};
    kernel_.encrypt_block(schedule_, counter_, keystream);
    IncrementCounter32(counter_);
    std::memcpy(block, in + done, rest);  // read before writing: in may be out
    for (size_t i = 0; i < rest; ++i) out[done + i] = block[i] ^ keystream[i];
    // GHASH takes the ciphertext, zero-padded.
    if (seal) std::memcpy(block, out + done, rest);
    kernel_.ghash(schedule_, x_, block, 1);
    SecureWipe(keystream, sizeof(keystream));
    SecureWipe(block, sizeof(block));
  }

  // The full 16-byte tag: GHASH over the lengths block, masked with E(J0).
  void Finish(size_t aad_size, size_t text_size, uint8_t tag[kBlockBytes]) {
    uint8_t lengths[kBlockBytes];
    StoreBlock(__builtin_bswap64(uint64_t{aad_size} * 8),
               __builtin_bswap64(uint64_t{text_size} * 8), lengths);
    kernel_.ghash(schedule_, x_, lengths, 1);
    for (size_t i = 0; i < kBlockBytes; ++i) tag[i] = x_[i] ^ tag_mask_[i];
  }

 private:
  const kernel::Kernel& kernel_;
  const kernel::KeySchedule& schedule_;
  uint8_t x_[kBlockBytes] = {};    // GHASH accumulator
  uint8_t counter_[kBlockBytes];   // next counter block
  uint8_t tag_mask_[kBlockBytes];  // E(J0)
};

}  // namespace

ExpandedKey::ExpandedKey(const kernel::Kernel* kernel, size_t key_bytes, size_t tag_bytes)
    : kernel_(kernel),
      key_bytes_(key_bytes),
      tag_bytes_(tag_bytes),
      // Only as much as this kernel lays out (1,280 bytes for the x86-64 kernels);
      // zeroed, as fresh and freed secret memory is.
      schedule_(static_cast<kernel::KeySchedule*>(
          AllocateSecret(kernel->schedule_bytes, alignof(kernel::KeySchedule)))) {}

ExpandedKey::~ExpandedKey() {
  SecureWipe(schedule_->bytes, kernel_->schedule_bytes);
  FreeSecret(schedule_, kernel_->schedule_bytes, alignof(kernel::KeySchedule));
}

absl::StatusOr<std::unique_ptr<ExpandedKey>> ExpandedKey::Create(absl::Span<const uint8_t> key,
                                                                 absl::string_view implementation) {
  return CreateWithTagBytes(key, kMaxTagBytes, implementation);
}

absl::StatusOr<std::unique_ptr<ExpandedKey>> ExpandedKey::CreateWithTagBytes(
    absl::Span<const uint8_t> key, size_t tag_bytes, absl::string_view implementation) {
  if (key.size() != 16 && key.size() != 24 && key.size() != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("AES key must be 16, 24 or 32 bytes, not ", key.size()));
  }
  if (!IsValidTagSize(tag_bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AES-GCM tag length must be 16, 15, 14, 13, 12, 8 or 4 bytes, not ", tag_bytes));
  }
  absl::StatusOr<const kernel::Kernel*> kernel = SelectKernel(implementation);
  if (!kernel.ok()) return kernel.status();
  std::unique_ptr<ExpandedKey> expanded(new ExpandedKey(*kernel, key.size(), tag_bytes));
  (*kernel)->expand_key(key.data(), key.size(), expanded->schedule_);
  return expanded;
}

absl::string_view ExpandedKey::implementation() const { return kernel_->name; }

absl::Status ExpandedKey::Seal(absl::Span<const uint8_t> iv, absl::Span<const uint8_t> aad,
                               absl::Span<const uint8_t> plaintext, absl::Span<uint8_t> ciphertext,
                               absl::Span<uint8_t> tag) const {
  if (tag.size() != tag_bytes_) {
    return absl::InvalidArgumentError(absl::StrCat("AES-GCM tag buffer holds ", tag.size(),
                                                   " bytes; this key makes ", tag_bytes_,
                                                   "-byte tags"));
  }
  if (absl::Status s = CheckArguments(iv, plaintext, ciphertext); !s.ok()) return s;
  Message message(*kernel_, *schedule_, iv);
  message.Absorb(aad);
  message.Crypt(plaintext.data(), ciphertext.data(), plaintext.size(),
                /*seal=*/true);
  uint8_t full_tag[kBlockBytes];
  message.Finish(aad.size(), plaintext.size(), full_tag);
  std::memcpy(tag.data(), full_tag, tag.size());
  SecureWipe(full_tag, sizeof(full_tag));
  return absl::OkStatus();
}

absl::Status ExpandedKey::Open(absl::Span<const uint8_t> iv, absl::Span<const uint8_t> aad,
                               absl::Span<const uint8_t> ciphertext, absl::Span<const uint8_t> tag,
                               absl::Span<uint8_t> plaintext) const {
  if (absl::Status s = CheckArguments(iv, ciphertext, plaintext); !s.ok()) return s;
  // A tag of another length, a truncated one above all, is a failed check: the key
  // accepts only the length it was made for.
  if (tag.size() != tag_bytes_) {
    SecureWipe(plaintext.data(), plaintext.size());
    return DecryptionFailedError();
  }
  Message message(*kernel_, *schedule_, iv);
  message.Absorb(aad);
  message.Crypt(ciphertext.data(), plaintext.data(), ciphertext.size(),
                /*seal=*/false);
  uint8_t expected[kBlockBytes];
  message.Finish(aad.size(), ciphertext.size(), expected);
  const bool match = TagsMatch(expected, tag.data(), tag.size());
  SecureWipe(expected, sizeof(expected));
  if (!match) {
    SecureWipe(plaintext.data(), plaintext.size());
    return DecryptionFailedError();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> DefaultImplementation() {
  absl::StatusOr<const kernel::Kernel*> kernel = SelectKernel("");
  if (!kernel.ok()) return kernel.status();
  return std::string((*kernel)->name);
}

}  // namespace sealbox::crypto
