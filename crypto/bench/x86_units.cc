// The x86-64 core's own limits for AES-GCM: latency and throughput of AESENC and
// PCLMULQDQ at each vector width this CPU has, in core cycles, and the AES-round
// floor they put under AES-128 and AES-256 in cycles per byte. docs/PERFORMANCE.md
// explains the kernels' loops against these figures.
//
//   bazel run -c opt //crypto/bench:x86_units
//
// Cycles come from thread CPU time and the core clock measured first, with a chain
// of dependent adds (one per cycle on every x86-64 core), so a busy machine slows
// neither. Each figure is the median of --repetitions runs of about 0.1 s.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"

ABSL_FLAG(int, repetitions, 5, "Runs per figure; the median is reported.");

#if defined(__x86_64__)
namespace {

constexpr long kLoops = 10'000'000;  // each loop body holds 8 instructions

double ThreadSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Seconds per instruction of `body` (8 instructions per call), the median of runs.
template <typename Body>
double SecondsPerInstruction(Body body) {
  std::vector<double> runs;
  for (int i = 0; i < absl::GetFlag(FLAGS_repetitions); ++i) {
    const double start = ThreadSeconds();
    body();
    runs.push_back((ThreadSeconds() - start) / (8.0 * kLoops));
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

#define EIGHT(x) x x x x x x x x

double AddSeconds() {
  return SecondsPerInstruction([] {
    uint64_t v = 0;
    for (long i = 0; i < kLoops; ++i) {
      asm volatile(EIGHT("add $1, %0\n\t") : "+r"(v));
    }
  });
}

// A dependent chain (latency) and eight independent ones (throughput) of one
// instruction on one register width. `reg` is the width's prefix: x, y or z.
#define CHAINS(name, isa, insn, reg)                                                             \
  __attribute__((target(isa))) double name##Latency() {                                          \
    return SecondsPerInstruction([] {                                                            \
      for (long i = 0; i < kLoops; ++i) {                                                        \
        asm volatile(EIGHT(insn " %%" reg "mm1, %%" reg "mm0, %%" reg "mm0\n\t")::: "xmm0");     \
      }                                                                                          \
    });                                                                                          \
  }                                                                                              \
  __attribute__((target(isa))) double name##Throughput() {                                       \
    return SecondsPerInstruction([] {                                                            \
      for (long i = 0; i < kLoops; ++i) {                                                        \
        asm volatile(insn " %%" reg "mm8, %%" reg "mm0, %%" reg "mm0\n\t" insn " %%" reg         \
                          "mm8, %%" reg "mm1, %%" reg "mm1\n\t" insn " %%" reg "mm8, %%" reg     \
                          "mm2, %%" reg "mm2\n\t" insn " %%" reg "mm8, %%" reg "mm3, %%" reg     \
                          "mm3\n\t" insn " %%" reg "mm8, %%" reg "mm4, %%" reg "mm4\n\t" insn    \
                          " %%" reg "mm8, %%" reg "mm5, %%" reg "mm5\n\t" insn " %%" reg         \
                          "mm8, %%" reg "mm6, %%" reg "mm6\n\t" insn " %%" reg "mm8, %%" reg     \
                          "mm7, %%" reg "mm7\n\t" ::                                             \
                              : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7"); \
      }                                                                                          \
    });                                                                                          \
  }

CHAINS(Aes128, "avx,aes", "vaesenc", "x")
CHAINS(Aes256, "avx2,vaes", "vaesenc", "y")
CHAINS(Aes512, "avx512f,vaes", "vaesenc", "z")
CHAINS(Clmul128, "avx,pclmul", "vpclmulqdq $0x00,", "x")
CHAINS(Clmul256, "avx2,vpclmulqdq", "vpclmulqdq $0x00,", "y")
CHAINS(Clmul512, "avx512f,vpclmulqdq", "vpclmulqdq $0x00,", "z")

// Eight AESENC and two PCLMULQDQ, independent: about the mix of the 512-bit loop
// (11 AES rounds and 3 multiplies per 4 blocks). Whether the two share execution
// ports decides whether their costs add up or overlap. Seconds per 10 instructions.
__attribute__((target("avx512f,vaes,vpclmulqdq"))) double Mix512() {
  return 8.0 * SecondsPerInstruction([] {
           for (long i = 0; i < kLoops; ++i) {
             asm volatile(
                 "vaesenc %%zmm8, %%zmm0, %%zmm0\n\tvaesenc %%zmm8, %%zmm1, %%zmm1\n\t"
                 "vaesenc %%zmm8, %%zmm2, %%zmm2\n\tvaesenc %%zmm8, %%zmm3, %%zmm3\n\t"
                 "vpclmulqdq $0x00, %%zmm8, %%zmm9, %%zmm10\n\t"
                 "vaesenc %%zmm8, %%zmm4, %%zmm4\n\tvaesenc %%zmm8, %%zmm5, %%zmm5\n\t"
                 "vaesenc %%zmm8, %%zmm6, %%zmm6\n\tvaesenc %%zmm8, %%zmm7, %%zmm7\n\t"
                 "vpclmulqdq $0x11, %%zmm8, %%zmm9, %%zmm11\n\t" ::
                     : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm10",
                       "xmm11");
           }
         });
}

struct Width {
  const char* name;
  int blocks;  // 16-byte blocks per vector
  bool available;
  double (*aes_latency)();
  double (*aes_throughput)();
  double (*clmul_latency)();
  double (*clmul_throughput)();
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  __builtin_cpu_init();
  const double cycle = AddSeconds();
  std::printf("core clock %.2f GHz (a chain of dependent adds, thread CPU time)\n", 1e-9 / cycle);
  const Width widths[] = {
      {"128-bit", 1, __builtin_cpu_supports("aes") && __builtin_cpu_supports("avx"), Aes128Latency,
       Aes128Throughput, Clmul128Latency, Clmul128Throughput},
      {"256-bit", 2, __builtin_cpu_supports("vaes") && __builtin_cpu_supports("avx2"),
       Aes256Latency, Aes256Throughput, Clmul256Latency, Clmul256Throughput},
      {"512-bit", 4, __builtin_cpu_supports("vaes") && __builtin_cpu_supports("avx512f"),
       Aes512Latency, Aes512Throughput, Clmul512Latency, Clmul512Throughput},
  };
  std::printf("%-8s | %11s %15s | %11s %15s | %s\n", "vector", "AESENC lat", "AESENC per cyc",
              "CLMUL lat", "CLMUL per cyc", "AES-round floor, cycles/byte: AES-128 / AES-256");
  for (const Width& w : widths) {
    if (!w.available) {
      std::printf("%-8s | not on this CPU\n", w.name);
      continue;
    }
    const double aes_lat = w.aes_latency() / cycle;
    const double aes_per_cycle = cycle / w.aes_throughput();
    const double clmul_lat = w.clmul_latency() / cycle;
    const double clmul_per_cycle = cycle / w.clmul_throughput();
    // Rounds + the initial AddRoundKey folded into the first: 10 (14) AESENC-class
    // instructions per block; the floor assumes nothing else competes for the unit.
    const double blocks_per_cycle = aes_per_cycle * w.blocks;
    std::printf("%-8s | %11.1f %15.2f | %11.1f %15.2f | %.3f / %.3f\n", w.name, aes_lat,
                aes_per_cycle, clmul_lat, clmul_per_cycle, 10.0 / (16.0 * blocks_per_cycle),
                14.0 / (16.0 * blocks_per_cycle));
  }
  if (widths[2].available) {
    const double mix = Mix512() / cycle;
    std::printf(
        "512-bit: 8 AESENC + 2 PCLMULQDQ, independent, take %.1f cycles (%.1f if "
        "they used separate ports, %.1f if every instruction waited its turn)\n",
        mix, std::max(8 * widths[2].aes_throughput(), 2 * widths[2].clmul_throughput()) / cycle,
        (8 * widths[2].aes_throughput() + 2 * widths[2].clmul_throughput()) / cycle);
  }
  return 0;
}
#else
int main() {
  std::printf("x86_units measures x86-64 instructions; this is not an x86-64 build\n");
  return 1;
}
#endif
