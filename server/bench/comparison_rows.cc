#include "server/bench/comparison_rows.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "server/bench/load_common.h"
#include "server/bench/stats.h"
#include "server/bench/tenant.h"
#include "server/bench/unary_clients.h"
#include "server/bench/unary_load.h"

namespace sealbox::load {
namespace {

absl::StatusOr<std::optional<double>> BatchRows(const Options& options,
                                                const std::shared_ptr<grpc::Channel>& channel,
                                                const std::string& token) {
  const int items = options.batch_items;
  if (items <= 0) return std::optional<double>();
  const std::string plaintext = RandomBytes(options.batch_item_bytes);
  const std::string item_size = SizeName(static_cast<int64_t>(plaintext.size()));
  std::printf(
      "\nBatch: SealBatch of %d items against unary Seal of one, items of %s, %d rounds "
      "of %g s each way; items sealed per second\n",
      items, item_size.c_str(), options.rounds, options.seconds / options.rounds);
  std::printf("%-7s %4s | %14s %14s %8s\n", "item", "conc", "Seal items/s", "Batch items/s",
              "gain");
  std::optional<double> worst;
  for (int64_t concurrency : options.concurrencies) {
    UnarySamples single, batch;
    if (absl::Status s = RunAlternating(
            concurrency, options.rounds, PerRound(options),
            {options.server_pid, [&] { return NewSealClient(channel, token, plaintext); }, &single},
            {options.server_pid,
             [&] { return NewSealBatchClient(channel, token, plaintext, items); }, &batch});
        !s.ok()) {
      return s;
    }
    const double single_items = single.requests_per_second();
    const double batch_items = batch.requests_per_second() * items;
    const double gain = batch_items / single_items;
    worst = std::min(worst.value_or(gain), gain);
    std::printf("%-7s %4lld | %14.0f %14.0f %7.1fx\n", item_size.c_str(),
                static_cast<long long>(concurrency), single_items, batch_items, gain);
    std::fflush(stdout);
  }
  return worst;
}

void PrintAuditRow(int64_t concurrency, const UnarySamples& off, const UnarySamples& on,
                   double ratio) {
  std::printf("%4lld | %10.0f %7.0f %7.0f | %10.0f %7.0f %7.0f | %9.3f | %6.1f %6.1f\n",
              static_cast<long long>(concurrency), off.requests_per_second(),
              off.percentile_us(0.5), off.percentile_us(0.99), on.requests_per_second(),
              on.percentile_us(0.5), on.percentile_us(0.99), ratio, off.server_cpu_us_per_call(),
              on.server_cpu_us_per_call());
  std::fflush(stdout);
}

absl::StatusOr<std::optional<double>> AuditRows(const Options& options,
                                                const std::shared_ptr<grpc::Channel>& channel,
                                                const std::string& token,
                                                const std::string& admin_token,
                                                const grpc::ChannelArguments& args) {
  if (options.audit_server.empty()) return std::optional<double>();
  std::shared_ptr<grpc::Channel> audited =
      grpc::CreateCustomChannel(options.audit_server, grpc::InsecureChannelCredentials(), args);
  absl::StatusOr<std::string> audited_token = CreateTenant(audited, admin_token);
  if (!audited_token.ok()) return audited_token.status();
  const std::string plaintext = RandomBytes(1024);
  std::printf(
      "\nAudit: unary Seal of 1 KiB on a server with --audit=all (a JSON line per call "
      "to a file) against one without, %d rounds of %g s each way\n",
      options.rounds, options.seconds / options.rounds);
  std::printf("%4s | %10s %7s %7s | %10s %7s %7s | %9s | %s\n", "conc", "off Seal/s", "p50", "p99",
              "on Seal/s", "p50", "p99", "on/off", "server us/call off on");
  std::vector<double> ratios;
  for (int64_t concurrency : options.concurrencies) {
    UnarySamples off, on;
    if (absl::Status s = RunAlternating(
            concurrency, options.rounds, PerRound(options),
            {options.server_pid, [&] { return NewSealClient(channel, token, plaintext); }, &off},
            {options.audit_server_pid,
             [&] { return NewSealClient(audited, *audited_token, plaintext); }, &on});
        !s.ok()) {
      return s;
    }
    const double ratio = on.requests_per_second() / off.requests_per_second();
    ratios.push_back(ratio);
    PrintAuditRow(concurrency, off, on, ratio);
  }
  return server::bench::Median(ratios);
}

}  // namespace

absl::StatusOr<std::optional<double>> RunBatchRows(const Options& options,
                                                   const std::shared_ptr<grpc::Channel>& channel,
                                                   const std::string& token) {
  absl::StatusOr<std::optional<double>> gain = BatchRows(options, channel, token);
  if (!gain.ok()) return Annotated("SealBatch", gain.status());
  return gain;
}

absl::StatusOr<std::optional<double>> RunAuditRows(const Options& options,
                                                   const std::shared_ptr<grpc::Channel>& channel,
                                                   const std::string& token,
                                                   const std::string& admin_token,
                                                   const grpc::ChannelArguments& args) {
  absl::StatusOr<std::optional<double>> ratio =
      AuditRows(options, channel, token, admin_token, args);
  if (!ratio.ok()) return Annotated("audit rows", ratio.status());
  return ratio;
}

}  // namespace sealbox::load
