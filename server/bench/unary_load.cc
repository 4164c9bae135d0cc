#include "server/bench/unary_load.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/bench/load_common.h"
#include "server/bench/process_stats.h"
#include "server/bench/stats.h"

namespace sealbox::load {
namespace {

Clock::duration Duration(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

absl::Status CallFailed(const grpc::Status& status) {
  return absl::InternalError(absl::StrCat(
      "call failed with gRPC status ", status.error_code(), " ", status.error_message(),
      status.error_code() == grpc::StatusCode::UNIMPLEMENTED
          ? " (is it sealbox-bench-server? sealbox-server has no Echo)"
          : ""));
}

}  // namespace

void UnarySamples::Add(const std::vector<double>& latencies_us, double seconds) {
  latencies_us_.insert(latencies_us_.end(), latencies_us.begin(), latencies_us.end());
  seconds_ += seconds;
}

void UnarySamples::AddServerCpu(double seconds, int64_t calls) {
  server_cpu_seconds_ += seconds;
  calls_ += calls;
}

double UnarySamples::percentile_us(double p) const {
  return server::bench::Percentile(latencies_us_, p);
}

absl::Status RunUnary(int concurrency, const UnaryBudget& budget, int server_pid,
                      const std::function<UnaryCall()>& new_client, UnarySamples& samples) {
  const auto measure_from = Clock::now() + Duration(budget.warmup_seconds);
  const auto measure_until = measure_from + Duration(budget.seconds);

  std::atomic<int64_t> measured{0};
  std::atomic<int64_t> calls{0};  // warm-up included
  std::atomic<bool> failed{false};
  std::mutex mu;
  grpc::Status first_error;
  std::vector<double> latencies_us;
  Clock::time_point last_done = measure_from;

  const double server_cpu_before = server_pid ? ProcessCpuSeconds(server_pid) : 0;
  std::vector<std::thread> clients;
  for (int i = 0; i < concurrency; ++i) {
    clients.emplace_back([&] {
      UnaryCall call = new_client();
      std::vector<double> mine;
      mine.reserve(1 << 16);
      Clock::time_point end = measure_from;
      while (!failed.load(std::memory_order_relaxed)) {
        const Clock::time_point start = Clock::now();
        if (start >= measure_until) break;
        if (start >= measure_from &&
            measured.fetch_add(1, std::memory_order_relaxed) >= budget.max_requests) {
          break;
        }
        grpc::Status status = call();
        end = Clock::now();
        calls.fetch_add(1, std::memory_order_relaxed);
        if (!status.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failed.exchange(true)) first_error = status;
          break;
        }
        if (start >= measure_from) mine.push_back(Seconds(end - start) * 1e6);
      }
      std::lock_guard<std::mutex> lock(mu);
      latencies_us.insert(latencies_us.end(), mine.begin(), mine.end());
      last_done = std::max(last_done, end);
    });
  }
  for (std::thread& t : clients) t.join();
  if (server_pid != 0) {
    samples.AddServerCpu(ProcessCpuSeconds(server_pid) - server_cpu_before, calls.load());
  }
  if (failed) return CallFailed(first_error);
  if (latencies_us.empty()) return absl::InternalError("no call completed in time");
  samples.Add(latencies_us, Seconds(last_done - measure_from));
  return absl::OkStatus();
}

UnaryBudget PerRound(const Options& options) {
  return {options.warmup_seconds, options.seconds / options.rounds, options.max_requests};
}

absl::Status RunAlternating(int64_t concurrency, int rounds, const UnaryBudget& per_round,
                            const Side& a, const Side& b) {
  for (int round = 0; round < rounds; ++round) {
    for (const Side* side : {&a, &b}) {
      if (absl::Status s = RunUnary(static_cast<int>(concurrency), per_round, side->server_pid,
                                    side->new_client, *side->samples);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sealbox::load
