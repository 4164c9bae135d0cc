#include "server/bench/unary_rows.h"

#include <cstdio>
#include <functional>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "server/bench/load_common.h"
#include "server/bench/unary_clients.h"
#include "server/bench/unary_load.h"

namespace sealbox::load {
namespace {

std::string Ratio(double a, double b) { return b > 0 ? absl::StrFormat("%.2f", a / b) : "-"; }

void PrintHeader(const Options& options) {
  std::printf(
      "Unary: %g s per method and row, in %d rounds of Echo, Seal, Open (each after "
      "%g s of warm-up); one thread and one blocking call per client; latency in us; "
      "the server's CPU time per call (warm-up included), in us\n",
      options.seconds, options.rounds, options.warmup_seconds);
  std::printf("%-7s %4s | %9s %7s %7s | %9s %7s %7s %9s | %9s %7s %7s %9s | %-20s\n", "size",
              "conc", "Echo/s", "p50", "p99", "Seal/s", "p50", "p99", "Seal/Echo", "Open/s", "p50",
              "p99", "Open/Echo", "server us/call E S O");
  std::fflush(stdout);
}

void PrintRow(int64_t size, int64_t concurrency, const UnarySamples& echo, const UnarySamples& seal,
              const UnarySamples& open) {
  std::printf(
      "%-7s %4lld | %9.0f %7.0f %7.0f | %9.0f %7.0f %7.0f %9s | %9.0f %7.0f "
      "%7.0f %9s | %6.1f %6.1f %6.1f\n",
      SizeName(size).c_str(), static_cast<long long>(concurrency), echo.requests_per_second(),
      echo.percentile_us(0.5), echo.percentile_us(0.99), seal.requests_per_second(),
      seal.percentile_us(0.5), seal.percentile_us(0.99),
      Ratio(seal.requests_per_second(), echo.requests_per_second()).c_str(),
      open.requests_per_second(), open.percentile_us(0.5), open.percentile_us(0.99),
      Ratio(open.requests_per_second(), echo.requests_per_second()).c_str(),
      echo.server_cpu_us_per_call(), seal.server_cpu_us_per_call(), open.server_cpu_us_per_call());
  std::fflush(stdout);
}

// The clients of one message size.
struct Clients {
  std::function<UnaryCall()> echo, seal, open;
};

// One row: `rounds` rounds of Echo, Seal, Open at `concurrency`; adds its ratios.
absl::Status RunRow(const Options& options, int64_t size, int64_t concurrency,
                    const Clients& clients, UnaryRatios& ratios) {
  UnarySamples echo, seal, open;
  const UnaryBudget budget = PerRound(options);
  const int pid = options.server_pid;
  for (int round = 0; round < options.rounds; ++round) {
    if (absl::Status s = RunUnary(concurrency, budget, pid, clients.echo, echo); !s.ok()) {
      return Annotated("Echo", s);
    }
    if (absl::Status s = RunUnary(concurrency, budget, pid, clients.seal, seal); !s.ok()) {
      return Annotated("Seal", s);
    }
    if (absl::Status s = RunUnary(concurrency, budget, pid, clients.open, open); !s.ok()) {
      return Annotated("Open", s);
    }
  }
  ratios.seal[size].push_back(seal.requests_per_second() / echo.requests_per_second());
  ratios.open[size].push_back(open.requests_per_second() / echo.requests_per_second());
  PrintRow(size, concurrency, echo, seal, open);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UnaryRatios> RunUnaryRows(const Options& options,
                                         const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& token) {
  PrintHeader(options);
  UnaryRatios ratios;
  for (int64_t size : options.unary_sizes) {
    const std::string data = RandomBytes(size);
    absl::StatusOr<std::string> ciphertext = SealOnce(channel, token, data);
    if (!ciphertext.ok()) return Annotated("Seal", ciphertext.status());
    const Clients clients = {
        [&] { return NewEchoClient(channel, token, data); },
        [&] { return NewSealClient(channel, token, data); },
        [&] { return NewOpenClient(channel, token, *ciphertext); },
    };
    for (int64_t concurrency : options.concurrencies) {
      if (absl::Status s = RunRow(options, size, concurrency, clients, ratios); !s.ok()) return s;
    }
  }
  return ratios;
}

}  // namespace sealbox::load
