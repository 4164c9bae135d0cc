// What every part of the load generator shares: the benchmark key's name, the
// clock, payloads, the way sizes are printed, and errors that name what failed.
#ifndef SEALBOX_SERVER_BENCH_LOAD_COMMON_H_
#define SEALBOX_SERVER_BENCH_LOAD_COMMON_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sealbox::load {

using Clock = std::chrono::steady_clock;

// The key that CreateTenant makes and every Seal and Open names.
inline constexpr char kKey[] = "bench";

double Seconds(Clock::duration d);

// "1 GiB", "64 KiB", "1000 B": the largest binary unit that divides `bytes`.
std::string SizeName(int64_t bytes);

// `size` pseudo-random bytes, the same every run, so that runs send alike data.
std::string RandomBytes(size_t size);

// `status` with its message prefixed by `what`: ("Seal", "x") -> "Seal: x". Every
// failure reaches main as one message, printed after "load_generator: ".
absl::Status Annotated(absl::string_view what, const absl::Status& status);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_LOAD_COMMON_H_
