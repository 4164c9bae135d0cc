// Load generator for `tools/dev bench service`: drives a running
// sealbox-bench-server (sealbox-server plus Echo) over loopback and prints, side by
// side,
//
//   unary     Echo | Seal | Open   at each message size and concurrency:
//             requests/s, p50 and p99 latency, and Seal/Echo, Open/Echo
//   streams   Discard | EchoStream | SealStream | OpenStream of --stream_bytes, in
//             rounds: MB/s and ratios, each round and the medians
//   batch     SealBatch items/s against unary Seal's
//   audit     unary 1 KiB Seal on --audit_server (auditing every call) against
//             --server, alternating rounds
//   memory    the server's RSS growth within each stream, and its VmHWM (peak RSS)
//             over the whole run (needs --server_pid)
//   summary   a last line of the figures runs are compared by (summary.h)
//
// Echo moves the same bytes with no crypto, auth or metrics, so each ratio is the
// share of the transport's own rate that the data plane keeps; Discard (bytes one
// way, nothing back) checks that EchoStream itself runs at the transport's rate. It starts nothing
// itself: it creates a fresh tenant, key and token through the admin plane and
// measures against whatever server it is given.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "sealbox/bench/echo.grpc.pb.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/bench/stats.h"
#include "server/bench/summary.h"
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

using Clock = std::chrono::steady_clock;
using bench::Echo;
using bench::EchoMessage;

constexpr char kKey[] = "bench";
constexpr size_t kPatternBytes = 1 << 20;  // the stream plaintext repeats this much

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string SizeName(int64_t bytes) {
  if (bytes % (1 << 30) == 0) return absl::StrCat(bytes >> 30, " GiB");
  if (bytes % (1 << 20) == 0) return absl::StrCat(bytes >> 20, " MiB");
  if (bytes % (1 << 10) == 0) return absl::StrCat(bytes >> 10, " KiB");
  return absl::StrCat(bytes, " B");
}

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

std::string RandomBytes(size_t size) {
  std::mt19937_64 random(42);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

// ---- The server's memory, from /proc/<pid>/status -------------------------------

// A "VmRSS:" style field in KiB; 0 when unreadable.
int64_t ProcStatusKib(int pid, const char* field) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) != 0) continue;
    int64_t kib = 0;
    std::istringstream(line.substr(std::strlen(field))) >> kib;
    return kib;
  }
  return 0;
}

// The CPU time the process has used (user and system, all threads), in seconds; 0
// when unreadable. Clock ticks, so 10 ms steps: fine over a stream of a second.
double ProcessCpuSeconds(int pid) {
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text;
  std::getline(stat, text);
  // Fields after the command name (which may hold spaces) in parentheses:
  // state(3) ... utime(14) stime(15).
  const size_t end = text.rfind(')');
  if (end == std::string::npos) return 0;
  std::istringstream fields(text.substr(end + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// Resets VmHWM to the current RSS (Linux 4.0+); false where not allowed.
bool ResetPeakRss(int pid) {
  std::ofstream clear_refs(absl::StrCat("/proc/", pid, "/clear_refs"));
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

struct RssDuring {
  int64_t before_kib = 0;
  int64_t peak_kib = 0;
  int64_t after_kib = 0;
  int64_t growth_kib() const { return peak_kib - before_kib; }
};

// Follows the server's RSS while one measurement runs: VmHWM reset at the start
// where allowed, and VmRSS sampled every 5 ms in any case.
class RssMonitor {
 public:
  explicit RssMonitor(int pid) : pid_(pid) {
    if (pid_ == 0) return;
    hwm_reset_ = ResetPeakRss(pid_);
    result_.before_kib = ProcStatusKib(pid_, "VmRSS:");
    result_.peak_kib = result_.before_kib;
    sampler_ = std::thread([this] {
      while (!done_.load()) {
        result_.peak_kib = std::max(result_.peak_kib, ProcStatusKib(pid_, "VmRSS:"));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }

  RssDuring Stop() {
    if (pid_ == 0) return result_;
    done_ = true;
    sampler_.join();
    result_.after_kib = ProcStatusKib(pid_, "VmRSS:");
    result_.peak_kib = std::max(result_.peak_kib, result_.after_kib);
    if (hwm_reset_) result_.peak_kib = std::max(result_.peak_kib, ProcStatusKib(pid_, "VmHWM:"));
    return result_;
  }

 private:
  int pid_;
  bool hwm_reset_ = false;
  RssDuring result_;
  std::atomic<bool> done_{false};
  std::thread sampler_;
};

// ---- Unary calls ----------------------------------------------------------------

// The calls of one method in one row, over all its rounds.
class UnarySamples {
 public:
  void Add(const std::vector<double>& latencies_us, double seconds) {
    latencies_us_.insert(latencies_us_.end(), latencies_us.begin(), latencies_us.end());
    seconds_ += seconds;
  }

  // The server's CPU time over a run of `calls` calls (warm-up included).
  void AddServerCpu(double seconds, int64_t calls) {
    server_cpu_seconds_ += seconds;
    calls_ += calls;
  }

  double requests_per_second() const { return latencies_us_.size() / seconds_; }
  double server_cpu_us_per_call() const {
    return calls_ > 0 ? server_cpu_seconds_ * 1e6 / calls_ : 0;
  }
  // p in [0, 1].
  double percentile_us(double p) const { return server::bench::Percentile(latencies_us_, p); }

 private:
  std::vector<double> latencies_us_;
  double seconds_ = 0;
  double server_cpu_seconds_ = 0;
  int64_t calls_ = 0;
};

// One blocking call of one client; each client thread makes its own.
using UnaryCall = std::function<grpc::Status()>;

// `concurrency` threads each call in a loop: unmeasured for the warm-up, then
// measured for `seconds` or until the request budget runs out.
absl::Status RunUnary(int concurrency, double seconds, int server_pid,
                      const std::function<UnaryCall()>& new_client, UnarySamples& samples) {
  const auto measure_from =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(absl::GetFlag(FLAGS_warmup_seconds)));
  const auto measure_until = measure_from + std::chrono::duration_cast<Clock::duration>(
                                                std::chrono::duration<double>(seconds));
  const int64_t max_requests = absl::GetFlag(FLAGS_max_requests);

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
            measured.fetch_add(1, std::memory_order_relaxed) >= max_requests) {
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
  if (failed) {
    return absl::InternalError(absl::StrCat(
        "call failed with gRPC status ", first_error.error_code(), " ", first_error.error_message(),
        first_error.error_code() == grpc::StatusCode::UNIMPLEMENTED
            ? " (is it sealbox-bench-server? sealbox-server has no Echo)"
            : ""));
  }
  if (latencies_us.empty()) return absl::InternalError("no call completed in time");
  samples.Add(latencies_us, Seconds(last_done - measure_from));
  return absl::OkStatus();
}

// ---- Streams --------------------------------------------------------------------

// One bidirectional stream driven from gRPC's own threads (the callback API): the
// next request goes out as soon as the last is written, and each response is taken
// as it arrives, so neither direction waits on the other. The blocking API's writer
// and reader threads handed every message between threads and spent more CPU than
// the server did, so the client, not the server, set the rate.
template <typename Request, typename Response>
class Pump final : public grpc::ClientBidiReactor<Request, Response> {
 public:
  // `next` fills the next request, or returns false at the end of the stream.
  Pump(std::function<bool(Request&)> next, std::function<void(const Response&)> on_response)
      : next_(std::move(next)), on_response_(std::move(on_response)) {}

  // Runs the call `begin` (a stub's async() method, bound to this reactor) to its end.
  grpc::Status Run(const std::function<void(grpc::ClientContext*, Pump*)>& begin) {
    begin(&context_, this);
    this->StartRead(&response_);
    WriteNext();
    this->StartCall();
    done_.WaitForNotification();
    return status_;
  }

  grpc::ClientContext& context() { return context_; }

  void OnWriteDone(bool ok) override {
    if (ok) WriteNext();  // else the call is failing: OnDone says how
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;
    on_response_(response_);
    this->StartRead(&response_);
  }

  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }

 private:
  void WriteNext() {
    if (next_(request_)) {
      this->StartWrite(&request_);
    } else {
      this->StartWritesDone();
    }
  }

  std::function<bool(Request&)> next_;
  std::function<void(const Response&)> on_response_;
  grpc::ClientContext context_;
  Request request_;
  Response response_;
  grpc::Status status_;
  absl::Notification done_;
};

// A client stream driven the same way, one way only: for Discard.
class Push final : public grpc::ClientWriteReactor<EchoMessage> {
 public:
  explicit Push(std::function<bool(EchoMessage&)> next) : next_(std::move(next)) {}

  grpc::Status Run(Echo::Stub& echo, bench::DiscardSummary& summary) {
    echo.async()->Discard(&context_, &summary, this);
    WriteNext();
    StartCall();
    done_.WaitForNotification();
    return status_;
  }

  void OnWriteDone(bool ok) override {
    if (ok) WriteNext();
  }

  void OnDone(const grpc::Status& status) override {
    status_ = status;
    done_.Notify();
  }

 private:
  void WriteNext() {
    if (next_(message_)) {
      StartWrite(&message_);
    } else {
      StartWritesDone();
    }
  }

  std::function<bool(EchoMessage&)> next_;
  grpc::ClientContext context_;
  EchoMessage message_;
  grpc::Status status_;
  absl::Notification done_;
};

// Where a stream's responses go: appended to a buffer written before timing, so
// that no stream pays for first touches. Past its end bytes are counted, not kept.
class Sink {
 public:
  explicit Sink(std::string& buffer) : buffer_(buffer) {}

  void Keep(const std::string& bytes) {
    if (size_ + bytes.size() <= buffer_.size()) {
      std::memcpy(buffer_.data() + size_, bytes.data(), bytes.size());
    }
    size_ += bytes.size();
  }

  size_t size() const { return size_; }
  bool fits() const { return size_ <= buffer_.size(); }
  // Whether what was kept is exactly `expected`.
  bool Holds(std::string_view expected) const {
    return size_ == expected.size() && std::memcmp(buffer_.data(), expected.data(), size_) == 0;
  }

 private:
  std::string& buffer_;
  size_t size_ = 0;
};

struct StreamResult {
  double mb_per_second = 0;
  double server_cpu_us_per_mib = 0;  // the server's CPU time per MiB of data
  double client_cpu_us_per_mib = 0;  // this process's
  RssDuring rss;
};

// Every stream's client does the same work per byte, as a client moving a large
// object would: it sends each message from a buffer the size of the stream, and
// copies each response into another. Checks (Echo's and Open's bytes are the
// plaintext again) run after the clock stops. At 1 MiB messages the one client core
// is the busier side, so uneven client work (SealStream keeping its ciphertext while
// EchoStream only compared with a cached pattern) showed up in the ratios.
class Streams {
 public:
  Streams(std::shared_ptr<grpc::Channel> channel, std::string token, int server_pid,
          uint64_t stream_bytes)
      : crypto_(v1::Crypto::NewStub(channel)),
        echo_(Echo::NewStub(channel)),
        token_(std::move(token)),
        server_pid_(server_pid),
        stream_bytes_(stream_bytes),
        plaintext_(Repeated(RandomBytes(kPatternBytes), stream_bytes)),
        // The ciphertext has a header and a 16-byte tag per segment (64 KiB or
        // larger); both buffers get some slack, so that a wrong size is seen whole.
        ciphertext_(stream_bytes + stream_bytes / 1024 + (1 << 20), '\0'),
        received_(stream_bytes + (1 << 20), '\0') {}

  // The transport's one-way rate: messages out, nothing back.
  absl::StatusOr<StreamResult> Discard(size_t message_bytes) {
    return Measure([&] {
      uint64_t sent = 0;
      Push push([&](EchoMessage& message) {
        if (sent == stream_bytes_) return false;
        const size_t n = std::min<uint64_t>(message_bytes, stream_bytes_ - sent);
        message.set_data(plaintext_.data() + sent, n);
        sent += n;
        return true;
      });
      bench::DiscardSummary summary;
      grpc::Status status = push.Run(*echo_, summary);
      if (!status.ok()) return absl::InternalError(status.error_message());
      if (static_cast<uint64_t>(summary.bytes()) != stream_bytes_) {
        return absl::InternalError(
            absl::StrCat("Discard received ", summary.bytes(), " of ", stream_bytes_, " bytes"));
      }
      return absl::OkStatus();
    });
  }

  absl::StatusOr<StreamResult> EchoStream(size_t message_bytes) {
    Sink sink(received_);
    absl::StatusOr<StreamResult> result = Measure([&] {
      uint64_t sent = 0;
      Pump<EchoMessage, EchoMessage> pump(
          [&](EchoMessage& message) {
            if (sent == stream_bytes_) return false;
            const size_t n = std::min<uint64_t>(message_bytes, stream_bytes_ - sent);
            message.set_data(plaintext_.data() + sent, n);
            sent += n;
            return true;
          },
          [&](const EchoMessage& message) { sink.Keep(message.data()); });
      Authorize(pump.context());  // as SealStream's and OpenStream's calls are
      grpc::Status status = pump.Run([&](grpc::ClientContext* context, auto* reactor) {
        echo_->async()->EchoStream(context, reactor);
      });
      return status.ok() ? absl::OkStatus() : absl::InternalError(status.error_message());
    });
    return Checked(std::move(result), sink);
  }

  // Keeps the ciphertext for OpenStream.
  absl::StatusOr<StreamResult> SealStream(size_t message_bytes) {
    Sink sink(ciphertext_);
    ciphertext_size_ = 0;
    absl::StatusOr<StreamResult> result = Measure([&] {
      uint64_t sent = 0;
      bool started = false;
      Pump<v1::SealStreamRequest, v1::SealStreamResponse> pump(
          [&](v1::SealStreamRequest& request) {
            if (!started) {
              started = true;
              request.mutable_start()->set_key(kKey);
              return true;
            }
            if (sent == stream_bytes_) return false;
            const size_t n = std::min<uint64_t>(message_bytes, stream_bytes_ - sent);
            request.set_plaintext_chunk(plaintext_.data() + sent, n);
            sent += n;
            return true;
          },
          [&](const v1::SealStreamResponse& response) { sink.Keep(response.ciphertext_chunk()); });
      Authorize(pump.context());
      grpc::Status status = pump.Run([&](grpc::ClientContext* context, auto* reactor) {
        crypto_->async()->SealStream(context, reactor);
      });
      if (!status.ok()) {
        return absl::InternalError(absl::StrCat("SealStream failed: ", status.error_message()));
      }
      if (!sink.fits()) {
        return absl::InternalError("SealStream returned more ciphertext than expected");
      }
      return absl::OkStatus();
    });
    ciphertext_size_ = sink.size();
    return result;
  }

  // Opens the ciphertext of the last SealStream.
  absl::StatusOr<StreamResult> OpenStream(size_t message_bytes) {
    Sink sink(received_);
    absl::StatusOr<StreamResult> result = Measure([&] {
      size_t sent = 0;
      bool started = false;
      Pump<v1::OpenStreamRequest, v1::OpenStreamResponse> pump(
          [&](v1::OpenStreamRequest& request) {
            if (!started) {
              started = true;
              request.mutable_start()->set_key(kKey);
              return true;
            }
            if (sent == ciphertext_size_) return false;
            const size_t n = std::min(message_bytes, ciphertext_size_ - sent);
            request.set_ciphertext_chunk(ciphertext_.data() + sent, n);
            sent += n;
            return true;
          },
          [&](const v1::OpenStreamResponse& response) { sink.Keep(response.plaintext_chunk()); });
      Authorize(pump.context());
      grpc::Status status = pump.Run([&](grpc::ClientContext* context, auto* reactor) {
        crypto_->async()->OpenStream(context, reactor);
      });
      return status.ok() ? absl::OkStatus() : absl::InternalError(status.error_message());
    });
    return Checked(std::move(result), sink);
  }

 private:
  static std::string Repeated(const std::string& pattern, size_t size) {
    std::string out(size, '\0');
    for (size_t at = 0; at < size; at += pattern.size()) {
      std::memcpy(out.data() + at, pattern.data(), std::min(pattern.size(), size - at));
    }
    return out;
  }

  void Authorize(grpc::ClientContext& context) const {
    context.AddMetadata("authorization", "Bearer " + token_);
  }

  // A measured stream whose bytes came back is wrong unless they are the plaintext.
  absl::StatusOr<StreamResult> Checked(absl::StatusOr<StreamResult> result,
                                       const Sink& sink) const {
    if (!result.ok() || sink.Holds(plaintext_)) return result;
    return absl::InternalError(
        absl::StrCat("got back ", sink.size(), " of ", stream_bytes_, " bytes, or some wrong"));
  }

  absl::StatusOr<StreamResult> Measure(const std::function<absl::Status()>& run) {
    RssMonitor rss(server_pid_);
    const double cpu_before = server_pid_ ? ProcessCpuSeconds(server_pid_) : 0;
    const double client_cpu_before = ProcessCpuSeconds(getpid());
    const Clock::time_point start = Clock::now();
    absl::Status status = run();
    const double seconds = Seconds(Clock::now() - start);
    StreamResult result;
    result.rss = rss.Stop();
    if (!status.ok()) return status;
    result.mb_per_second = stream_bytes_ / seconds / 1e6;
    const double mib = static_cast<double>(stream_bytes_) / (1 << 20);
    result.client_cpu_us_per_mib = (ProcessCpuSeconds(getpid()) - client_cpu_before) * 1e6 / mib;
    if (server_pid_ != 0) {
      result.server_cpu_us_per_mib = (ProcessCpuSeconds(server_pid_) - cpu_before) * 1e6 / mib;
    }
    return result;
  }

  std::unique_ptr<v1::Crypto::Stub> crypto_;
  std::unique_ptr<Echo::Stub> echo_;
  std::string token_;
  int server_pid_;
  uint64_t stream_bytes_;
  const std::string plaintext_;  // what every stream sends (Open: sealed)
  std::string ciphertext_;       // of the last SealStream: its first
  size_t ciphertext_size_ = 0;   // ciphertext_size_ bytes
  std::string received_;         // EchoStream's and OpenStream's responses
};

// ---- Setup: a tenant, key and token of its own -----------------------------------

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return std::string(absl::StripAsciiWhitespace(text.str()));
}

absl::StatusOr<std::string> CreateTenant(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& admin_token) {
  std::unique_ptr<v1::Admin::Stub> admin = v1::Admin::NewStub(channel);
  auto call = [&](auto method, const auto& request, auto* response) -> absl::Status {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + admin_token);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status status = ((*admin).*method)(&context, request, response);
    if (status.ok()) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("admin call failed: ", status.error_message()));
  };
  const std::string tenant =
      absl::StrCat("bench-", getpid(), "-", Clock::now().time_since_epoch().count() % 1000000);
  v1::CreateTenantRequest create_tenant;
  create_tenant.set_name(tenant);
  v1::Tenant created_tenant;
  if (absl::Status s = call(&v1::Admin::Stub::CreateTenant, create_tenant, &created_tenant);
      !s.ok()) {
    return s;
  }
  v1::CreateKeyRequest create_key;  // the default algorithm, AES-256-GCM
  create_key.set_tenant(tenant);
  create_key.set_key(kKey);
  v1::Key created_key;
  if (absl::Status s = call(&v1::Admin::Stub::CreateKey, create_key, &created_key); !s.ok()) {
    return s;
  }
  v1::IssueTokenRequest issue;
  issue.set_tenant(tenant);
  issue.set_description("tools/dev bench service");
  v1::IssueTokenResponse issued;
  if (absl::Status s = call(&v1::Admin::Stub::IssueToken, issue, &issued); !s.ok()) return s;
  return issued.token();
}

// ---- The run ---------------------------------------------------------------------

std::string Ratio(double a, double b) { return b > 0 ? absl::StrFormat("%.2f", a / b) : "-"; }

const char* Verdict(bool met) { return met ? "met" : "NOT met"; }

// The median over the concurrencies run of one unary size's ratios to Echo.
std::optional<double> MedianRatio(const std::map<int64_t, std::vector<double>>& by_size,
                                  int64_t size) {
  auto it = by_size.find(size);
  if (it == by_size.end()) return std::nullopt;
  return server::bench::Median(it->second);
}

std::optional<double> RatioAt(const std::map<int64_t, double>& by_size, int64_t size) {
  auto it = by_size.find(size);
  if (it == by_size.end()) return std::nullopt;
  return it->second;
}

// One side of a comparison: a server (its pid for CPU time, or 0), its clients, and
// where its samples go.
struct Side {
  int server_pid;
  std::function<UnaryCall()> new_client;
  UnarySamples* samples;
};

// `rounds` rounds of `a` then `b` at `concurrency`, --seconds split among them, so
// that background load falls on both alike.
absl::Status RunAlternating(int64_t concurrency, int rounds, const Side& a, const Side& b) {
  const double seconds = absl::GetFlag(FLAGS_seconds) / rounds;
  for (int round = 0; round < rounds; ++round) {
    for (const Side* side : {&a, &b}) {
      if (absl::Status s = RunUnary(static_cast<int>(concurrency), seconds, side->server_pid,
                                    side->new_client, *side->samples);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

// A unary Seal client of `plaintext`, each call on its own context.
UnaryCall NewSealClient(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        const std::string& plaintext) {
  auto stub = std::shared_ptr<v1::Crypto::Stub>(v1::Crypto::NewStub(channel));
  auto request = std::make_shared<v1::SealRequest>();
  request->set_key(kKey);
  request->set_plaintext(plaintext);
  return [stub, request, bearer = "Bearer " + token] {
    grpc::ClientContext context;
    context.AddMetadata("authorization", bearer);
    v1::SealResponse response;
    return stub->Seal(&context, *request, &response);
  };
}

// A SealBatch client of `items` items of `plaintext`; a call fails unless every item
// was sealed.
UnaryCall NewSealBatchClient(const std::shared_ptr<grpc::Channel>& channel,
                             const std::string& token, const std::string& plaintext, int items) {
  auto stub = std::shared_ptr<v1::Crypto::Stub>(v1::Crypto::NewStub(channel));
  auto request = std::make_shared<v1::SealBatchRequest>();
  for (int i = 0; i < items; ++i) {
    v1::SealRequest* item = request->add_items();
    item->set_key(kKey);
    item->set_plaintext(plaintext);
  }
  return [stub, request, items, bearer = "Bearer " + token] {
    grpc::ClientContext context;
    context.AddMetadata("authorization", bearer);
    v1::SealBatchResponse response;
    grpc::Status status = stub->SealBatch(&context, *request, &response);
    if (!status.ok()) return status;
    for (const v1::SealBatchResult& result : response.results()) {
      if (!result.has_sealed()) {
        return grpc::Status(grpc::StatusCode::INTERNAL,
                            "a batch item failed: " + result.error().message());
      }
    }
    if (response.results_size() != items) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "a batch answer is short");
    }
    return grpc::Status::OK;
  };
}

// Issue 19's batch rows: items sealed per second by SealBatch against unary Seal of
// the same items, at each concurrency, alternating rounds. Returns the lowest gain.
absl::StatusOr<std::optional<double>> RunBatchRows(const std::shared_ptr<grpc::Channel>& channel,
                                                   const std::string& token, int server_pid,
                                                   const std::vector<int64_t>& concurrencies,
                                                   int rounds) {
  const int items = absl::GetFlag(FLAGS_batch_items);
  if (items <= 0) return std::optional<double>();
  const std::string plaintext = RandomBytes(absl::GetFlag(FLAGS_batch_item_bytes));
  std::printf(
      "\nBatch: SealBatch of %d items against unary Seal of one, items of %s, %d rounds "
      "of %g s each way; items sealed per second\n",
      items, SizeName(static_cast<int64_t>(plaintext.size())).c_str(), rounds,
      absl::GetFlag(FLAGS_seconds) / rounds);
  std::printf("%-7s %4s | %14s %14s %8s\n", "item", "conc", "Seal items/s", "Batch items/s",
              "gain");
  std::optional<double> worst;
  for (int64_t concurrency : concurrencies) {
    UnarySamples single, batch;
    if (absl::Status s = RunAlternating(
            concurrency, rounds,
            {server_pid, [&] { return NewSealClient(channel, token, plaintext); }, &single},
            {server_pid, [&] { return NewSealBatchClient(channel, token, plaintext, items); },
             &batch});
        !s.ok()) {
      return s;
    }
    const double single_items = single.requests_per_second();
    const double batch_items = batch.requests_per_second() * items;
    const double gain = batch_items / single_items;
    worst = std::min(worst.value_or(gain), gain);
    std::printf("%-7s %4lld | %14.0f %14.0f %7.1fx\n",
                SizeName(static_cast<int64_t>(plaintext.size())).c_str(),
                static_cast<long long>(concurrency), single_items, batch_items, gain);
    std::fflush(stdout);
  }
  return worst;
}

// Issue 20's audit rows: unary 1 KiB Seal on a server auditing every call against
// the same on --server (auditing nothing), alternating rounds at each concurrency.
// Returns the median over the concurrencies of audited/unaudited requests/s.
absl::StatusOr<std::optional<double>> RunAuditRows(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
    const std::string& admin_token, const grpc::ChannelArguments& args, int server_pid,
    const std::vector<int64_t>& concurrencies, int rounds) {
  const int audited_pid = absl::GetFlag(FLAGS_audit_server_pid);
  const std::string address = absl::GetFlag(FLAGS_audit_server);
  if (address.empty()) return std::optional<double>();
  std::shared_ptr<grpc::Channel> audited =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  absl::StatusOr<std::string> audited_token = CreateTenant(audited, admin_token);
  if (!audited_token.ok()) return audited_token.status();
  const std::string plaintext = RandomBytes(1024);
  std::printf(
      "\nAudit: unary Seal of 1 KiB on a server with --audit=all (a JSON line per call "
      "to a file) against one without, %d rounds of %g s each way\n",
      rounds, absl::GetFlag(FLAGS_seconds) / rounds);
  std::printf("%4s | %10s %7s %7s | %10s %7s %7s | %9s | %s\n", "conc", "off Seal/s", "p50", "p99",
              "on Seal/s", "p50", "p99", "on/off", "server us/call off on");
  std::vector<double> ratios;
  for (int64_t concurrency : concurrencies) {
    UnarySamples off, on;
    if (absl::Status s = RunAlternating(
            concurrency, rounds,
            {server_pid, [&] { return NewSealClient(channel, token, plaintext); }, &off},
            {audited_pid, [&] { return NewSealClient(audited, *audited_token, plaintext); }, &on});
        !s.ok()) {
      return s;
    }
    const double ratio = on.requests_per_second() / off.requests_per_second();
    ratios.push_back(ratio);
    std::printf("%4lld | %10.0f %7.0f %7.0f | %10.0f %7.0f %7.0f | %9.3f | %6.1f %6.1f\n",
                static_cast<long long>(concurrency), off.requests_per_second(),
                off.percentile_us(0.5), off.percentile_us(0.99), on.requests_per_second(),
                on.percentile_us(0.5), on.percentile_us(0.99), ratio, off.server_cpu_us_per_call(),
                on.server_cpu_us_per_call());
    std::fflush(stdout);
  }
  return server::bench::Median(ratios);
}

int Run() {
  const std::string address = absl::GetFlag(FLAGS_server);
  const int server_pid = absl::GetFlag(FLAGS_server_pid);
  const uint64_t stream_bytes = static_cast<uint64_t>(absl::GetFlag(FLAGS_stream_bytes));
  const int rounds = std::max(1, absl::GetFlag(FLAGS_rounds));
  const std::vector<int64_t> concurrencies =
      ParseList(absl::GetFlag(FLAGS_concurrency), "concurrency");
  const std::vector<int64_t> unary_sizes =
      ParseList(absl::GetFlag(FLAGS_unary_bytes), "unary_bytes");
  const std::vector<int64_t> message_sizes =
      ParseList(absl::GetFlag(FLAGS_stream_message_bytes), "stream_message_bytes");
  absl::StatusOr<std::string> admin_token = ReadToken(absl::GetFlag(FLAGS_admin_token_file));
  if (!admin_token.ok()) {
    std::fprintf(stderr, "load_generator: --admin_token_file: %s\n",
                 std::string(admin_token.status().message()).c_str());
    return 2;
  }

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(8 << 20);
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 4 << 20);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "load_generator: cannot connect to %s\n", address.c_str());
    return 1;
  }
  absl::StatusOr<std::string> token = CreateTenant(channel, *admin_token);
  if (!token.ok()) {
    std::fprintf(stderr, "load_generator: %s\n", std::string(token.status().message()).c_str());
    return 1;
  }
  auto fail = [](const char* what, const absl::Status& status) {
    std::fprintf(stderr, "load_generator: %s: %s\n", what, std::string(status.message()).c_str());
    return 1;
  };

  std::printf(
      "load_generator: Seal and Open beside Echo, the gRPC baseline: server %s, "
      "AES-256-GCM key, %u CPUs here, loopback, no TLS\n\n",
      address.c_str(), std::thread::hardware_concurrency());
  std::printf(
      "Unary: %g s per method and row, in %d rounds of Echo, Seal, Open (each after "
      "%g s of warm-up); one thread and one blocking call per client; latency in us; "
      "the server's CPU time per call (warm-up included), in us\n",
      absl::GetFlag(FLAGS_seconds), rounds, absl::GetFlag(FLAGS_warmup_seconds));
  std::printf("%-7s %4s | %9s %7s %7s | %9s %7s %7s %9s | %9s %7s %7s %9s | %-20s\n", "size",
              "conc", "Echo/s", "p50", "p99", "Seal/s", "p50", "p99", "Seal/Echo", "Open/s", "p50",
              "p99", "Open/Echo", "server us/call E S O");
  std::fflush(stdout);

  // Seal/Echo and Open/Echo of each size, one per concurrency: targets and summary.
  std::map<int64_t, std::vector<double>> unary_seal_ratios, unary_open_ratios;
  for (int64_t size : unary_sizes) {
    const std::string data = RandomBytes(size);
    // A ciphertext for Open, sealed once.
    std::string ciphertext;
    {
      auto crypto = v1::Crypto::NewStub(channel);
      grpc::ClientContext context;
      context.AddMetadata("authorization", "Bearer " + *token);
      v1::SealRequest request;
      request.set_key(kKey);
      request.set_plaintext(data);
      v1::SealResponse response;
      grpc::Status status = crypto->Seal(&context, request, &response);
      if (!status.ok()) return fail("Seal", absl::InternalError(status.error_message()));
      ciphertext = response.ciphertext();
    }
    // Echo's calls carry the same authorization header as Seal's and Open's (Echo
    // ignores it): the bytes on the wire are alike, and checking the token is left
    // as the service's own cost.
    const auto new_echo_client = [&]() -> UnaryCall {
      auto stub = std::shared_ptr<Echo::Stub>(Echo::NewStub(channel));
      auto request = std::make_shared<EchoMessage>();
      request->set_data(data);
      return [stub, request, bearer = "Bearer " + *token] {
        grpc::ClientContext context;
        context.AddMetadata("authorization", bearer);
        EchoMessage response;
        return stub->Echo(&context, *request, &response);
      };
    };
    const auto new_seal_client = [&] { return NewSealClient(channel, *token, data); };
    const auto new_open_client = [&]() -> UnaryCall {
      auto stub = std::shared_ptr<v1::Crypto::Stub>(v1::Crypto::NewStub(channel));
      auto request = std::make_shared<v1::OpenRequest>();
      request->set_key(kKey);
      request->set_ciphertext(ciphertext);
      return [stub, request, bearer = "Bearer " + *token] {
        grpc::ClientContext context;
        context.AddMetadata("authorization", bearer);
        v1::OpenResponse response;
        return stub->Open(&context, *request, &response);
      };
    };
    for (int64_t concurrency : concurrencies) {
      UnarySamples echo, seal, open;
      const double seconds = absl::GetFlag(FLAGS_seconds) / rounds;
      for (int round = 0; round < rounds; ++round) {
        if (absl::Status s = RunUnary(concurrency, seconds, server_pid, new_echo_client, echo);
            !s.ok()) {
          return fail("Echo", s);
        }
        if (absl::Status s = RunUnary(concurrency, seconds, server_pid, new_seal_client, seal);
            !s.ok()) {
          return fail("Seal", s);
        }
        if (absl::Status s = RunUnary(concurrency, seconds, server_pid, new_open_client, open);
            !s.ok()) {
          return fail("Open", s);
        }
      }
      const double seal_ratio = seal.requests_per_second() / echo.requests_per_second();
      const double open_ratio = open.requests_per_second() / echo.requests_per_second();
      unary_seal_ratios[size].push_back(seal_ratio);
      unary_open_ratios[size].push_back(open_ratio);
      std::printf(
          "%-7s %4lld | %9.0f %7.0f %7.0f | %9.0f %7.0f %7.0f %9s | %9.0f %7.0f "
          "%7.0f %9s | %6.1f %6.1f %6.1f\n",
          SizeName(size).c_str(), static_cast<long long>(concurrency), echo.requests_per_second(),
          echo.percentile_us(0.5), echo.percentile_us(0.99), seal.requests_per_second(),
          seal.percentile_us(0.5), seal.percentile_us(0.99),
          Ratio(seal.requests_per_second(), echo.requests_per_second()).c_str(),
          open.requests_per_second(), open.percentile_us(0.5), open.percentile_us(0.99),
          Ratio(open.requests_per_second(), echo.requests_per_second()).c_str(),
          echo.server_cpu_us_per_call(), seal.server_cpu_us_per_call(),
          open.server_cpu_us_per_call());
      std::fflush(stdout);
    }
  }

  absl::StatusOr<std::optional<double>> batch_gain =
      RunBatchRows(channel, *token, server_pid, concurrencies, rounds);
  if (!batch_gain.ok()) return fail("SealBatch", batch_gain.status());
  absl::StatusOr<std::optional<double>> audit_ratio =
      RunAuditRows(channel, *token, *admin_token, args, server_pid, concurrencies, rounds);
  if (!audit_ratio.ok()) return fail("audit rows", audit_ratio.status());

  // VmHWM so far; the stream measurements reset it, so it is carried by hand.
  int64_t peak_rss_kib = server_pid ? ProcStatusKib(server_pid, "VmHWM:") : 0;
  const int stream_rounds = absl::GetFlag(FLAGS_stream_rounds);
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
  Streams streams(channel, *token, server_pid, stream_bytes);
  // The worst of the stream ratios' medians, none until a stream has run.
  std::optional<double> worst_seal_ratio, worst_open_ratio;
  std::map<int64_t, double> stream_seal_ratios;  // medians, by message size
  int64_t worst_growth_kib = 0;
  auto cpu = [](double e, double s, double o) {
    return absl::StrFormat("%6.0f %6.0f %6.0f", e, s, o);
  };
  auto growth = [](const StreamResult& e, const StreamResult& s, const StreamResult& o) {
    return absl::StrFormat("%5.1f %5.1f %5.1f", e.rss.growth_kib() / 1024.0,
                           s.rss.growth_kib() / 1024.0, o.rss.growth_kib() / 1024.0);
  };
  for (int64_t size : stream_bytes > 0 ? message_sizes : std::vector<int64_t>{}) {
    // Each column's figures over the rounds, for the median row.
    std::vector<double> discard_rates, echo_rates, seal_rates, open_rates;
    std::vector<double> echo_ratios, seal_ratios, open_ratios;
    std::vector<double> echo_cpu, seal_cpu, open_cpu;
    std::vector<double> echo_client, seal_client, open_client;
    for (int round = 1; round <= stream_rounds; ++round) {
      absl::StatusOr<StreamResult> discard = streams.Discard(size);
      if (!discard.ok()) return fail("Discard", discard.status());
      absl::StatusOr<StreamResult> echo = streams.EchoStream(size);
      if (!echo.ok()) return fail("EchoStream", echo.status());
      absl::StatusOr<StreamResult> seal = streams.SealStream(size);
      if (!seal.ok()) return fail("SealStream", seal.status());
      absl::StatusOr<StreamResult> open = streams.OpenStream(size);
      if (!open.ok()) return fail("OpenStream", open.status());
      discard_rates.push_back(discard->mb_per_second);
      echo_rates.push_back(echo->mb_per_second);
      seal_rates.push_back(seal->mb_per_second);
      open_rates.push_back(open->mb_per_second);
      echo_ratios.push_back(echo->mb_per_second / discard->mb_per_second);
      seal_ratios.push_back(seal->mb_per_second / echo->mb_per_second);
      open_ratios.push_back(open->mb_per_second / echo->mb_per_second);
      echo_cpu.push_back(echo->server_cpu_us_per_mib);
      seal_cpu.push_back(seal->server_cpu_us_per_mib);
      open_cpu.push_back(open->server_cpu_us_per_mib);
      echo_client.push_back(echo->client_cpu_us_per_mib);
      seal_client.push_back(seal->client_cpu_us_per_mib);
      open_client.push_back(open->client_cpu_us_per_mib);
      for (const StreamResult* r : {&*echo, &*seal, &*open}) {
        worst_growth_kib = std::max(worst_growth_kib, r->rss.growth_kib());
        peak_rss_kib = std::max(peak_rss_kib, r->rss.peak_kib);
      }
      std::printf(
          "%-8s %6d | %8.0f %10.0f %10.0f %10.0f | %12.2f %9.2f %9.2f | %-20s | %-20s | "
          "%-17s\n",
          SizeName(size).c_str(), round, discard->mb_per_second, echo->mb_per_second,
          seal->mb_per_second, open->mb_per_second, echo_ratios.back(), seal_ratios.back(),
          open_ratios.back(), cpu(echo_cpu.back(), seal_cpu.back(), open_cpu.back()).c_str(),
          cpu(echo_client.back(), seal_client.back(), open_client.back()).c_str(),
          growth(*echo, *seal, *open).c_str());
      std::fflush(stdout);
    }
    using server::bench::Median;
    const double seal_ratio = Median(seal_ratios);
    const double open_ratio = Median(open_ratios);
    stream_seal_ratios[size] = seal_ratio;
    worst_seal_ratio = std::min(worst_seal_ratio.value_or(seal_ratio), seal_ratio);
    worst_open_ratio = std::min(worst_open_ratio.value_or(open_ratio), open_ratio);
    std::printf("%-8s %6s | %8.0f %10.0f %10.0f %10.0f | %12.2f %9.2f %9.2f | %-20s | %-20s |\n",
                SizeName(size).c_str(), "median", Median(discard_rates), Median(echo_rates),
                Median(seal_rates), Median(open_rates), Median(echo_ratios), seal_ratio, open_ratio,
                cpu(Median(echo_cpu), Median(seal_cpu), Median(open_cpu)).c_str(),
                cpu(Median(echo_client), Median(seal_client), Median(open_client)).c_str());
    std::fflush(stdout);
  }

  server::bench::ServiceFigures figures;
  figures.unary_1k_seal = MedianRatio(unary_seal_ratios, 1024);
  figures.unary_64k_seal = MedianRatio(unary_seal_ratios, 65536);
  figures.stream_64k_seal = RatioAt(stream_seal_ratios, 65536);
  figures.stream_1m_seal = RatioAt(stream_seal_ratios, 1 << 20);
  figures.unary_1k_open = MedianRatio(unary_open_ratios, 1024);
  if (server_pid != 0 && !stream_seal_ratios.empty()) {
    figures.rss_growth_mib = worst_growth_kib / 1024.0;
  }

  // Issue 18's targets, each a ratio to the Echo baseline of the same run.
  std::printf(
      "\nTargets (unary: medians over the concurrencies run; streams: the lower of the "
      "message sizes' medians over the rounds)\n");
  auto target = [](const char* what, std::optional<double> ratio, double at_least) {
    std::printf("  %-40s %-12s %s\n", what, ratio ? absl::StrFormat("%.2f", *ratio).c_str() : "-",
                ratio ? Verdict(*ratio >= at_least) : "not measured");
  };
  target("unary Seal 1 KiB >= 0.95 of Echo:", figures.unary_1k_seal, 0.95);
  target("unary Open 1 KiB >= 0.95 of Echo:", figures.unary_1k_open, 0.95);
  target("unary Seal 64 KiB >= 0.90 of Echo:", figures.unary_64k_seal, 0.90);
  if (*batch_gain) {  // issue 19's
    std::printf("  %-40s %-12s %s\n", "SealBatch items/s >= 5x unary Seal's:",
                absl::StrFormat("%.1fx", **batch_gain).c_str(), Verdict(**batch_gain >= 5));
  }
  if (*audit_ratio) {  // issue 20's
    target("unary Seal 1 KiB, audit on >= 0.95 of off:", *audit_ratio, 0.95);
  }
  target("SealStream >= 0.95 of EchoStream:", worst_seal_ratio, 0.95);
  target("OpenStream >= 0.95 of EchoStream:", worst_open_ratio, 0.95);
  if (figures.rss_growth_mib) {
    std::printf("  %-40s %-12s %s\n", "server RSS growth in a stream < 16 MiB:",
                absl::StrFormat("%.1f MiB", *figures.rss_growth_mib).c_str(),
                Verdict(*figures.rss_growth_mib < 16));
  }
  if (server_pid != 0) {
    std::printf("  server peak RSS (VmHWM) over the run:    %.1f MiB\n", peak_rss_kib / 1024.0);
  } else {
    std::printf("  server RSS: not measured (give --server_pid)\n");
  }

  std::printf("\n%s\n", server::bench::ServiceSummaryLine(figures).c_str());
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
  return sealbox::load::Run();
}
