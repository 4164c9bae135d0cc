// Two replicas sharing one keystore, for `tools/dev bench replicas`: given two
// running sealbox-servers (on one etcd prefix, or on one data directory), measures
//
//   admin rate    RotateKey through the first server by --clients concurrent callers
//                 for --seconds, all on one key (they take turns) and each on a key of
//                 its own: calls per second, p50 and p99 latency (each call returns
//                 once its change is committed and in that server's snapshot)
//   propagation   a rotation through one server, then the time until the other seals
//                 under the new version (--samples rotations, alternating direction):
//                 p50, p99 and max
//
// It starts nothing itself: it makes a fresh tenant, key and token through the admin
// plane and measures whatever servers it is given.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/bench/stats.h"

ABSL_FLAG(std::vector<std::string>, servers, {}, "Two HOST:PORT of servers sharing one keystore.");
ABSL_FLAG(std::string, admin_token_file, "", "The servers' admin token.");
ABSL_FLAG(std::string, label, "", "What the servers share, for the report (etcd, file).");
ABSL_FLAG(int, clients, 4, "Concurrent RotateKey callers.");
ABSL_FLAG(double, seconds, 10, "Seconds of RotateKey load.");
ABSL_FLAG(int, samples, 200, "Rotations timed for propagation.");
ABSL_FLAG(double, propagation_timeout, 5, "Seconds before a propagation counts as lost.");

namespace sealbox::bench {
namespace {

using Clock = std::chrono::steady_clock;
using server::bench::Percentile;

[[noreturn]] void Fail(const std::string& what, const grpc::Status& status) {
  std::fprintf(stderr, "replica_bench: %s: %s\n", what.c_str(), status.error_message().c_str());
  std::exit(1);
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Replica {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Admin::Stub> admin;
  std::unique_ptr<v1::Crypto::Stub> crypto;
};

class Bench {
 public:
  Bench(const std::vector<std::string>& servers, std::string admin_token)
      : admin_token_(std::move(admin_token)) {
    for (const std::string& address : servers) {
      Replica& r = replicas_.emplace_back();
      r.channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
      r.admin = v1::Admin::NewStub(r.channel);
      r.crypto = v1::Crypto::NewStub(r.channel);
    }
  }

  void Setup(int keys) {
    tenant_ = absl::StrCat("bench", std::random_device{}() % 1000000);
    grpc::ClientContext c1, c3;
    Admin(c1);
    v1::CreateTenantRequest tenant;
    tenant.set_name(tenant_);
    v1::Tenant made;
    if (auto s = replicas_[0].admin->CreateTenant(&c1, tenant, &made); !s.ok()) {
      Fail("CreateTenant", s);
    }
    for (int i = 0; i <= keys; ++i) {
      grpc::ClientContext c;
      Admin(c);
      v1::CreateKeyRequest key;
      key.set_tenant(tenant_);
      key.set_key(KeyName(i));
      v1::Key created;
      if (auto s = replicas_[0].admin->CreateKey(&c, key, &created); !s.ok()) {
        Fail("CreateKey", s);
      }
    }
    Admin(c3);
    v1::IssueTokenRequest issue;
    issue.set_tenant(tenant_);
    v1::IssueTokenResponse issued;
    if (auto s = replicas_[0].admin->IssueToken(&c3, issue, &issued); !s.ok()) {
      Fail("IssueToken", s);
    }
    token_ = issued.token();
  }

  // RotateKey by `clients` callers on the first replica for `seconds`: all on key 0,
  // or each on its own key (1..clients).
  void AdminRate(int clients, double seconds, bool own_keys) {
    std::atomic<bool> stop{false};
    std::atomic<int64_t> failed{0};
    std::vector<std::vector<double>> latencies(clients);
    std::vector<std::thread> threads;
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < clients; ++i) {
      threads.emplace_back([&, i] {
        while (!stop.load()) {
          const Clock::time_point t = Clock::now();
          if (Rotate(0, nullptr, own_keys ? i + 1 : 0).ok()) {
            latencies[i].push_back(Ms(Clock::now() - t));
          } else {
            ++failed;
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (std::thread& t : threads) t.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> all;
    for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
    std::printf(
        "  admin rate      RotateKey, %d callers on %s, %.0f s: %zu OK (%.0f/s), "
        "%lld failed; latency p50 %.2f ms, p99 %.2f ms\n",
        clients, own_keys ? "a key each" : "one key", elapsed, all.size(), all.size() / elapsed,
        static_cast<long long>(failed.load()), Percentile(all, 0.5), Percentile(all, 0.99));
  }

  // A rotation through one replica, then Seal on the other until it uses the new
  // version.
  void Propagation(int samples, double timeout) {
    std::vector<double> delays;
    int lost = 0;
    for (int i = 0; i < samples; ++i) {
      const int writer = i % 2, reader = 1 - writer;
      v1::Key rotated;
      if (auto s = Rotate(writer, &rotated); !s.ok()) Fail("RotateKey", s);
      const Clock::time_point changed = Clock::now();
      while (SealVersion(reader) != rotated.primary_version()) {
        if (Ms(Clock::now() - changed) > timeout * 1000) {
          ++lost;
          break;
        }
      }
      delays.push_back(Ms(Clock::now() - changed));
    }
    std::printf(
        "  propagation     %d rotations, alternating replicas: p50 %.2f ms, "
        "p99 %.2f ms, max %.2f ms; %d not seen within %.0f s\n",
        samples, Percentile(delays, 0.5), Percentile(delays, 0.99),
        *std::max_element(delays.begin(), delays.end()), lost, timeout);
  }

 private:
  void Admin(grpc::ClientContext& c) const {
    c.AddMetadata("authorization", "Bearer " + admin_token_);
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  }

  static std::string KeyName(int i) { return absl::StrCat("k", i); }

  grpc::Status Rotate(int replica, v1::Key* out = nullptr, int key = 0) {
    grpc::ClientContext c;
    Admin(c);
    v1::KeyRef ref;
    ref.set_tenant(tenant_);
    ref.set_key(KeyName(key));
    v1::Key rotated;
    return replicas_[replica].admin->RotateKey(&c, ref, out ? out : &rotated);
  }

  uint32_t SealVersion(int replica) {
    grpc::ClientContext c;
    c.AddMetadata("authorization", "Bearer " + token_);
    c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SealRequest request;
    request.set_key(KeyName(0));
    request.set_plaintext("x");
    v1::SealResponse response;
    if (auto s = replicas_[replica].crypto->Seal(&c, request, &response); !s.ok()) {
      Fail("Seal", s);
    }
    return response.key_version();
  }

  const std::string admin_token_;
  std::vector<Replica> replicas_;
  std::string tenant_, token_;
};

int Run() {
  const std::vector<std::string> servers = absl::GetFlag(FLAGS_servers);
  if (servers.size() != 2) {
    std::fprintf(stderr, "replica_bench: --servers takes two HOST:PORT\n");
    return 2;
  }
  std::ifstream in(absl::GetFlag(FLAGS_admin_token_file));
  std::string token((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bench bench(servers, std::string(absl::StripAsciiWhitespace(token)));
  std::printf(
      "replica_bench: admin rate and propagation between two servers on one "
      "keystore (%s): %s, %s\n",
      absl::GetFlag(FLAGS_label).c_str(), servers[0].c_str(), servers[1].c_str());
  bench.Setup(absl::GetFlag(FLAGS_clients));
  bench.AdminRate(absl::GetFlag(FLAGS_clients), absl::GetFlag(FLAGS_seconds), false);
  bench.AdminRate(absl::GetFlag(FLAGS_clients), absl::GetFlag(FLAGS_seconds), true);
  bench.Propagation(absl::GetFlag(FLAGS_samples), absl::GetFlag(FLAGS_propagation_timeout));
  return 0;
}

}  // namespace
}  // namespace sealbox::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Admin rate and change propagation between two sealbox-servers sharing a keystore.");
  absl::ParseCommandLine(argc, argv);
  return sealbox::bench::Run();
}
