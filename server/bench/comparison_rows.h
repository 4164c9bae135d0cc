// The rows of `tools/dev bench service` that set one unary Seal against another, in
// alternating rounds at each concurrency: SealBatch against single Seals (issue
// 19), and Seal on a server auditing every call against one auditing none (issue
// 20). Each prints its table and returns the figure its target is judged by.
#ifndef SEALBOX_SERVER_BENCH_COMPARISON_ROWS_H_
#define SEALBOX_SERVER_BENCH_COMPARISON_ROWS_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "server/bench/options.h"

namespace sealbox::load {

// Items sealed per second by SealBatch of --batch_items items against unary Seal of
// the same items. Returns the lowest gain over the concurrencies; nullopt when
// --batch_items is 0. Errors start "SealBatch: ".
absl::StatusOr<std::optional<double>> RunBatchRows(const Options& options,
                                                   const std::shared_ptr<grpc::Channel>& channel,
                                                   const std::string& token);

// Unary 1 KiB Seal on --audit_server (a tenant of its own, made with `admin_token`
// over a channel with `args`) against the same on `channel`. Returns the median
// over the concurrencies of audited/unaudited requests/s; nullopt without an
// --audit_server. Errors start "audit rows: ".
absl::StatusOr<std::optional<double>> RunAuditRows(const Options& options,
                                                   const std::shared_ptr<grpc::Channel>& channel,
                                                   const std::string& token,
                                                   const std::string& admin_token,
                                                   const grpc::ChannelArguments& args);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_COMPARISON_ROWS_H_
