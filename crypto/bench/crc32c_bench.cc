// CRC32C of one buffer, per implementation this CPU runs, at the sizes the data
// plane checks (a unary item up to a 1 MiB message).
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "crypto/crc32c/crc32c.h"

namespace sealbox::crypto {
namespace {

void BM_Crc32c(benchmark::State& state, const std::string& implementation) {
  const std::vector<uint8_t> data(static_cast<size_t>(state.range(0)), 0x5a);
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = ExtendCrc32cWith(implementation, crc, data);
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

}  // namespace
}  // namespace sealbox::crypto

int main(int argc, char** argv) {
  for (const std::string& impl : sealbox::crypto::SupportedCrc32cImplementations()) {
    benchmark::RegisterBenchmark(("Crc32c/" + impl).c_str(), sealbox::crypto::BM_Crc32c, impl)
        ->Arg(64)
        ->Arg(1024)
        ->Arg(65536)
        ->Arg(1 << 20);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
