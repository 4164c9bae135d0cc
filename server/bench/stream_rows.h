// The stream table of `tools/dev bench service`: for each message size, rounds of
// Discard, EchoStream, SealStream and OpenStream (streams.h), a row per round and a
// row of each column's median, with the ratios the report judges.
#ifndef SEALBOX_SERVER_BENCH_STREAM_ROWS_H_
#define SEALBOX_SERVER_BENCH_STREAM_ROWS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "server/bench/figures.h"
#include "server/bench/options.h"

namespace sealbox::load {

// Prints the table, a row as each round ends; no rows when --stream_bytes is 0.
// Errors name the stream that failed.
absl::StatusOr<StreamFigures> RunStreamRows(const Options& options,
                                            const std::shared_ptr<grpc::Channel>& channel,
                                            const std::string& token);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_STREAM_ROWS_H_
