// The flags' config on its own: what Validate refuses (each message naming the flag
// to change), the heartbeat --max-staleness gives etcd, --max-staleness's syntax, and
// which listen addresses count as loopback. Parsing the flags themselves is tested
// end to end (tests/e2e), where a user meets it.
#include "server/process/server_config.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

using ::testing::HasSubstr;

ServerConfig Valid() {
  ServerConfig config;
  config.data_dir = "/var/lib/sealbox";
  config.kek = *Kek::FromBytes(std::vector<uint8_t>(32, 7));
  return config;
}

TEST(ServerConfigTest, TheDefaultsWithAStoreAndAKekAreValid) {
  EXPECT_TRUE(Valid().Validate().ok()) << Valid().Validate();
}

TEST(ServerConfigTest, ExactlyOneStore) {
  ServerConfig none = Valid();
  none.data_dir.clear();
  EXPECT_THAT(none.Validate().message(), HasSubstr("--data-dir"));
  ServerConfig both = Valid();
  both.etcd.endpoints = {"127.0.0.1:2379"};
  EXPECT_THAT(both.Validate().message(), HasSubstr("name two keystores"));
  ServerConfig etcd = Valid();
  etcd.data_dir.clear();
  etcd.etcd.endpoints = {"127.0.0.1:2379"};
  EXPECT_TRUE(etcd.Validate().ok());
  EXPECT_TRUE(etcd.uses_etcd());
}

TEST(ServerConfigTest, AKekIsRequired) {
  ServerConfig config = Valid();
  config.kek.reset();
  EXPECT_THAT(config.Validate().message(), HasSubstr("--kek-file"));
}

TEST(ServerConfigTest, PlaintextOnlyOnLoopbackUnlessSaidOtherwise) {
  ServerConfig config = Valid();
  config.listen = "0.0.0.0:50051";
  EXPECT_THAT(config.Validate().message(), HasSubstr("--allow-insecure-listen"));
  config.allow_insecure_listen = true;
  EXPECT_TRUE(config.Validate().ok());
  config.allow_insecure_listen = false;
  config.tls_cert_file = "cert.pem";
  EXPECT_THAT(config.Validate().message(), HasSubstr("--tls-cert and --tls-key go together"));
  config.tls_key_file = "key.pem";
  EXPECT_TRUE(config.Validate().ok());
}

TEST(ServerConfigTest, NoListenerOnlyWithAKmsSocket) {
  ServerConfig config = Valid();
  config.listen = kNoListener;
  EXPECT_THAT(config.Validate().message(), HasSubstr("--listen=none serves nothing"));
  config.kms.path = "/run/sealbox/kms.sock";
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
}

TEST(ServerConfigTest, AClientCaNeedsTls) {
  ServerConfig config = Valid();
  config.client_ca_file = "ca.pem";
  EXPECT_THAT(config.Validate().message(), HasSubstr("--client-ca needs"));
}

TEST(ServerConfigTest, AUnixSocketPathMustFitTheSystemsLimit) {
  ServerConfig config = Valid();
  config.listen = "unix:/" + std::string(106, 's');  // 107 bytes: the most allowed
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
  config.listen += "s";
  EXPECT_THAT(config.Validate().message(), HasSubstr("108 bytes long; the system allows 107"));
}

TEST(ServerConfigTest, LimitsOutOfRangeNameTheirFlag) {
  struct Case {
    void (*set)(ServerConfig&);
    const char* flag;
  };
  const Case cases[] = {
      {[](ServerConfig& c) { c.limits.max_unary_bytes = 0; }, "--max-unary-bytes"},
      {[](ServerConfig& c) { c.limits.max_unary_bytes = 4u << 20; }, "--max-unary-bytes"},
      {[](ServerConfig& c) { c.limits.max_concurrent_streams = 0; }, "--max-streams"},
      {[](ServerConfig& c) { c.tls_reload_interval = absl::Milliseconds(500); },
       "--tls-reload-seconds"},
      {[](ServerConfig& c) { c.idle_epoch_sweep = absl::Seconds(-1); }, "--idle-epoch-seconds"},
      {[](ServerConfig& c) { c.max_connection_age = absl::Hours(24 * 25); },
       "--max-connection-age-seconds"},
      {[](ServerConfig& c) { c.limits.stream_idle_timeout = absl::Seconds(-1); },
       "--stream-idle-seconds"},
      {[](ServerConfig& c) { c.auth_limits.max_failures = -1; }, "--auth-failures-per-minute"},
      {[](ServerConfig& c) { c.max_streams_per_connection = 0; }, "--max-streams-per-connection"},
      {[](ServerConfig& c) { c.max_connection_idle = absl::Seconds(-1); },
       "--max-connection-idle-seconds"},
      {[](ServerConfig& c) { c.handshake_timeout = absl::Milliseconds(10); },
       "--handshake-timeout-seconds"},
      {[](ServerConfig& c) { c.grpc_memory_limit_bytes = 1 << 20; }, "--grpc-memory-limit-mb"},
      {[](ServerConfig& c) { c.max_staleness = absl::Seconds(1); }, "--max-staleness"},
  };
  for (const Case& c : cases) {
    ServerConfig config = Valid();
    c.set(config);
    absl::Status status = config.Validate();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.flag << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr(c.flag));
  }
}

TEST(ServerConfigTest, TheFileBackendsBoundLeavesRoomForTwoReads) {
  ServerConfig config = Valid();
  config.reload_interval = absl::Seconds(3);
  config.max_staleness = absl::Seconds(5);
  EXPECT_THAT(config.Validate().message(), HasSubstr("at least 6s"));
  config.max_staleness = absl::Seconds(6);
  EXPECT_TRUE(config.Validate().ok());
  config.max_staleness = absl::InfiniteDuration();
  EXPECT_TRUE(config.Validate().ok());
}

TEST(ServerConfigTest, TheEtcdHeartbeatIsATenthOfTheBoundWithin100To250Ms) {
  ServerConfig config = Valid();
  config.max_staleness = absl::Seconds(2);
  EXPECT_EQ(config.EtcdHeartbeat(), absl::Milliseconds(200));
  config.max_staleness = absl::Seconds(30);
  EXPECT_EQ(config.EtcdHeartbeat(), absl::Milliseconds(250));
  config.max_staleness = absl::Milliseconds(500);
  EXPECT_EQ(config.EtcdHeartbeat(), absl::Milliseconds(100));
  config.max_staleness = absl::InfiniteDuration();
  EXPECT_EQ(config.EtcdHeartbeat(), absl::Milliseconds(250));
}

TEST(ServerConfigTest, MaxStalenessTakesADurationOrUnbounded) {
  EXPECT_EQ(*ParseMaxStaleness("30s"), absl::Seconds(30));
  EXPECT_EQ(*ParseMaxStaleness("2m"), absl::Minutes(2));
  EXPECT_EQ(*ParseMaxStaleness("1500ms"), absl::Milliseconds(1500));
  EXPECT_EQ(*ParseMaxStaleness("unbounded"), absl::InfiniteDuration());
  for (const char* bad : {"", "30", "0s", "-5s", "inf", "forever", "Unbounded"}) {
    absl::StatusOr<absl::Duration> parsed = ParseMaxStaleness(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(parsed.status())) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("nor \"unbounded\"")) << bad;
  }
}

TEST(ServerConfigTest, LoopbackAddresses) {
  for (const char* loopback : {"127.0.0.1:50051", "127.1.2.3:1", "localhost:50051", "[::1]:50051",
                               "unix:/run/sealbox.sock"}) {
    EXPECT_TRUE(IsLoopbackAddress(loopback)) << loopback;
  }
  for (const char* remote :
       {"0.0.0.0:50051", "[::]:50051", "10.0.0.1:50051", "localhost.example.com:1", "sealbox:1"}) {
    EXPECT_FALSE(IsLoopbackAddress(remote)) << remote;
  }
}

}  // namespace
}  // namespace sealbox::server
