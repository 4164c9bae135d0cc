#include "client/cli/server_address.h"

#include "gtest/gtest.h"

namespace sealbox::client {
namespace {

TEST(ParseServerAddressTest, HostAndPort) {
  absl::StatusOr<ServerAddress> address = ParseServerAddress("sealbox.internal:443");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->host, "sealbox.internal");
  EXPECT_EQ(address->port, "443");
  EXPECT_FALSE(address->unix_socket);
}

TEST(ParseServerAddressTest, BracketedIpv6) {
  absl::StatusOr<ServerAddress> address = ParseServerAddress("[fd00::1]:50051");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_EQ(address->host, "fd00::1");
  EXPECT_EQ(address->port, "50051");
}

TEST(ParseServerAddressTest, UnixSocket) {
  absl::StatusOr<ServerAddress> address = ParseServerAddress("unix:/run/sealbox.sock");
  ASSERT_TRUE(address.ok()) << address.status();
  EXPECT_TRUE(address->unix_socket);
  EXPECT_EQ(address->host, "");
}

TEST(ParseServerAddressTest, UnixWithoutAPathIsRefused) {
  absl::StatusOr<ServerAddress> address = ParseServerAddress("unix:");
  EXPECT_EQ(address.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(address.status().message(), "unix: needs a socket path");
}

TEST(ParseServerAddressTest, MalformedAddressesNameTheFormsAccepted) {
  for (const char* bad : {"nowhere", ":50051", "host:", "host:123456", "host:80a", "::1:50051",
                          "[]:1", "[::1:50051", "host:-1"}) {
    absl::StatusOr<ServerAddress> address = ParseServerAddress(bad);
    EXPECT_EQ(address.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(address.status().message(), std::string("server address '") + bad +
                                              "' is not HOST:PORT, [IPV6]:PORT or unix:PATH");
  }
}

bool Loopback(const char* server) {
  absl::StatusOr<ServerAddress> address = ParseServerAddress(server);
  EXPECT_TRUE(address.ok()) << server << ": " << address.status();
  return address.ok() && IsLoopback(*address);
}

TEST(IsLoopbackTest, OnlyTrafficThatStaysOnTheMachine) {
  EXPECT_TRUE(Loopback("localhost:1"));
  EXPECT_TRUE(Loopback("LocalHost:1"));
  EXPECT_TRUE(Loopback("api.localhost:1"));
  EXPECT_TRUE(Loopback("127.0.0.1:1"));
  EXPECT_TRUE(Loopback("127.255.0.9:1"));
  EXPECT_TRUE(Loopback("[::1]:1"));
  EXPECT_TRUE(Loopback("[::ffff:127.0.0.1]:1"));
  EXPECT_TRUE(Loopback("unix:/tmp/s"));

  EXPECT_FALSE(Loopback("128.0.0.1:1"));
  EXPECT_FALSE(Loopback("10.0.0.1:1"));
  EXPECT_FALSE(Loopback("[::2]:1"));
  EXPECT_FALSE(Loopback("[::ffff:10.0.0.1]:1"));
  EXPECT_FALSE(Loopback("localhost.example.com:1"));
  EXPECT_FALSE(Loopback("0.0.0.0:1"));
}

}  // namespace
}  // namespace sealbox::client
