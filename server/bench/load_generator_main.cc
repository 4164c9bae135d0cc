// Load generator for `tools/dev bench service`: drives a running
// sealbox-bench-server (sealbox-server plus Echo) over loopback and prints, side by
// side,
//
//   unary     Echo | Seal | Open   at each message size and concurrency:
//             requests/s, p50 and p99 latency, and Seal/Echo, Open/Echo
//             (unary_rows.h)
//   batch     SealBatch items/s against unary Seal's (comparison_rows.h)
//   audit     unary 1 KiB Seal on --audit_server (auditing every call) against
//             --server, alternating rounds (comparison_rows.h)
//   streams   Discard | EchoStream | SealStream | OpenStream of --stream_bytes, in
//             rounds: MB/s and ratios, each round and the medians (stream_rows.h)
//   memory    the server's RSS growth within each stream, and its VmHWM (peak RSS)
//             over the whole run (needs --server_pid; process_stats.h)
//   summary   the targets, and a last line of the figures runs are compared by
//             (report.h, summary.h)
//
// Echo moves the same bytes with no crypto, auth or metrics, so each ratio is the
// share of the transport's own rate that the data plane keeps; Discard (bytes one
// way, nothing back) checks that EchoStream itself runs at the transport's rate. It
// starts nothing itself: it creates a fresh tenant, key and token through the admin
// plane (tenant.h) and measures against whatever server it is given. This file
// holds only the flags and the order of the tables.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "server/bench/comparison_rows.h"
#include "server/bench/options.h"
#include "server/bench/report.h"
#include "server/bench/stream_rows.h"
#include "server/bench/tenant.h"
#include "server/bench/unary_rows.h"
#include "server/process/malloc_tuning.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051",
          "host:port of a sealbox-bench-server (sealbox-server plus Echo).");
ABSL_FLAG(std::string, admin_token_file, "",
          "File with the server's admin token (to create the benchmark's tenant).");
ABSL_FLAG(int, server_pid, 0,
          "The server's process id, to read its memory from /proc; 0: not reported.");
ABSL_FLAG(double, seconds, 3, "Measured seconds per unary row and method.");
ABSL_FLAG(int, rounds, 3,
          "Each unary row alternates Echo, Seal and Open this many times (seconds/rounds "
          "each), so that background load falls on all three alike.");
ABSL_FLAG(double, warmup_seconds, 0.2, "Unmeasured calls before each unary measurement.");
ABSL_FLAG(int64_t, max_requests, 1000000,
          "Upper bound on the requests of one unary measurement, whatever --seconds.");
ABSL_FLAG(std::vector<std::string>, concurrency, std::vector<std::string>({"1", "4", "16"}),
          "Concurrent clients (one thread and one blocking call each) per unary row.");
ABSL_FLAG(std::vector<std::string>, unary_bytes, std::vector<std::string>({"1024", "65536"}),
          "Message sizes of the unary rows.");
ABSL_FLAG(int, batch_items, 100,
          "Items per SealBatch call in the batch rows, measured against unary Seal of one "
          "item; 0: no batch rows.");
ABSL_FLAG(int64_t, batch_item_bytes, 64, "Plaintext bytes of each item in the batch rows.");
ABSL_FLAG(std::string, audit_server, "",
          "host:port of a second sealbox-bench-server started with --audit=all (same "
          "admin token): unary 1 KiB Seal on it is measured against --server's, "
          "alternating rounds. Empty: no audit rows.");
ABSL_FLAG(int, audit_server_pid, 0,
          "The --audit_server's process id, for its CPU time per call; 0: not reported.");
ABSL_FLAG(int64_t, stream_bytes, int64_t{1} << 30, "Bytes sent through each stream.");
ABSL_FLAG(int, stream_rounds, 3,
          "Each stream row runs Discard, EchoStream, SealStream and OpenStream this many "
          "times, so that background load falls on all alike; the medians are reported.");
ABSL_FLAG(std::vector<std::string>, stream_message_bytes,
          std::vector<std::string>({"65536", "1048576"}),
          "Bytes per request message of the stream rows.");

namespace sealbox::load {
namespace {

// Exits with status 2, as for any bad flag, unless every item is a positive number.
std::vector<int64_t> ParseList(const std::vector<std::string>& items, const char* flag) {
  std::vector<int64_t> values;
  for (const std::string& item : items) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(item, &value) || value <= 0) {
      std::fprintf(stderr, "load_generator: --%s: \"%s\" is not a positive number\n", flag,
                   item.c_str());
      std::exit(2);
    }
    values.push_back(value);
  }
  return values;
}

Options OptionsFromFlags() {
  Options options;
  options.server = absl::GetFlag(FLAGS_server);
  options.admin_token_file = absl::GetFlag(FLAGS_admin_token_file);
  options.server_pid = absl::GetFlag(FLAGS_server_pid);
  options.seconds = absl::GetFlag(FLAGS_seconds);
  options.rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  options.warmup_seconds = absl::GetFlag(FLAGS_warmup_seconds);
  options.max_requests = absl::GetFlag(FLAGS_max_requests);
  options.concurrencies = ParseList(absl::GetFlag(FLAGS_concurrency), "concurrency");
  options.unary_sizes = ParseList(absl::GetFlag(FLAGS_unary_bytes), "unary_bytes");
  options.stream_message_sizes =
      ParseList(absl::GetFlag(FLAGS_stream_message_bytes), "stream_message_bytes");
  options.batch_items = absl::GetFlag(FLAGS_batch_items);
  options.batch_item_bytes = absl::GetFlag(FLAGS_batch_item_bytes);
  options.audit_server = absl::GetFlag(FLAGS_audit_server);
  options.audit_server_pid = absl::GetFlag(FLAGS_audit_server_pid);
  options.stream_bytes = static_cast<uint64_t>(absl::GetFlag(FLAGS_stream_bytes));
  options.stream_rounds = absl::GetFlag(FLAGS_stream_rounds);
  return options;
}

// The server's own transport settings (server/process/server.cc): a fixed receive
// window per stream in place of bandwidth-delay probing, and room for its largest
// messages.
grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(8 << 20);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 4 << 20);
  return args;
}

// The tables in order, each printed as it is measured.
absl::StatusOr<RunFigures> MeasureAll(const Options& options,
                                      const std::shared_ptr<grpc::Channel>& channel,
                                      const grpc::ChannelArguments& args,
                                      const std::string& admin_token, const std::string& token) {
  RunFigures run;
  run.server_pid = options.server_pid;
  absl::StatusOr<UnaryRatios> unary = RunUnaryRows(options, channel, token);
  if (!unary.ok()) return unary.status();
  run.unary = *std::move(unary);
  absl::StatusOr<std::optional<double>> batch_gain = RunBatchRows(options, channel, token);
  if (!batch_gain.ok()) return batch_gain.status();
  run.batch_gain = *batch_gain;
  absl::StatusOr<std::optional<double>> audit_ratio =
      RunAuditRows(options, channel, token, admin_token, args);
  if (!audit_ratio.ok()) return audit_ratio.status();
  run.audit_ratio = *audit_ratio;
  absl::StatusOr<StreamFigures> streams = RunStreamRows(options, channel, token);
  if (!streams.ok()) return streams.status();
  run.streams = *std::move(streams);
  return run;
}

int Run(const Options& options) {
  absl::StatusOr<std::string> admin_token = ReadToken(options.admin_token_file);
  if (!admin_token.ok()) {
    std::fprintf(stderr, "load_generator: --admin_token_file: %s\n",
                 std::string(admin_token.status().message()).c_str());
    return 2;
  }
  const grpc::ChannelArguments args = ChannelArgs();
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(options.server, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "load_generator: cannot connect to %s\n", options.server.c_str());
    return 1;
  }
  absl::StatusOr<std::string> token = CreateTenant(channel, *admin_token);
  if (!token.ok()) {
    std::fprintf(stderr, "load_generator: %s\n", std::string(token.status().message()).c_str());
    return 1;
  }
  std::printf(
      "load_generator: Seal and Open beside Echo, the gRPC baseline: server %s, "
      "AES-256-GCM key, %u CPUs here, loopback, no TLS\n\n",
      options.server.c_str(), std::thread::hardware_concurrency());
  absl::StatusOr<RunFigures> run = MeasureAll(options, channel, args, *admin_token, *token);
  if (!run.ok()) {
    std::fprintf(stderr, "load_generator: %s\n", std::string(run.status().message()).c_str());
    return 1;
  }
  PrintReport(*run);
  return 0;
}

}  // namespace
}  // namespace sealbox::load

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "load_generator --server HOST:PORT --admin_token_file FILE [--server_pid PID]\n"
      "Measures a sealbox-bench-server (tools/dev bench service).");
  absl::ParseCommandLine(argc, argv);
  // The client runs as lean as the server does, so that it is never what sets the
  // rate: the server's malloc settings (no trimming between messages) and no
  // deadlock detection on every absl::Mutex (abseil's debug default).
  sealbox::server::TuneMalloc();
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return sealbox::load::Run(sealbox::load::OptionsFromFlags());
}
