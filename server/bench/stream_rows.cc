#include "server/bench/stream_rows.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "server/bench/load_common.h"
#include "server/bench/process_stats.h"
#include "server/bench/stats.h"
#include "server/bench/streams.h"

namespace sealbox::load {
namespace {

using server::bench::Median;

void PrintHeader(uint64_t stream_bytes, int stream_rounds) {
  std::printf(
      "\nStreams of %s each, in %d rounds of Discard (one way), EchoStream, SealStream, "
      "OpenStream; MB/s (10^6 bytes/s) of data sent; the median row takes each "
      "column's median; the server's and this client's CPU time per MiB of data, in us; "
      "the server's RSS growth in a stream (peak - before) in MiB\n",
      SizeName(stream_bytes).c_str(), stream_rounds);
  std::printf("%-8s %6s | %8s %10s %10s %10s | %12s %9s %9s | %-20s | %-20s | %-17s\n", "message",
              "round", "Discard", "EchoStream", "SealStream", "OpenStream", "Echo/Discard",
              "Seal/Echo", "Open/Echo", "server us/MiB E S O", "client us/MiB E S O",
              "RSS MiB E S O");
  std::fflush(stdout);
}

std::string Cpu(double e, double s, double o) {
  return absl::StrFormat("%6.0f %6.0f %6.0f", e, s, o);
}

std::string Growth(const StreamResult& e, const StreamResult& s, const StreamResult& o) {
  return absl::StrFormat("%5.1f %5.1f %5.1f", e.rss.growth_kib() / 1024.0,
                         s.rss.growth_kib() / 1024.0, o.rss.growth_kib() / 1024.0);
}

// Each column's figures over the rounds of one message size, for the median row.
struct Columns {
  std::vector<double> discard_rates, echo_rates, seal_rates, open_rates;
  std::vector<double> echo_ratios, seal_ratios, open_ratios;
  std::vector<double> echo_cpu, seal_cpu, open_cpu;
  std::vector<double> echo_client, seal_client, open_client;

  void Add(const StreamResult& discard, const StreamResult& echo, const StreamResult& seal,
           const StreamResult& open) {
    discard_rates.push_back(discard.mb_per_second);
    echo_rates.push_back(echo.mb_per_second);
    seal_rates.push_back(seal.mb_per_second);
    open_rates.push_back(open.mb_per_second);
    echo_ratios.push_back(echo.mb_per_second / discard.mb_per_second);
    seal_ratios.push_back(seal.mb_per_second / echo.mb_per_second);
    open_ratios.push_back(open.mb_per_second / echo.mb_per_second);
    echo_cpu.push_back(echo.server_cpu_us_per_mib);
    seal_cpu.push_back(seal.server_cpu_us_per_mib);
    open_cpu.push_back(open.server_cpu_us_per_mib);
    echo_client.push_back(echo.client_cpu_us_per_mib);
    seal_client.push_back(seal.client_cpu_us_per_mib);
    open_client.push_back(open.client_cpu_us_per_mib);
  }
};

// One round at one message size: the four streams, then their row.
absl::Status RunRound(Streams& streams, int64_t size, int round, Columns& columns,
                      StreamFigures& figures) {
  absl::StatusOr<StreamResult> discard = streams.Discard(size);
  if (!discard.ok()) return Annotated("Discard", discard.status());
  absl::StatusOr<StreamResult> echo = streams.EchoStream(size);
  if (!echo.ok()) return Annotated("EchoStream", echo.status());
  absl::StatusOr<StreamResult> seal = streams.SealStream(size);
  if (!seal.ok()) return Annotated("SealStream", seal.status());
  absl::StatusOr<StreamResult> open = streams.OpenStream(size);
  if (!open.ok()) return Annotated("OpenStream", open.status());
  columns.Add(*discard, *echo, *seal, *open);
  for (const StreamResult* r : {&*echo, &*seal, &*open}) {
    figures.worst_growth_kib = std::max(figures.worst_growth_kib, r->rss.growth_kib());
    figures.peak_rss_kib = std::max(figures.peak_rss_kib, r->rss.peak_kib);
  }
  const Columns& c = columns;
  std::printf(
      "%-8s %6d | %8.0f %10.0f %10.0f %10.0f | %12.2f %9.2f %9.2f | %-20s | %-20s | "
      "%-17s\n",
      SizeName(size).c_str(), round, discard->mb_per_second, echo->mb_per_second,
      seal->mb_per_second, open->mb_per_second, c.echo_ratios.back(), c.seal_ratios.back(),
      c.open_ratios.back(), Cpu(c.echo_cpu.back(), c.seal_cpu.back(), c.open_cpu.back()).c_str(),
      Cpu(c.echo_client.back(), c.seal_client.back(), c.open_client.back()).c_str(),
      Growth(*echo, *seal, *open).c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

void PrintMedianRow(int64_t size, const Columns& c, double seal_ratio, double open_ratio) {
  std::printf("%-8s %6s | %8.0f %10.0f %10.0f %10.0f | %12.2f %9.2f %9.2f | %-20s | %-20s |\n",
              SizeName(size).c_str(), "median", Median(c.discard_rates), Median(c.echo_rates),
              Median(c.seal_rates), Median(c.open_rates), Median(c.echo_ratios), seal_ratio,
              open_ratio, Cpu(Median(c.echo_cpu), Median(c.seal_cpu), Median(c.open_cpu)).c_str(),
              Cpu(Median(c.echo_client), Median(c.seal_client), Median(c.open_client)).c_str());
  std::fflush(stdout);
}

}  // namespace

absl::StatusOr<StreamFigures> RunStreamRows(const Options& options,
                                            const std::shared_ptr<grpc::Channel>& channel,
                                            const std::string& token) {
  StreamFigures figures;
  // VmHWM so far, before the first stream resets it.
  figures.peak_rss_kib = options.server_pid ? ProcStatusKib(options.server_pid, "VmHWM:") : 0;
  PrintHeader(options.stream_bytes, options.stream_rounds);
  Streams streams(channel, token, options.server_pid, options.stream_bytes);
  if (options.stream_bytes == 0) return figures;
  for (int64_t size : options.stream_message_sizes) {
    Columns columns;
    for (int round = 1; round <= options.stream_rounds; ++round) {
      if (absl::Status s = RunRound(streams, size, round, columns, figures); !s.ok()) return s;
    }
    const double seal_ratio = Median(columns.seal_ratios);
    const double open_ratio = Median(columns.open_ratios);
    figures.seal_ratios[size] = seal_ratio;
    figures.worst_seal_ratio = std::min(figures.worst_seal_ratio.value_or(seal_ratio), seal_ratio);
    figures.worst_open_ratio = std::min(figures.worst_open_ratio.value_or(open_ratio), open_ratio);
    PrintMedianRow(size, columns, seal_ratio, open_ratio);
  }
  return figures;
}

}  // namespace sealbox::load
