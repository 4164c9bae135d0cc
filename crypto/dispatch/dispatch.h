// Chooses the AES-GCM implementation for a key. The order of preference, and what
// each implementation needs from the CPU, read top to bottom in dispatch.cc.
#ifndef SEALBOX_CRYPTO_DISPATCH_DISPATCH_H_
#define SEALBOX_CRYPTO_DISPATCH_DISPATCH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "crypto/dispatch/cpu_features.h"
#include "crypto/kernel/kernel.h"

namespace sealbox::crypto {

// Environment variable an operator sets to force an implementation by name.
inline constexpr char kImplementationEnvVar[] = "SEALBOX_CRYPTO_IMPL";

// The kernel for `name` on a CPU with `features`. An empty name means the value of
// SEALBOX_CRYPTO_IMPL if set and non-empty, else the fastest constant-time kernel
// the CPU runs. Unknown or unsupported names are errors that list the choices.
absl::StatusOr<const kernel::Kernel*> SelectKernel(absl::string_view name,
                                                   const CpuFeatures& features);

// Same, for this CPU (GetCpuFeatures()).
absl::StatusOr<const kernel::Kernel*> SelectKernel(absl::string_view name);

// The default choice for `features`, ignoring the environment.
const kernel::Kernel& BestKernel(const CpuFeatures& features);

// Names of every implementation built into this binary, best first.
std::vector<std::string> AllImplementations();

// Names of the implementations `features` can run, best first.
std::vector<std::string> SupportedImplementations(const CpuFeatures& features);
std::vector<std::string> SupportedImplementations();

}  // namespace sealbox::crypto

#endif  // SEALBOX_CRYPTO_DISPATCH_DISPATCH_H_
