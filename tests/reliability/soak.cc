// soak: the load half of soak_test.py. Drives a running sealbox-server with many
// blocking clients at once, mixing Seal, Open, Rewrap, SealStream and OpenStream over
// many tenants and keys, while a rotator thread rotates those keys through the admin
// plane of one or more servers sharing the data directory (so the loaded server also
// reloads its keystore). Every answer is checked; a sample of what was sealed is kept,
// opened again at the end and written to --samples_file, so the test can open it once
// more after a restart (--verify_samples).
//
// Prints per-RPC latency, counts, the server's VmRSS over the run, and a verdict;
// exits 1 on any unexpected error, wrong plaintext, or memory growth over the bound.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"

ABSL_FLAG(std::string, server, "", "host:port of the server under load.");
ABSL_FLAG(std::vector<std::string>, admin_servers, {},
          "host:port list the rotator sends RotateKey to, in turn (servers sharing the "
          "data directory); default: --server.");
ABSL_FLAG(std::string, admin_token_file, "", "File with the admin token.");
ABSL_FLAG(int, server_pid, 0, "The loaded server's pid, to sample its VmRSS; 0: none.");
ABSL_FLAG(double, seconds, 60, "Length of the load phase.");
ABSL_FLAG(double, warmup_fraction, 0.2,
          "Share of the run before the memory check's first third starts.");
ABSL_FLAG(int, clients, 32, "Client threads, each with one call in flight.");
ABSL_FLAG(int, channels, 4, "Connections the clients share.");
ABSL_FLAG(int, tenants, 20, "Tenants created for the run.");
ABSL_FLAG(int, keys_per_tenant, 3, "Keys per tenant.");
ABSL_FLAG(double, rotations_per_second, 10, "RotateKey calls per second.");
ABSL_FLAG(double, rss_growth_bound_mib, 16,
          "Most the last third's max VmRSS may exceed the first third's max by.");
ABSL_FLAG(int, max_unary_samples, 4000, "Unary ciphertexts kept to open at the end.");
ABSL_FLAG(int, max_stream_samples, 200, "Stream ciphertexts kept to open at the end.");
ABSL_FLAG(std::string, samples_file, "", "Where to write the kept samples.");
ABSL_FLAG(std::string, verify_samples, "",
          "Instead of a load run: open every sample in this file and exit.");

namespace sealbox::reliability {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::chrono::system_clock::time_point In(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

std::string RandomBytes(std::mt19937_64& random, size_t size) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

int64_t VmRssKib(int pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return 0;
}

struct Tenant {
  std::string name;
  std::string token;
  std::vector<std::string> keys;
};

// Something sealed, and what it must open to.
struct Sample {
  bool stream = false;
  std::string token, key, aad, ciphertext, plaintext;
};

// ---- Samples file: per sample, kind (1 byte) then five u32-length-prefixed strings.

void WriteSamples(const std::string& path, const std::vector<Sample>& samples) {
  std::ofstream out(path, std::ios::binary);
  for (const Sample& s : samples) {
    out.put(s.stream ? 2 : 1);
    for (const std::string* field : {&s.token, &s.key, &s.aad, &s.ciphertext, &s.plaintext}) {
      const uint32_t n = field->size();
      out.write(reinterpret_cast<const char*>(&n), 4);
      out.write(field->data(), n);
    }
  }
}

bool ReadSamples(const std::string& path, std::vector<Sample>& samples) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  int kind;
  while ((kind = in.get()) != EOF) {
    Sample s;
    s.stream = kind == 2;
    for (std::string* field : {&s.token, &s.key, &s.aad, &s.ciphertext, &s.plaintext}) {
      uint32_t n = 0;
      if (!in.read(reinterpret_cast<char*>(&n), 4)) return false;
      field->resize(n);
      if (n > 0 && !in.read(field->data(), n)) return false;
    }
    samples.push_back(std::move(s));
  }
  return true;
}

// ---- One data-plane client: blocking calls with deadlines, checked answers. -------

class Crypto {
 public:
  explicit Crypto(std::shared_ptr<grpc::Channel> channel)
      : stub_(v1::Crypto::NewStub(std::move(channel))) {}

  // Each returns "" or what went wrong.
  std::string Seal(const std::string& token, const std::string& key, const std::string& aad,
                   const std::string& plaintext, std::string& ciphertext) {
    grpc::ClientContext context;
    Prepare(context, token, 30);
    v1::SealRequest request;
    request.set_key(key);
    request.set_plaintext(plaintext);
    request.set_associated_data(aad);
    v1::SealResponse response;
    grpc::Status status = stub_->Seal(&context, request, &response);
    if (!status.ok()) return Describe("Seal", status);
    if (response.key_version() < 1) return "Seal: no key version";
    ciphertext = response.ciphertext();
    return "";
  }

  std::string Open(const Sample& s) {
    grpc::ClientContext context;
    Prepare(context, s.token, 30);
    v1::OpenRequest request;
    request.set_key(s.key);
    request.set_ciphertext(s.ciphertext);
    request.set_associated_data(s.aad);
    v1::OpenResponse response;
    grpc::Status status = stub_->Open(&context, request, &response);
    if (!status.ok()) return Describe("Open", status);
    if (response.plaintext() != s.plaintext) return "Open: wrong plaintext";
    return "";
  }

  // Replaces s.ciphertext with the rewrapped one (same plaintext, same AAD).
  std::string Rewrap(Sample& s) {
    grpc::ClientContext context;
    Prepare(context, s.token, 30);
    v1::RewrapRequest request;
    request.set_key(s.key);
    request.set_ciphertext(s.ciphertext);
    request.set_associated_data(s.aad);
    v1::RewrapResponse response;
    grpc::Status status = stub_->Rewrap(&context, request, &response);
    if (!status.ok()) return Describe("Rewrap", status);
    if (response.key_version() < response.previous_key_version()) {
      return "Rewrap: went to an older key version";
    }
    s.ciphertext = response.ciphertext();
    return "";
  }

  std::string SealStream(const std::string& token, const std::string& key, const std::string& aad,
                         const std::string& plaintext, size_t chunk, uint32_t segment_size,
                         std::string& ciphertext) {
    grpc::ClientContext context;
    Prepare(context, token, 60);
    auto stream = stub_->SealStream(&context);
    ciphertext.clear();
    std::thread writer([&] {
      v1::SealStreamRequest request;
      request.mutable_start()->set_key(key);
      request.mutable_start()->set_associated_data(aad);
      request.mutable_start()->set_segment_size(segment_size);
      bool ok = stream->Write(request);
      for (size_t at = 0; ok && at < plaintext.size(); at += chunk) {
        request.set_plaintext_chunk(plaintext.substr(at, chunk));
        ok = stream->Write(request);
      }
      stream->WritesDone();
    });
    v1::SealStreamResponse response;
    while (stream->Read(&response)) ciphertext += response.ciphertext_chunk();
    writer.join();
    grpc::Status status = stream->Finish();
    return status.ok() ? "" : Describe("SealStream", status);
  }

  std::string OpenStream(const Sample& s, size_t chunk) {
    grpc::ClientContext context;
    Prepare(context, s.token, 60);
    auto stream = stub_->OpenStream(&context);
    std::thread writer([&] {
      v1::OpenStreamRequest request;
      request.mutable_start()->set_key(s.key);
      request.mutable_start()->set_associated_data(s.aad);
      bool ok = stream->Write(request);
      for (size_t at = 0; ok && at < s.ciphertext.size(); at += chunk) {
        request.set_ciphertext_chunk(s.ciphertext.substr(at, chunk));
        ok = stream->Write(request);
      }
      stream->WritesDone();
    });
    std::string plaintext;
    v1::OpenStreamResponse response;
    while (stream->Read(&response)) plaintext += response.plaintext_chunk();
    writer.join();
    grpc::Status status = stream->Finish();
    if (!status.ok()) return Describe("OpenStream", status);
    if (plaintext != s.plaintext) return "OpenStream: wrong plaintext";
    return "";
  }

  std::string OpenAny(const Sample& s) { return s.stream ? OpenStream(s, 65536) : Open(s); }

 private:
  static void Prepare(grpc::ClientContext& context, const std::string& token, int seconds) {
    context.AddMetadata("authorization", "Bearer " + token);
    context.set_deadline(In(seconds));
  }

  static std::string Describe(const char* method, const grpc::Status& status) {
    return absl::StrCat(method, ": code ", status.error_code(), " ", status.error_message());
  }

  std::unique_ptr<v1::Crypto::Stub> stub_;
};

// Channels with their own connections (a local subchannel pool each).
std::vector<std::shared_ptr<grpc::Channel>> Connect(const std::string& address, int count) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < count; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetMaxReceiveMessageSize(8 << 20);
    channels.push_back(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  }
  return channels;
}

// Opens every sample with 8 threads; returns the failures (and prints the first few).
int64_t VerifySamples(const std::string& address, const std::vector<Sample>& samples) {
  auto channels = Connect(address, 2);
  std::atomic<size_t> next{0};
  std::atomic<int64_t> failures{0};
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      Crypto crypto(channels[t % channels.size()]);
      for (size_t i; (i = next++) < samples.size();) {
        std::string error = crypto.OpenAny(samples[i]);
        if (error.empty()) continue;
        std::lock_guard<std::mutex> lock(mu);
        if (failures++ < 5) std::printf("  sample %zu failed: %s\n", i, error.c_str());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return failures;
}

// ---- Admin: setup and the rotator -------------------------------------------------

class Admin {
 public:
  Admin(const std::string& address, std::string token)
      : stub_(v1::Admin::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))),
        token_(std::move(token)) {}

  template <typename Request, typename Response, typename Method>
  grpc::Status Call(Method method, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", "Bearer " + token_);
    context.set_deadline(In(30));
    return ((*stub_).*method)(&context, request, response);
  }

 private:
  std::unique_ptr<v1::Admin::Stub> stub_;
  std::string token_;
};

bool CreateTenants(Admin& admin, int count, int keys, std::vector<Tenant>& tenants) {
  std::mt19937_64 random(std::random_device{}());
  const std::string prefix = absl::StrCat("soak", random() % 1000000, "-");
  for (int i = 0; i < count; ++i) {
    Tenant tenant;
    tenant.name = absl::StrCat(prefix, i);
    v1::CreateTenantRequest create;
    create.set_name(tenant.name);
    v1::Tenant created;
    grpc::Status status = admin.Call(&v1::Admin::Stub::CreateTenant, create, &created);
    for (int k = 0; status.ok() && k < keys; ++k) {
      v1::CreateKeyRequest key;
      key.set_tenant(tenant.name);
      key.set_key(absl::StrCat("k", k));
      key.set_algorithm(k % 2 ? v1::AES_128_GCM : v1::AES_256_GCM);
      v1::Key made;
      status = admin.Call(&v1::Admin::Stub::CreateKey, key, &made);
      tenant.keys.push_back(key.key());
    }
    v1::IssueTokenRequest issue;
    issue.set_tenant(tenant.name);
    v1::IssueTokenResponse issued;
    if (status.ok()) status = admin.Call(&v1::Admin::Stub::IssueToken, issue, &issued);
    if (!status.ok()) {
      std::fprintf(stderr, "soak: setup failed: %s\n", status.error_message().c_str());
      return false;
    }
    tenant.token = issued.token();
    tenants.push_back(std::move(tenant));
  }
  return true;
}

// ---- Measurements ----------------------------------------------------------------

enum Method { kSeal, kOpen, kRewrap, kSealStream, kOpenStream, kRotateKey, kMethods };
const char* const kMethodNames[] = {"Seal",       "Open",       "Rewrap",
                                    "SealStream", "OpenStream", "RotateKey"};

struct Tally {
  std::vector<float> latency_ms[kMethods];
  int64_t errors[kMethods] = {};
  int64_t stream_bytes = 0;

  void Merge(const Tally& o) {
    for (int m = 0; m < kMethods; ++m) {
      latency_ms[m].insert(latency_ms[m].end(), o.latency_ms[m].begin(), o.latency_ms[m].end());
      errors[m] += o.errors[m];
    }
    stream_bytes += o.stream_bytes;
  }
};

double Percentile(std::vector<float>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * (v.size() - 1))];
}

// Keeps a uniform sample of everything offered (reservoir sampling), per kind.
class Reservoir {
 public:
  Reservoir(size_t unary_cap, size_t stream_cap) : caps_{unary_cap, stream_cap} {}

  void Offer(const Sample& s) {
    std::lock_guard<std::mutex> lock(mu_);
    const int kind = s.stream ? 1 : 0;
    const uint64_t seen = ++seen_[kind];
    if (kept_[kind].size() < caps_[kind]) {
      kept_[kind].push_back(s);
    } else if (uint64_t j = random_() % seen; j < caps_[kind]) {
      kept_[kind][j] = s;
    }
  }

  std::vector<Sample> All() const {
    std::vector<Sample> all = kept_[0];
    all.insert(all.end(), kept_[1].begin(), kept_[1].end());
    return all;
  }

 private:
  std::mutex mu_;
  std::mt19937_64 random_{7};
  size_t caps_[2];
  uint64_t seen_[2] = {};
  std::vector<Sample> kept_[2];
};

// One client thread's loop until `stop`.
void RunClient(int index, std::shared_ptr<grpc::Channel> channel,
               const std::vector<Tenant>& tenants, const std::atomic<bool>& stop,
               Reservoir& reservoir, Tally& tally, std::mutex& log_mu) {
  std::mt19937_64 random(1000 + index);
  Crypto crypto(std::move(channel));
  std::vector<Sample> unary, streams;  // this client's recent ciphertexts
  auto pick = [&](std::vector<Sample>& from) -> Sample& { return from[random() % from.size()]; };
  auto remember = [&](std::vector<Sample>& into, size_t cap, Sample s) {
    reservoir.Offer(s);
    if (into.size() < cap) {
      into.push_back(std::move(s));
    } else {
      into[random() % cap] = std::move(s);
    }
  };
  int64_t serial = 0;
  while (!stop.load()) {
    const int roll = random() % 100;
    Method method = roll < 35   ? kSeal
                    : roll < 60 ? kOpen
                    : roll < 75 ? kRewrap
                    : roll < 88 ? kSealStream
                                : kOpenStream;
    if ((method == kOpen || method == kRewrap) && unary.empty()) method = kSeal;
    if (method == kOpenStream && streams.empty()) method = kSealStream;

    const Tenant& tenant = tenants[random() % tenants.size()];
    Sample s;
    s.token = tenant.token;
    s.key = tenant.keys[random() % tenant.keys.size()];
    s.aad = absl::StrCat("client-", index, "-", serial++);
    std::string error;
    const Clock::time_point start = Clock::now();
    switch (method) {
      case kSeal:
        s.plaintext = RandomBytes(random, random() % 4097);
        error = crypto.Seal(s.token, s.key, s.aad, s.plaintext, s.ciphertext);
        if (error.empty()) remember(unary, 64, s);
        break;
      case kOpen:
        error = crypto.Open(pick(unary));
        break;
      case kRewrap: {
        Sample& old = pick(unary);
        Sample rewrapped = old;
        error = crypto.Rewrap(rewrapped);
        if (error.empty()) {
          old = rewrapped;
          reservoir.Offer(rewrapped);
        }
        break;
      }
      case kSealStream: {
        s.stream = true;
        s.plaintext = RandomBytes(random, 16384 + random() % (512 << 10));
        const uint32_t segment_sizes[] = {0, 4096, 16384, 65536};
        error = crypto.SealStream(s.token, s.key, s.aad, s.plaintext, 4096 + random() % 65536,
                                  segment_sizes[random() % 4], s.ciphertext);
        if (error.empty()) {
          tally.stream_bytes += s.plaintext.size();
          remember(streams, 4, s);
        }
        break;
      }
      case kOpenStream: {
        const Sample& sealed = pick(streams);
        error = crypto.OpenStream(sealed, 1000 + random() % 70000);
        if (error.empty()) tally.stream_bytes += sealed.plaintext.size();
        break;
      }
      default:
        break;
    }
    tally.latency_ms[method].push_back(Seconds(Clock::now() - start) * 1e3);
    if (!error.empty()) {
      std::lock_guard<std::mutex> lock(log_mu);
      if (tally.errors[method]++ < 3) std::printf("  client %d: %s\n", index, error.c_str());
    }
  }
}

// Rotates a random key every 1/rate s through each admin server in turn.
void RunRotator(std::vector<std::unique_ptr<Admin>>& admins, const std::vector<Tenant>& tenants,
                double rate, const std::atomic<bool>& stop, Tally& tally) {
  std::mt19937_64 random(99);
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  Clock::time_point next = Clock::now();
  for (size_t i = 0; !stop.load(); ++i) {
    std::this_thread::sleep_until(next);
    next += period;
    const Tenant& tenant = tenants[random() % tenants.size()];
    v1::KeyRef ref;
    ref.set_tenant(tenant.name);
    ref.set_key(tenant.keys[random() % tenant.keys.size()]);
    v1::Key key;
    const Clock::time_point start = Clock::now();
    grpc::Status status = admins[i % admins.size()]->Call(&v1::Admin::Stub::RotateKey, ref, &key);
    tally.latency_ms[kRotateKey].push_back(Seconds(Clock::now() - start) * 1e3);
    if (!status.ok() && tally.errors[kRotateKey]++ < 3) {
      std::printf("  RotateKey: %s\n", status.error_message().c_str());
    }
  }
}

int VerifyOnly(const std::string& address, const std::string& path) {
  std::vector<Sample> samples;
  if (!ReadSamples(path, samples) || samples.empty()) {
    std::fprintf(stderr, "soak: cannot read samples from %s\n", path.c_str());
    return 2;
  }
  const Clock::time_point start = Clock::now();
  const int64_t failures = VerifySamples(address, samples);
  std::printf("soak verify: %zu samples opened against %s in %.1f s, %lld failed\n", samples.size(),
              address.c_str(), Seconds(Clock::now() - start), static_cast<long long>(failures));
  return failures == 0 ? 0 : 1;
}

int Run() {
  const std::string address = absl::GetFlag(FLAGS_server);
  if (!absl::GetFlag(FLAGS_verify_samples).empty()) {
    return VerifyOnly(address, absl::GetFlag(FLAGS_verify_samples));
  }
  std::ifstream token_file(absl::GetFlag(FLAGS_admin_token_file));
  std::stringstream token_text;
  token_text << token_file.rdbuf();
  const std::string admin_token(absl::StripAsciiWhitespace(token_text.str()));
  std::vector<std::string> admin_addresses = absl::GetFlag(FLAGS_admin_servers);
  if (admin_addresses.empty()) admin_addresses.push_back(address);
  std::vector<std::unique_ptr<Admin>> admins;
  for (const std::string& a : admin_addresses) {
    admins.push_back(std::make_unique<Admin>(a, admin_token));
  }

  std::vector<Tenant> tenants;
  const Clock::time_point setup_start = Clock::now();
  if (!CreateTenants(*admins[0], absl::GetFlag(FLAGS_tenants), absl::GetFlag(FLAGS_keys_per_tenant),
                     tenants)) {
    return 1;
  }
  const double setup_seconds = Seconds(Clock::now() - setup_start);

  const int clients = absl::GetFlag(FLAGS_clients);
  const double seconds = absl::GetFlag(FLAGS_seconds);
  const int pid = absl::GetFlag(FLAGS_server_pid);
  auto channels = Connect(address, absl::GetFlag(FLAGS_channels));
  Reservoir reservoir(absl::GetFlag(FLAGS_max_unary_samples),
                      absl::GetFlag(FLAGS_max_stream_samples));
  std::vector<Tally> tallies(clients);
  Tally rotations;
  std::atomic<bool> stop{false};
  std::mutex log_mu;

  std::printf(
      "soak: %s, %d clients on %zu connections, %zu tenants x %d keys, %.0f s, "
      "RotateKey %.0f/s through %s in turn\n",
      address.c_str(), clients, channels.size(), tenants.size(),
      absl::GetFlag(FLAGS_keys_per_tenant), seconds, absl::GetFlag(FLAGS_rotations_per_second),
      absl::StrJoin(admin_addresses, ", ").c_str());
  std::fflush(stdout);

  // VmRSS every 250 ms, with the time it was taken.
  std::vector<std::pair<double, int64_t>> rss;
  const Clock::time_point start = Clock::now();
  std::thread sampler([&] {
    while (pid != 0 && !stop.load()) {
      rss.push_back({Seconds(Clock::now() - start), VmRssKib(pid)});
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back(RunClient, i, channels[i % channels.size()], std::cref(tenants),
                         std::cref(stop), std::ref(reservoir), std::ref(tallies[i]),
                         std::ref(log_mu));
  }
  std::thread rotator(RunRotator, std::ref(admins), std::cref(tenants),
                      absl::GetFlag(FLAGS_rotations_per_second), std::cref(stop),
                      std::ref(rotations));
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& t : threads) t.join();
  rotator.join();
  sampler.join();
  const double elapsed = Seconds(Clock::now() - start);

  Tally total;
  for (const Tally& t : tallies) total.Merge(t);
  total.Merge(rotations);
  int64_t errors = 0, calls = 0;
  std::printf("\n%-11s %9s %9s %9s %9s %7s\n", "rpc", "calls", "per s", "p50 ms", "p99 ms",
              "errors");
  for (int m = 0; m < kMethods; ++m) {
    const size_t n = total.latency_ms[m].size();
    errors += total.errors[m];
    if (m != kRotateKey) calls += n;
    std::printf("%-11s %9zu %9.1f %9.2f %9.2f %7lld\n", kMethodNames[m], n, n / elapsed,
                Percentile(total.latency_ms[m], 0.5), Percentile(total.latency_ms[m], 0.99),
                static_cast<long long>(total.errors[m]));
  }
  std::printf(
      "data-plane calls: %lld in %.1f s (%.0f/s); streams: %zu (%.1f MiB through "
      "them); setup of %zu tenants: %.1f s\n",
      static_cast<long long>(calls), elapsed, calls / elapsed,
      total.latency_ms[kSealStream].size() + total.latency_ms[kOpenStream].size(),
      total.stream_bytes / 1048576.0, tenants.size(), setup_seconds);

  // The kept samples, opened once more now that the run is over.
  const std::vector<Sample> samples = reservoir.All();
  const int64_t sample_failures = VerifySamples(address, samples);
  size_t stream_samples = 0;
  for (const Sample& s : samples) stream_samples += s.stream;
  std::printf("samples reopened: %zu (%zu unary, %zu stream), %lld failed\n", samples.size(),
              samples.size() - stream_samples, stream_samples,
              static_cast<long long>(sample_failures));
  if (!absl::GetFlag(FLAGS_samples_file).empty()) {
    WriteSamples(absl::GetFlag(FLAGS_samples_file), samples);
  }

  // Memory: after the warm-up, the max of the last third against the first third's.
  bool memory_ok = true;
  if (pid != 0 && !rss.empty()) {
    const double from = seconds * absl::GetFlag(FLAGS_warmup_fraction);
    const double third = (seconds - from) / 3;
    int64_t first = 0, last = 0, peak = 0;
    for (const auto& [t, kib] : rss) {
      peak = std::max(peak, kib);
      if (t >= from && t < from + third) first = std::max(first, kib);
      if (t >= from + 2 * third) last = std::max(last, kib);
    }
    const double growth = (last - first) / 1024.0;
    const double bound = absl::GetFlag(FLAGS_rss_growth_bound_mib);
    memory_ok = first > 0 && last > 0 && growth <= bound;
    std::printf(
        "server VmRSS (MiB): at start %.1f, peak %.1f, at end %.1f; after %.0f s of "
        "warm-up first-third max %.1f, last-third max %.1f, growth %+.1f (bound "
        "%.0f): %s (%zu samples)\n",
        rss.front().second / 1024.0, peak / 1024.0, rss.back().second / 1024.0, from,
        first / 1024.0, last / 1024.0, growth, bound, memory_ok ? "flat" : "GREW", rss.size());
  }
  const bool ok = errors == 0 && sample_failures == 0 && memory_ok && calls > 0;
  std::printf("soak: %s (unexpected errors %lld)\n", ok ? "PASS" : "FAIL",
              static_cast<long long>(errors));
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace sealbox::reliability

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "soak --server HOST:PORT --admin_token_file FILE [--server_pid PID] [--seconds N]\n"
      "soak --server HOST:PORT --verify_samples FILE");
  absl::ParseCommandLine(argc, argv);
  return sealbox::reliability::Run();
}
