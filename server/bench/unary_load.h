// How the load generator measures unary calls: a number of client threads, each
// making one blocking call after another, first unmeasured (warm-up), then timed.
// The rows (unary_rows.h, comparison_rows.h) decide what is called and print it.
#ifndef SEALBOX_SERVER_BENCH_UNARY_LOAD_H_
#define SEALBOX_SERVER_BENCH_UNARY_LOAD_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"
#include "server/bench/options.h"

namespace sealbox::load {

// The calls of one method in one row, over all its rounds.
class UnarySamples {
 public:
  void Add(const std::vector<double>& latencies_us, double seconds);

  // The server's CPU time over a run of `calls` calls (warm-up included).
  void AddServerCpu(double seconds, int64_t calls);

  double requests_per_second() const { return latencies_us_.size() / seconds_; }
  double server_cpu_us_per_call() const {
    return calls_ > 0 ? server_cpu_seconds_ * 1e6 / calls_ : 0;
  }
  // p in [0, 1].
  double percentile_us(double p) const;

 private:
  std::vector<double> latencies_us_;
  double seconds_ = 0;
  double server_cpu_seconds_ = 0;
  int64_t calls_ = 0;
};

// One blocking call of one client; each client thread makes its own.
using UnaryCall = std::function<grpc::Status()>;

// How long one measurement runs.
struct UnaryBudget {
  double warmup_seconds = 0;  // unmeasured calls first,
  double seconds = 0;         // then measured ones for this long
  int64_t max_requests = 0;   // or until this many have started
};

// `concurrency` threads each call in a loop: unmeasured for the warm-up, then
// measured for the budget's seconds or until its requests run out. With a
// `server_pid`, also charges the server's CPU time to `samples`.
absl::Status RunUnary(int concurrency, const UnaryBudget& budget, int server_pid,
                      const std::function<UnaryCall()>& new_client, UnarySamples& samples);

// --seconds shared among --rounds rounds: the budget of each run in a unary row.
UnaryBudget PerRound(const Options& options);

// One side of a comparison: a server (its pid for CPU time, or 0), its clients, and
// where its samples go.
struct Side {
  int server_pid;
  std::function<UnaryCall()> new_client;
  UnarySamples* samples;
};

// `rounds` rounds of `a` then `b` at `concurrency`, each run on `per_round`, so
// that background load falls on both alike.
absl::Status RunAlternating(int64_t concurrency, int rounds, const UnaryBudget& per_round,
                            const Side& a, const Side& b);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_UNARY_LOAD_H_
