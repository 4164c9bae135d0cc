// What checking a token's digest costs on every authenticated call, beside what it
// cost when OpenSSL 3 looked SHA-256 up by name each time (EVP_sha256()).
// `bazel run -c opt //server/keystore:tokens_bench`.
#include <openssl/evp.h>

#include <cstdint>
#include <string>

#include "benchmark/benchmark.h"
#include "server/auth/tokens.h"

namespace sealbox::server {
namespace {

// The shape of a real token: "sbx_" and 43 characters of base64url.
const std::string& ExampleToken() {
  static const std::string token = GenerateToken()->token;
  return token;
}

void BM_TokenSha256(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(TokenSha256(ExampleToken()));
}
BENCHMARK(BM_TokenSha256)->ThreadRange(1, 2);

// The earlier way, for comparison: the algorithm fetched from the provider store on
// every call.
void BM_TokenSha256FetchedEachCall(benchmark::State& state) {
  const std::string& token = ExampleToken();
  uint8_t digest[32];
  for (auto _ : state) {
    EVP_Digest(token.data(), token.size(), digest, nullptr, EVP_sha256(), nullptr);
    benchmark::DoNotOptimize(digest);
  }
}
BENCHMARK(BM_TokenSha256FetchedEachCall)->ThreadRange(1, 2);

}  // namespace
}  // namespace sealbox::server

BENCHMARK_MAIN();
