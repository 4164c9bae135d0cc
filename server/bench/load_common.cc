#include "server/bench/load_common.h"

#include <random>

#include "absl/strings/str_cat.h"

namespace sealbox::load {

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string SizeName(int64_t bytes) {
  if (bytes % (1 << 30) == 0) return absl::StrCat(bytes >> 30, " GiB");
  if (bytes % (1 << 20) == 0) return absl::StrCat(bytes >> 20, " MiB");
  if (bytes % (1 << 10) == 0) return absl::StrCat(bytes >> 10, " KiB");
  return absl::StrCat(bytes, " B");
}

std::string RandomBytes(size_t size) {
  std::mt19937_64 random(42);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

absl::Status Annotated(absl::string_view what, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

}  // namespace sealbox::load
