// The unary table of `tools/dev bench service`: Echo, Seal and Open at each message
// size and concurrency, in alternating rounds, with requests/s, p50 and p99 latency,
// Seal/Echo and Open/Echo, and the server's CPU time per call.
#ifndef SEALBOX_SERVER_BENCH_UNARY_ROWS_H_
#define SEALBOX_SERVER_BENCH_UNARY_ROWS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "server/bench/figures.h"
#include "server/bench/options.h"

namespace sealbox::load {

// Prints the table, a row as each is measured. Errors name the method that failed.
absl::StatusOr<UnaryRatios> RunUnaryRows(const Options& options,
                                         const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& token);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_UNARY_ROWS_H_
