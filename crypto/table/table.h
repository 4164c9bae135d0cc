#ifndef SEALBOX_CRYPTO_TABLE_TABLE_H_
#define SEALBOX_CRYPTO_TABLE_TABLE_H_

#include "crypto/kernel/kernel.h"

namespace sealbox::crypto::kernel {

// Table AES (T-tables) with 4-bit table GHASH (Shoup's method).
// NOT constant time: table lookups are indexed by key- and data-dependent values, so
// an attacker sharing the CPU's caches can learn key bits. Never chosen
// automatically; used only when named.
extern const Kernel kTableKernel;

}  // namespace sealbox::crypto::kernel

#endif  // SEALBOX_CRYPTO_TABLE_TABLE_H_
