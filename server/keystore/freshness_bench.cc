// What the staleness bound costs every call: Keystore::Serving() (a steady-clock read
// and two atomic loads) beside Keystore::Loaded() (one atomic load), the check every
// call made before the bound; and the clock alone. Over a real keystore (a file in a
// temporary directory), with the bound on and unbounded.
// `bazel run -c opt //server/keystore:freshness_bench`.
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "server/keystore/file/file_storage.h"
#include "server/keystore/keystore.h"
#include "server/keystore/testing/test_store.h"

namespace sealbox::server {
namespace {

std::unique_ptr<Keystore> OpenKeystore(absl::Duration max_staleness) {
  char dir[] = "/tmp/sealbox-freshness-bench-XXXXXX";
  if (mkdtemp(dir) == nullptr) return nullptr;
  FileStorageOptions file;
  file.data_dir = std::string(dir) + "/data";
  file.kek = testing::RandomKek();
  auto storage = FileStorage::Create(std::move(file));
  if (!storage.ok()) return nullptr;
  KeystoreOpenOptions open;
  open.create = true;
  open.max_staleness = max_staleness;
  auto keystore = Keystore::Open(*std::move(storage), std::move(open));
  return keystore.ok() ? *std::move(keystore) : nullptr;
}

Keystore& Bounded() {
  static Keystore* keystore = OpenKeystore(absl::Seconds(30)).release();
  return *keystore;
}

Keystore& Unbounded() {
  static Keystore* keystore = OpenKeystore(absl::InfiniteDuration()).release();
  return *keystore;
}

// The check before the bound: has the keystore loaded?
void BM_Loaded(benchmark::State& state) {
  Keystore& keystore = Bounded();
  for (auto _ : state) benchmark::DoNotOptimize(keystore.Loaded());
}
BENCHMARK(BM_Loaded)->ThreadRange(1, 2);

// The check now: loaded, and proven current within --max-staleness=30s.
void BM_Serving(benchmark::State& state) {
  Keystore& keystore = Bounded();
  for (auto _ : state) benchmark::DoNotOptimize(keystore.Serving());
}
BENCHMARK(BM_Serving)->ThreadRange(1, 2);

// --max-staleness=unbounded: no clock read.
void BM_ServingUnbounded(benchmark::State& state) {
  Keystore& keystore = Unbounded();
  for (auto _ : state) benchmark::DoNotOptimize(keystore.Serving());
}
BENCHMARK(BM_ServingUnbounded)->ThreadRange(1, 2);

// The clocks alone: the one Serving() reads (clock_gettime(CLOCK_MONOTONIC) through
// the vDSO) and the kernel's coarse one, cheaper but with a lag that is not bounded.
void BM_SteadyClock(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(std::chrono::steady_clock::now());
}
BENCHMARK(BM_SteadyClock);

void BM_CoarseClock(benchmark::State& state) {
  timespec now;
  for (auto _ : state) {
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    benchmark::DoNotOptimize(now);
  }
}
BENCHMARK(BM_CoarseClock);

}  // namespace
}  // namespace sealbox::server

BENCHMARK_MAIN();
