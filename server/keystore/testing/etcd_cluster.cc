#include "server/keystore/testing/etcd_cluster.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/keystore/etcd/etcd_client.h"

namespace sealbox::server::testing {
namespace {

// A loopback port free right now (the kernel picks it; etcd binds it a moment later).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return connected;
}

std::string TempDir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/etcd.XXXXXX");
  if (mkdtemp(dir.data()) == nullptr) abort();
  return dir;
}

std::string Url(int port) { return absl::StrCat("http://127.0.0.1:", port); }

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(int members) {
  std::unique_ptr<EtcdCluster> cluster(new EtcdCluster);
  const std::string home = TempDir();
  std::vector<std::string> peers;
  for (int i = 0; i < members; ++i) {
    Member& m = cluster->members_.emplace_back();
    m.name = absl::StrCat("m", i);
    m.client_port = FreePort();
    m.peer_port = FreePort();
    m.data_dir = absl::StrCat(home, "/", m.name);
    m.log = absl::StrCat(home, "/", m.name, ".log");
    peers.push_back(absl::StrCat(m.name, "=", Url(m.peer_port)));
  }
  cluster->initial_cluster_ = absl::StrJoin(peers, ",");
  for (Member& m : cluster->members_) {
    if (absl::Status s = cluster->Spawn(m, /*initial=*/true); !s.ok()) return s;
  }
  if (absl::Status s = cluster->WaitUntilServing(cluster->endpoints()); !s.ok()) return s;
  return cluster;
}

absl::Status EtcdCluster::Spawn(Member& m, bool initial) {
  std::vector<std::string> args = {
      "/usr/bin/etcd",
      "--name",
      m.name,
      "--data-dir",
      m.data_dir,
      "--listen-client-urls",
      Url(m.client_port),
      "--advertise-client-urls",
      Url(m.client_port),
      "--listen-peer-urls",
      Url(m.peer_port),
      "--initial-advertise-peer-urls",
      Url(m.peer_port),
      "--initial-cluster",
      initial_cluster_,
      "--initial-cluster-state",
      initial ? "new" : "existing",
      "--logger",
      "zap",
      "--log-level",
      "warn",
  };
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // posix_spawn, not fork: a child forked from this threaded process (gRPC's and the
  // keystore's threads) must not allocate before exec, or it can deadlock on a lock
  // another thread held at the fork.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, m.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::InternalError(absl::StrCat("cannot start ", argv[0], ": ", strerror(spawned)));
  }
  m.pid = pid;
  return absl::OkStatus();
}

absl::Status EtcdCluster::WaitUntilServing(const std::vector<std::string>& endpoints) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  // Until each port accepts a connection, so gRPC's channel starts connected rather
  // than in reconnect backoff.
  for (const std::string& endpoint : endpoints) {
    const int port = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
    while (!Accepts(port)) {
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrCat("etcd did not listen on ", endpoint));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  etcd::EtcdOptions options;
  options.endpoints = endpoints;
  options.request_timeout = absl::Seconds(1);
  auto client = etcd::EtcdClient::Create(options);
  if (!client.ok()) return client.status();
  absl::Status last;
  while (absl::Now() < deadline) {
    etcdserverpb::RangeRequest request;
    request.set_key("health");
    last = (*client)->Range(request).status();
    if (last.ok()) return absl::OkStatus();
    absl::SleepFor(absl::Milliseconds(50));
  }
  return absl::DeadlineExceededError(absl::StrCat("etcd did not start: ", last.message()));
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> out;
  for (const Member& m : members_) out.push_back(absl::StrCat("127.0.0.1:", m.client_port));
  return out;
}

void EtcdCluster::Kill(int member) {
  Member& m = members_[member];
  if (m.pid <= 0) return;
  kill(m.pid, SIGKILL);
  waitpid(m.pid, nullptr, 0);
  m.pid = -1;
}

absl::Status EtcdCluster::Restart(int member) {
  Kill(member);
  if (absl::Status s = Spawn(members_[member], /*initial=*/false); !s.ok()) return s;
  return WaitUntilServing({absl::StrCat("127.0.0.1:", members_[member].client_port)});
}

EtcdCluster::~EtcdCluster() {
  for (size_t i = 0; i < members_.size(); ++i) Kill(static_cast<int>(i));
}

}  // namespace sealbox::server::testing
