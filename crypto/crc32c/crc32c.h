// CRC32C (Castagnoli, the iSCSI and Cloud KMS checksum): detects corruption of a
// payload between a client's memory and the service. Not a MAC: it says nothing
// about who made the bytes.
//
// The fastest implementation the CPU supports is chosen once: SSE4.2 `crc32` on
// x86-64, the ARMv8 CRC32 instructions on AArch64, else a portable table version.
#ifndef SEALBOX_CRYPTO_CRC32C_CRC32C_H_
#define SEALBOX_CRYPTO_CRC32C_CRC32C_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace sealbox::crypto {

// The CRC32C of `data`.
uint32_t Crc32c(absl::Span<const uint8_t> data);
uint32_t Crc32c(absl::string_view data);

// The CRC32C of A followed by `data`, given `crc` = Crc32c(A): for data in pieces.
uint32_t ExtendCrc32c(uint32_t crc, absl::Span<const uint8_t> data);

// The implementation Crc32c uses in this process: "x86_sse42", "armv8_crc32" or
// "portable".
const char* Crc32cImplementation();

// Every implementation this CPU can run (portable first), for tests that check
// each one against the others.
std::vector<std::string> SupportedCrc32cImplementations();

// ExtendCrc32c through the named implementation; the name must be supported here.
uint32_t ExtendCrc32cWith(const std::string& implementation, uint32_t crc,
                          absl::Span<const uint8_t> data);

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_CRC32C_CRC32C_H_
