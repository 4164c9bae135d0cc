// Seal and Open throughput of every implementation this CPU supports, beside
// OpenSSL's EVP AES-GCM on the same messages, then a table of sealbox / OpenSSL.
//
//   bazel run -c opt //crypto/bench:aes_gcm_bench -- --benchmark_filter='/table/'
//
// Rows are named Seal|Open/<implementation or "openssl">/<key bits>/<bytes>. Each
// message has a 12-byte IV and no AAD. The key is set up once, outside the timed
// loop; per message OpenSSL gets only what a caller must do (set the IV, update,
// final, get or set the tag), so the comparison is of the per-message work.
//
// Counters: bytes_per_second, and on x86-64 `cpb`, TSC ticks per byte. The TSC
// ticks at the CPU's nominal clock, not its actual (turbo) clock, so cpb is
// comparable between rows of one run rather than a true cycle count.
//
// Unless told otherwise, runs each row 5 times for --benchmark_min_time=0.05 s,
// the repetitions of all rows in random order (so that a slow spell of this shared
// machine hits ours and OpenSSL's rows alike), and reports medians: every row on
// x86-64 takes about two minutes on two cores. --benchmark_filter narrows it.
//
// The last line (summary.h) is the worst ratio of the implementation dispatch picks on
// this CPU, over the rows that ran, beside the OpenSSL this run loaded.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "crypto/aes_gcm.h"
#include "crypto/bench/summary.h"
#include "crypto/dispatch/cpu_features.h"
#include "crypto/dispatch/dispatch.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace sealbox::crypto {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr char kOpenSsl[] = "openssl";
constexpr int kKeyBits[] = {128, 256};
constexpr size_t kMessageBytes[] = {16,   64,   256,  512,   1024,
                                    2048, 4096, 8192, 16384, size_t{1} << 20};
// Seal and Open at each key and message size.
constexpr size_t kRatiosInFullRun = 2 * std::size(kKeyBits) * std::size(kMessageBytes);
constexpr size_t kTagBytes = 16;
constexpr char kDefaultMinTime[] = "--benchmark_min_time=0.05";
constexpr char kDefaultRepetitions[] = "--benchmark_repetitions=5";
constexpr char kRandomInterleaving[] = "--benchmark_enable_random_interleaving=true";
constexpr char kAggregatesOnly[] = "--benchmark_display_aggregates_only=true";

enum class Op { kSeal, kOpen };

const char* OpName(Op op) { return op == Op::kSeal ? "Seal" : "Open"; }

// --- Timing -----------------------------------------------------------------------

#if defined(__x86_64__)
constexpr bool kHaveTicks = true;
uint64_t Ticks() { return __rdtsc(); }
#else
constexpr bool kHaveTicks = false;
uint64_t Ticks() { return 0; }
#endif

// Sets the byte rate and, where the TSC can be read, ticks per byte.
void SetCounters(benchmark::State& state, size_t message_bytes, uint64_t ticks) {
  const int64_t bytes =
      static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(message_bytes);
  state.SetBytesProcessed(bytes);
  if (kHaveTicks && bytes > 0) {
    state.counters["cpb"] = static_cast<double>(ticks) / static_cast<double>(bytes);
  }
}

// --- sealbox ----------------------------------------------------------------------

void BM_Sealbox(benchmark::State& state, const std::string& implementation, int key_bits,
                size_t size, Op op) {
  const Bytes raw_key(key_bits / 8, 0x42);
  absl::StatusOr<std::unique_ptr<ExpandedKey>> key = ExpandedKey::Create(raw_key, implementation);
  if (!key.ok()) {
    state.SkipWithError(std::string(key.status().message()).c_str());
    return;
  }
  const Bytes iv(12, 0x24);
  Bytes input(size, 0x5a), output(size), tag(kTagBytes);
  if (op == Op::kOpen) {  // open a real message
    if (!(*key)->Seal(iv, {}, input, absl::MakeSpan(output), absl::MakeSpan(tag)).ok()) {
      state.SkipWithError("Seal failed");
      return;
    }
    input = output;
  }

  const uint64_t start = Ticks();
  for (auto _ : state) {
    const absl::Status status =
        op == Op::kSeal ? (*key)->Seal(iv, {}, input, absl::MakeSpan(output), absl::MakeSpan(tag))
                        : (*key)->Open(iv, {}, input, tag, absl::MakeSpan(output));
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(output.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, size, Ticks() - start);
}

// --- OpenSSL ----------------------------------------------------------------------

struct CipherCtxDeleter {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxDeleter>;

// One message through a context already holding the key.
bool OpenSslMessage(EVP_CIPHER_CTX* ctx, Op op, const Bytes& iv, const Bytes& input, Bytes& output,
                    Bytes& tag) {
  int len = 0, final_len = 0;
  const int size = static_cast<int>(input.size());
  if (op == Op::kSeal) {
    return EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, iv.data()) == 1 &&
           EVP_EncryptUpdate(ctx, output.data(), &len, input.data(), size) == 1 &&
           EVP_EncryptFinal_ex(ctx, output.data() + len, &final_len) == 1 &&
           EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag.size()),
                               tag.data()) == 1;
  }
  return EVP_DecryptInit_ex(ctx, nullptr, nullptr, nullptr, iv.data()) == 1 &&
         EVP_DecryptUpdate(ctx, output.data(), &len, input.data(), size) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag.size()), tag.data()) ==
             1 &&
         EVP_DecryptFinal_ex(ctx, output.data() + len, &final_len) == 1;
}

CipherCtx NewOpenSslContext(Op op, const Bytes& key) {
  const EVP_CIPHER* cipher = key.size() == 16 ? EVP_aes_128_gcm() : EVP_aes_256_gcm();
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  const int ok = op == Op::kSeal
                     ? EVP_EncryptInit_ex(ctx.get(), cipher, nullptr, key.data(), nullptr)
                     : EVP_DecryptInit_ex(ctx.get(), cipher, nullptr, key.data(), nullptr);
  if (ok != 1) ctx.reset();
  return ctx;
}

void BM_OpenSsl(benchmark::State& state, int key_bits, size_t size, Op op) {
  const Bytes key(key_bits / 8, 0x42);
  const Bytes iv(12, 0x24);
  Bytes input(size, 0x5a), output(size + 16), tag(kTagBytes);
  CipherCtx ctx = NewOpenSslContext(op, key);
  if (ctx == nullptr) {
    state.SkipWithError("OpenSSL key setup failed");
    return;
  }
  if (op == Op::kOpen) {  // open a real message
    CipherCtx sealer = NewOpenSslContext(Op::kSeal, key);
    if (sealer == nullptr || !OpenSslMessage(sealer.get(), Op::kSeal, iv, input, output, tag)) {
      state.SkipWithError("OpenSSL seal failed");
      return;
    }
    input.assign(output.begin(), output.begin() + size);
  }

  const uint64_t start = Ticks();
  for (auto _ : state) {
    if (!OpenSslMessage(ctx.get(), op, iv, input, output, tag)) {
      state.SkipWithError(op == Op::kSeal ? "OpenSSL seal failed" : "OpenSSL rejected the tag");
      break;
    }
    benchmark::DoNotOptimize(output.data());
    benchmark::ClobberMemory();
  }
  SetCounters(state, size, Ticks() - start);
}

// --- The ratio table --------------------------------------------------------------

// Passes everything to the usual reporter and keeps each row's byte rate, to print
// sealbox / OpenSSL for every implementation, key size and message size at the end.
class RatioReporter : public benchmark::BenchmarkReporter {
 public:
  explicit RatioReporter(std::unique_ptr<benchmark::BenchmarkReporter> inner)
      : inner_(std::move(inner)) {}

  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      // Each repetition's own figure; or, when only aggregates are reported, the
      // median that Google Benchmark computed over them.
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type != Run::RT_Iteration && !median) continue;
      auto rate = run.counters.find("bytes_per_second");
      if (rate == run.counters.end()) continue;
      // "Seal/table/128/1024", perhaps with more after it.
      std::vector<std::string> parts = absl::StrSplit(run.run_name.function_name, '/');
      if (parts.size() < 4) continue;
      Sample& sample = rates_[{parts[0], parts[1], parts[2], parts[3]}];
      (median ? sample.medians : sample.values).push_back(rate->second.value);
    }
    inner_->ReportRuns(runs);
  }

  void Finalize() override { inner_->Finalize(); }

  // The table, on `out`: one line per implementation, key size and message size.
  void PrintTable(std::FILE* out, const std::vector<std::string>& implementations) const {
    std::fprintf(out, "\nsealbox / OpenSSL (%s), MB/s = 10^6 bytes per second of CPU time\n",
                 OpenSSL_version(OPENSSL_VERSION));
    std::fprintf(out, "%-16s %4s %8s | %10s %10s %7s | %10s %10s %7s\n", "impl", "key", "bytes",
                 "Seal MB/s", "openssl", "ratio", "Open MB/s", "openssl", "ratio");
    int rows = 0;
    for (const std::string& impl : implementations) {
      for (int bits : kKeyBits) {
        for (size_t size : kMessageBytes) {
          const std::string b = absl::StrCat(bits), n = absl::StrCat(size);
          const double seal = Rate("Seal", impl, b, n);
          const double seal_ref = Rate("Seal", kOpenSsl, b, n);
          const double open = Rate("Open", impl, b, n);
          const double open_ref = Rate("Open", kOpenSsl, b, n);
          if (seal < 0 && open < 0) continue;  // filtered out
          ++rows;
          std::fprintf(out, "%-16s %4d %8zu | %s %s %s | %s %s %s\n", impl.c_str(), bits, size,
                       Cell(seal).c_str(), Cell(seal_ref).c_str(), Ratio(seal, seal_ref).c_str(),
                       Cell(open).c_str(), Cell(open_ref).c_str(), Ratio(open, open_ref).c_str());
        }
      }
    }
    if (rows == 0) std::fprintf(out, "(no sealbox rows ran)\n");
  }

  // Every ratio of `implementation` to OpenSSL whose two rows both ran.
  std::vector<bench::MeasuredRatio> Ratios(const std::string& implementation) const {
    std::vector<bench::MeasuredRatio> ratios;
    for (Op op : {Op::kSeal, Op::kOpen}) {
      for (int bits : kKeyBits) {
        for (size_t size : kMessageBytes) {
          const std::string b = absl::StrCat(bits), n = absl::StrCat(size);
          const double ours = Rate(OpName(op), implementation, b, n);
          const double reference = Rate(OpName(op), kOpenSsl, b, n);
          if (ours < 0 || reference <= 0) continue;
          ratios.push_back({OpName(op), bits, size, ours / reference});
        }
      }
    }
    return ratios;
  }

 private:
  struct Sample {
    std::vector<double> values;   // one per repetition
    std::vector<double> medians;  // from aggregates, if those were all we saw
  };
  using Key = std::tuple<std::string, std::string, std::string, std::string>;

  // Median bytes per second of a row's repetitions (this machine is shared and
  // noisy: one slow repetition must not move the figure), or -1 if it did not run.
  double Rate(const std::string& op, const std::string& impl, const std::string& bits,
              const std::string& size) const {
    auto it = rates_.find({op, impl, bits, size});
    if (it == rates_.end()) return -1;
    std::vector<double> values = it->second.values.empty() ? it->second.medians : it->second.values;
    if (values.empty()) return -1;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  }

  static std::string Cell(double rate) {
    char text[32];
    if (rate < 0) return "         -";
    std::snprintf(text, sizeof(text), "%10.1f", rate / 1e6);
    return text;
  }

  static std::string Ratio(double ours, double reference) {
    char text[32];
    if (ours < 0 || reference <= 0) return "      -";
    std::snprintf(text, sizeof(text), "%6.2fx", ours / reference);
    return text;
  }

  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
  std::map<Key, Sample> rates_;
};

// "openssl-3.5": the library loaded at run time, which tools/dev swaps under the
// same binary, so not the headers' OPENSSL_VERSION_MAJOR and _MINOR.
std::string OpenSslName() {
  return absl::StrCat("openssl-", OPENSSL_version_major(), ".", OPENSSL_version_minor());
}

bool HasFlag(const std::vector<char*>& args, const char* prefix) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (absl::string_view(args[i]).substr(0, std::strlen(prefix)) == prefix) return true;
  }
  return false;
}

// The reporter --benchmark_format asks for (console by default); console is
// colored only on a terminal.
std::unique_ptr<benchmark::BenchmarkReporter> FormatReporter(const std::vector<char*>& args,
                                                             bool* console) {
  *console = true;
  for (size_t i = 1; i < args.size(); ++i) {
    const absl::string_view arg = args[i];
    if (arg == "--benchmark_format=json") {
      *console = false;
      return std::make_unique<benchmark::JSONReporter>();
    }
  }
  const bool color = isatty(STDOUT_FILENO) && !HasFlag(args, "--benchmark_color=false");
  return std::make_unique<benchmark::ConsoleReporter>(
      color ? benchmark::ConsoleReporter::OO_ColorTabular : benchmark::ConsoleReporter::OO_Tabular);
}

int Main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  std::string min_time = kDefaultMinTime, repetitions = kDefaultRepetitions,
              interleaving = kRandomInterleaving, aggregates = kAggregatesOnly;
  if (!HasFlag(args, "--benchmark_min_time")) args.push_back(min_time.data());
  if (!HasFlag(args, "--benchmark_repetitions")) {
    args.push_back(repetitions.data());
    args.push_back(interleaving.data());
    args.push_back(aggregates.data());
  }
  int args_count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&args_count, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_count, args.data())) return 1;

  const std::vector<std::string> implementations = SupportedImplementations();
  benchmark::AddCustomContext("openssl", OpenSSL_version(OPENSSL_VERSION));
  benchmark::AddCustomContext("sealbox_implementations", absl::StrJoin(implementations, ","));
  benchmark::AddCustomContext("cpu_features", GetCpuFeatures().ToString());
  benchmark::AddCustomContext(
      "cpb", kHaveTicks ? "TSC ticks per byte (x86-64 __rdtsc around the timed loop; "
                          "nominal clock, not turbo cycles)"
                        : "not measured: no cycle counter read on this architecture");

  for (Op op : {Op::kSeal, Op::kOpen}) {
    for (const std::string& impl : implementations) {
      for (int bits : kKeyBits) {
        for (size_t size : kMessageBytes) {
          benchmark::RegisterBenchmark(
              absl::StrCat(OpName(op), "/", impl, "/", bits, "/", size).c_str(),
              [=](benchmark::State& state) { BM_Sealbox(state, impl, bits, size, op); });
        }
      }
    }
    for (int bits : kKeyBits) {
      for (size_t size : kMessageBytes) {
        benchmark::RegisterBenchmark(
            absl::StrCat(OpName(op), "/", kOpenSsl, "/", bits, "/", size).c_str(),
            [=](benchmark::State& state) { BM_OpenSsl(state, bits, size, op); });
      }
    }
  }

  bool console = true;
  RatioReporter reporter(FormatReporter(args, &console));
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::fflush(stdout);
  std::FILE* out = console ? stdout : stderr;
  reporter.PrintTable(out, implementations);
  // What a key gets here by default (SEALBOX_CRYPTO_IMPL aside).
  const std::string dispatched = BestKernel(GetCpuFeatures()).name;
  std::fprintf(out, "\n%s\n",
               bench::CryptoSummaryLine(dispatched, OpenSslName(), reporter.Ratios(dispatched),
                                        kRatiosInFullRun)
                   .c_str());
  benchmark::Shutdown();
  return 0;
}

}  // namespace
}  // namespace sealbox::crypto

int main(int argc, char** argv) { return sealbox::crypto::Main(argc, argv); }
