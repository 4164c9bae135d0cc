// Secrets do not outlive their use. Two witnesses watch the library while a test
// runs it:
//   - the library's own hook (SetWipeObserverForTesting) reports every SecureWipe
//     range while that memory is still alive, and checks it reads all zero;
//   - this binary's global operator delete looks inside every heap block just
//     before it is freed (the only moment it may legally be read) for any 16-byte
//     piece of a secret the test registered: key material, derived subkeys and
//     HKDF's PRK, plaintext.
// A secret found in a freed block is a leak: freed memory is handed out again.
// Secret memory (SecretBytes' buffers and key schedules, crypto/secret/locked_memory.h)
// is not the heap: it is zeroed when released, and the hook shows it wiped before.
// Stack temporaries and OpenSSL's own heap (malloc, not operator new; OpenSSL
// cleanses its HMAC state itself) are outside what these witnesses see.
#include <malloc.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "crypto/aes_gcm.h"
#include "crypto/dispatch/dispatch.h"
#include "crypto/format/hkdf.h"
#include "crypto/format/stream.h"
#include "crypto/format/unary.h"
#include "crypto/kernel/kernel.h"
#include "crypto/secret/secret_bytes.h"
#include "crypto/secret/secure_wipe.h"
#include "crypto/testing/implementations.h"
#include "gtest/gtest.h"

namespace {

// What the witnesses saw. Fixed-size and allocation-free: it is written from inside
// operator delete.
namespace seen {

constexpr size_t kPieceBytes = 16;
constexpr size_t kMaxPieces = 256;
constexpr size_t kMaxRecords = 1 << 16;

struct Range {
  const void* data;
  size_t size;
  size_t zero_prefix;  // leading zero bytes when the wipe was reported
};

std::atomic<bool> armed{false};
uint8_t pieces[kMaxPieces][kPieceBytes];
const char* piece_names[kMaxPieces];
size_t piece_count = 0;
Range wipes[kMaxRecords];
size_t wipe_count = 0;
bool overflow = false;
const char* leaks[kMaxRecords];  // the name of the secret each leaked block held
size_t leak_count = 0;

size_t ZeroPrefix(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  return std::find_if(bytes, bytes + size, [](uint8_t b) { return b != 0; }) - bytes;
}

void OnWipe(const void* data, size_t size) {
  if (wipe_count == kMaxRecords) {
    overflow = true;
    return;
  }
  wipes[wipe_count++] = {data, size, ZeroPrefix(data, size)};
}

// Called with every heap block about to be freed while armed.
void OnFree(const void* data, size_t size) {
  for (size_t i = 0; i < piece_count; ++i) {
    if (memmem(data, size, pieces[i], kPieceBytes) != nullptr) {
      if (leak_count < kMaxRecords) leaks[leak_count++] = piece_names[i];
      return;
    }
  }
}

}  // namespace seen

void* Allocate(size_t size, size_t alignment) {
  if (size == 0) size = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void Release(void* p) {
  if (p == nullptr) return;
  if (seen::armed.load(std::memory_order_relaxed)) {
    seen::armed.store(false);  // OnFree must not watch itself
    seen::OnFree(p, malloc_usable_size(p));
    seen::armed.store(true);
  }
  std::free(p);
}

}  // namespace

void* operator new(size_t size) { return Allocate(size, alignof(std::max_align_t)); }
void* operator new[](size_t size) { return Allocate(size, alignof(std::max_align_t)); }
void* operator new(size_t size, std::align_val_t a) {
  return Allocate(size, static_cast<size_t>(a));
}
void* operator new[](size_t size, std::align_val_t a) {
  return Allocate(size, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { Release(p); }
void operator delete[](void* p) noexcept { Release(p); }
void operator delete(void* p, size_t) noexcept { Release(p); }
void operator delete[](void* p, size_t) noexcept { Release(p); }
void operator delete(void* p, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Release(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { Release(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { Release(p); }

namespace sealbox::crypto {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes RandomBytes(size_t size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes bytes(size);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// Watches the library from construction to destruction (or Stop()). Not reentrant;
// the tests are single-threaded.
class Watch {
 public:
  Watch() {
    seen::piece_count = seen::wipe_count = seen::leak_count = 0;
    seen::overflow = false;
    SetWipeObserverForTesting(&seen::OnWipe);
    seen::armed.store(true);
  }
  ~Watch() { Stop(); }

  // Registers `secret` (any size): each 16-byte piece of it, spaced out for long
  // ones, must not be found in a freed block.
  void Secret(const char* name, absl::Span<const uint8_t> secret) {
    const size_t step = secret.size() > 1024 ? 512 : seen::kPieceBytes;
    for (size_t at = 0; at + seen::kPieceBytes <= secret.size(); at += step) {
      AddPiece(name, secret.data() + at);
    }
    if (secret.size() >= seen::kPieceBytes) {
      AddPiece(name, secret.data() + secret.size() - seen::kPieceBytes);
    }
  }

  void Stop() {
    seen::armed.store(false);
    SetWipeObserverForTesting(nullptr);
  }

  // Every wipe read zero when reported, nothing overflowed, and no freed block held
  // a registered secret.
  void ExpectNoLeaks() const {
    EXPECT_FALSE(seen::overflow);
    for (size_t i = 0; i < seen::wipe_count; ++i) {
      EXPECT_EQ(seen::wipes[i].zero_prefix, seen::wipes[i].size)
          << "wipe " << i << " left non-zero bytes";
    }
    for (size_t i = 0; i < seen::leak_count; ++i) {
      ADD_FAILURE() << "a freed heap block still held " << seen::leaks[i];
    }
  }

  // True if SecureWipe covered [data, data + size) in one call.
  static bool Wiped(const void* data, size_t size) {
    const auto* begin = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < seen::wipe_count; ++i) {
      const auto* w = static_cast<const uint8_t*>(seen::wipes[i].data);
      if (w <= begin && begin + size <= w + seen::wipes[i].size) return true;
    }
    return false;
  }

  static size_t wipe_count() { return seen::wipe_count; }
  static const seen::Range& wipe(size_t i) { return seen::wipes[i]; }

 private:
  static void AddPiece(const char* name, const uint8_t* piece) {
    ASSERT_LT(seen::piece_count, seen::kMaxPieces);
    std::memcpy(seen::pieces[seen::piece_count], piece, seen::kPieceBytes);
    seen::piece_names[seen::piece_count++] = name;
  }
};

// The witnesses themselves: a freed secret is found, a wiped one is not.
TEST(SecretWipeTest, WitnessesSeeAFreedSecretAndAWipe) {
  const Bytes secret = RandomBytes(40, 1);
  {
    Watch watch;
    watch.Secret("the secret", secret);
    auto* copy = new Bytes(secret);
    delete copy;
    watch.Stop();
    EXPECT_EQ(seen::leak_count, 1u);
  }
  {
    Watch watch;
    watch.Secret("the secret", secret);
    auto* copy = new Bytes(secret);
    SecureWipe(copy->data(), copy->size());
    EXPECT_TRUE(Watch::Wiped(copy->data(), copy->size()));
    delete copy;
    watch.Stop();
    watch.ExpectNoLeaks();
  }
}

// ---------------------------------------------------------------------------------
// SecretBytes

TEST(SecretWipeTest, SecretBytesWipedWhenDestroyed) {
  const Bytes secret = RandomBytes(32, 2);
  Watch watch;
  watch.Secret("SecretBytes contents", secret);
  const void* data;
  {
    SecretBytes s(secret);
    data = s.data();
  }
  watch.Stop();
  EXPECT_TRUE(Watch::Wiped(data, secret.size()));
  watch.ExpectNoLeaks();
}

TEST(SecretWipeTest, SecretBytesWipedWhenReassigned) {
  const Bytes old_secret = RandomBytes(32, 3);
  const Bytes new_secret = RandomBytes(32, 4);
  Watch watch;
  watch.Secret("the replaced SecretBytes contents", old_secret);
  SecretBytes s(old_secret);
  const void* old_data = s.data();
  s = SecretBytes(new_secret);
  EXPECT_TRUE(Watch::Wiped(old_data, old_secret.size()));
  EXPECT_EQ(s.span(), absl::MakeConstSpan(new_secret));
  watch.Stop();
  watch.ExpectNoLeaks();
}

TEST(SecretWipeTest, SecretBytesMovedFromLeavesNoCopy) {
  const Bytes secret = RandomBytes(32, 5);
  Watch watch;
  watch.Secret("moved SecretBytes contents", secret);
  {
    SecretBytes a(secret);
    const void* a_data = a.data();
    SecretBytes b(std::move(a));
    // Either the buffer itself moved, or the one left behind was wiped.
    EXPECT_TRUE(b.data() == a_data || Watch::Wiped(a_data, secret.size()));
    SecretBytes c(8);
    const void* b_data = b.data();
    c = std::move(b);
    EXPECT_TRUE(c.data() == b_data || Watch::Wiped(b_data, secret.size()));
    EXPECT_EQ(c.span(), absl::MakeConstSpan(secret));
  }
  watch.Stop();
  watch.ExpectNoLeaks();
}

// ---------------------------------------------------------------------------------
// ExpandedKey, on every implementation this CPU runs

class ExpandedKeyWipeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExpandedKeyWipeTest, WholeScheduleWipedOnDestruction) {
  for (size_t key_bytes : {16, 24, 32}) {
    const Bytes key = RandomBytes(key_bytes, 6 + key_bytes);
    Watch watch;
    watch.Secret("the AES key", key);
    auto expanded = ExpandedKey::Create(key, GetParam());
    ASSERT_TRUE(expanded.ok()) << expanded.status();
    const Bytes iv(12, 1), plaintext = RandomBytes(100, 7);
    Bytes ciphertext(plaintext.size()), tag(16);
    ASSERT_TRUE(
        (*expanded)->Seal(iv, {}, plaintext, absl::MakeSpan(ciphertext), absl::MakeSpan(tag)).ok());
    const size_t wipes_before = Watch::wipe_count();
    expanded->reset();
    watch.Stop();
    // A key schedule lives in secret memory (crypto/secret/locked_memory.h), not on
    // the heap this test watches: the hook is the witness. One wipe during the
    // destruction covers the kernel's whole 64-byte aligned schedule and read all zero.
    const size_t schedule_bytes = (*SelectKernel(GetParam()))->schedule_bytes;
    bool schedule_wiped = false;
    for (size_t i = wipes_before; i < Watch::wipe_count(); ++i) {
      const seen::Range& w = Watch::wipe(i);
      schedule_wiped |= w.size >= schedule_bytes &&
                        reinterpret_cast<uintptr_t>(w.data) % alignof(kernel::KeySchedule) == 0 &&
                        w.zero_prefix == w.size;
    }
    EXPECT_TRUE(schedule_wiped) << GetParam() << ", AES-" << key_bytes * 8;
    watch.ExpectNoLeaks();
  }
}

INSTANTIATE_TEST_SUITE_P(Impl, ExpandedKeyWipeTest,
                         ::testing::ValuesIn(test::ImplementationsUnderTest()),
                         test::ImplementationTestName);

// A failed Open wipes whatever it had decrypted into the caller's buffer.
TEST(SecretWipeTest, FailedOpenWipesItsOutput) {
  const Bytes key = RandomBytes(32, 8);
  auto expanded = ExpandedKey::Create(key);
  ASSERT_TRUE(expanded.ok());
  const Bytes iv(12, 2), plaintext = RandomBytes(77, 9);
  Bytes ciphertext(plaintext.size()), tag(16);
  ASSERT_TRUE(
      (*expanded)->Seal(iv, {}, plaintext, absl::MakeSpan(ciphertext), absl::MakeSpan(tag)).ok());
  tag[15] ^= 1;
  Bytes opened(plaintext.size(), 0xee);
  Watch watch;
  EXPECT_TRUE(
      IsDecryptionFailure((*expanded)->Open(iv, {}, ciphertext, tag, absl::MakeSpan(opened))));
  watch.Stop();
  EXPECT_TRUE(Watch::Wiped(opened.data(), opened.size()));
  EXPECT_EQ(opened, Bytes(opened.size(), 0));
  watch.ExpectNoLeaks();
}

// ---------------------------------------------------------------------------------
// The formats: derivation, unary, stream

// HKDF-SHA256's PRK, HMAC(salt, ikm), recomputed here to look for it.
Bytes Prk(absl::Span<const uint8_t> salt, absl::Span<const uint8_t> ikm) {
  Bytes prk(32);
  unsigned int size = 0;
  HMAC(EVP_sha256(), salt.data(), static_cast<int>(salt.size()), ikm.data(), ikm.size(), prk.data(),
       &size);
  return prk;
}

// "label" || u8 len(tenant) || tenant || u8 len(key name) || key name (derivation.h).
Bytes Info(absl::string_view label, const KeyContext& context) {
  Bytes info(label.begin(), label.end());
  for (absl::string_view name : {context.tenant, context.key_name}) {
    info.push_back(static_cast<uint8_t>(name.size()));
    info.insert(info.end(), name.begin(), name.end());
  }
  return info;
}

const KeyContext kContext = {"tenant-a", "orders", 4};

TEST(SecretWipeTest, UnaryLeavesNoSecretBehind) {
  for (size_t material_bytes : {16, 32}) {
    const Bytes material = RandomBytes(material_bytes, 10 + material_bytes);
    EpochId epoch_id;
    epoch_id.fill(0x3c);
    const Bytes info = Info("sealbox/v1/unary", kContext);
    absl::StatusOr<SecretBytes> subkey = HkdfSha256(material, epoch_id, info, material_bytes);
    ASSERT_TRUE(subkey.ok());
    const Bytes subkey_bytes(subkey->span().begin(), subkey->span().end());
    const Bytes prk = Prk(epoch_id, material);
    const Bytes plaintext = RandomBytes(300, 11);
    const Bytes aad = {1, 2, 3};
    Bytes sealed;
    {
      Watch watch;
      watch.Secret("the key material", material);
      watch.Secret("the epoch subkey", subkey_bytes);
      watch.Secret("HKDF's PRK", prk);
      watch.Secret("the plaintext", plaintext);
      {
        auto epoch = EpochSubkey::Derive(material, kContext, epoch_id);
        ASSERT_TRUE(epoch.ok());
        auto s = (*epoch)->Seal(plaintext, aad);
        ASSERT_TRUE(s.ok());
        sealed = *std::move(s);
        // A forgery: Open decrypts, then must wipe before freeing its buffer.
        Bytes forged = sealed;
        forged.back() ^= 1;
        EXPECT_TRUE(IsDecryptionFailure((*epoch)->Open(forged, aad).status()));
      }
      watch.Stop();
      watch.ExpectNoLeaks();
    }
  }
}

TEST(SecretWipeTest, StreamLeavesNoSecretBehind) {
  const Bytes material = RandomBytes(32, 12);
  const Bytes aad = {9, 8, 7};
  StreamSalt salt;
  salt.fill(0x5a);
  StreamNoncePrefix prefix;
  prefix.fill(0xa5);
  Bytes info = Info("sealbox/v1/stream", kContext);
  for (int shift = 56; shift >= 0; shift -= 8) {
    info.push_back(static_cast<uint8_t>(uint64_t{aad.size()} >> shift));
  }
  info.insert(info.end(), aad.begin(), aad.end());
  absl::StatusOr<SecretBytes> subkey = HkdfSha256(material, salt, info, 32);
  ASSERT_TRUE(subkey.ok());
  const Bytes subkey_bytes(subkey->span().begin(), subkey->span().end());
  const Bytes prk = Prk(salt, material);
  constexpr size_t S = kMinSegmentBytes;
  const Bytes plaintext = RandomBytes(3 * S + 100, 13);

  Watch watch;
  watch.Secret("the key material", material);
  watch.Secret("the stream key", subkey_bytes);
  watch.Secret("HKDF's PRK", prk);
  watch.Secret("the plaintext", plaintext);
  // Chunks that fill the segment buffer, and whole segments sealed directly.
  Bytes sealed;
  {
    auto sealer = StreamSealer::CreateForTesting(material, kContext, aad, S, salt, prefix);
    ASSERT_TRUE(sealer.ok());
    const absl::Span<const uint8_t> all(plaintext);
    ASSERT_TRUE((*sealer)->Update(all.first(1000), sealed).ok());
    ASSERT_TRUE((*sealer)->Update(all.subspan(1000, S), sealed).ok());
    ASSERT_TRUE((*sealer)->Update(all.subspan(1000 + S), sealed).ok());
    ASSERT_TRUE((*sealer)->Finish(sealed).ok());
  }
  const StreamOpener::MaterialLookup lookup = [&](uint32_t) -> absl::StatusOr<SecretBytes> {
    return SecretBytes(material);
  };
  // The plaintext comes out into a growing vector: its old buffers must be wiped.
  Bytes opened;
  {
    auto opener = StreamOpener::Create(kContext.tenant, kContext.key_name, aad, lookup);
    const absl::Span<const uint8_t> all(sealed);
    for (size_t at = 0; at < all.size(); at += 3000) {
      ASSERT_TRUE(
          opener->Update(all.subspan(at, std::min<size_t>(3000, all.size() - at)), opened).ok());
    }
    ASSERT_TRUE(opener->Finish(opened).ok());
  }
  // A forged last segment fails after earlier segments were released.
  Bytes forged = sealed;
  forged.back() ^= 1;
  Bytes partial;
  {
    auto opener = StreamOpener::Create(kContext.tenant, kContext.key_name, aad, lookup);
    EXPECT_TRUE(opener->Update(forged, partial).ok());
    EXPECT_TRUE(IsDecryptionFailure(opener->Finish(partial)));
  }
  watch.Stop();
  EXPECT_EQ(opened, plaintext);
  watch.ExpectNoLeaks();
}

}  // namespace
}  // namespace sealbox::crypto
