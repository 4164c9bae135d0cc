#include "server/metrics/exposer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "civetweb.h"
#include "gtest/gtest.h"

namespace sealbox::server {
namespace {

// One HTTP/1.0 GET of `path` from 127.0.0.1:`port` over a plain socket: the whole
// response, status line and headers included ("" if the connection failed). Reads
// to Content-Length when there is one: civetweb may hold the connection open.
std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      ssize_t n;
      while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
        response.append(buffer, n);
        const size_t headers_end = response.find("\r\n\r\n");
        if (headers_end == std::string::npos) continue;
        static const std::regex content_length("\r\nContent-Length: (\\d+)\r\n", std::regex::icase);
        std::smatch length;
        const std::string headers = response.substr(0, headers_end + 2);
        if (std::regex_search(headers, length, content_length) &&
            response.size() >= headers_end + 4 + std::stoul(length[1].str())) {
          break;
        }
      }
    }
  }
  close(fd);
  return response;
}

// The status line's code: "HTTP/1.1 404 Not Found" -> "404".
std::string StatusCode(const std::string& response) {
  const size_t space = response.find(' ');
  return space == std::string::npos ? "" : response.substr(space + 1, 3);
}

std::string Body(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

// The exposer_* names docs/OPERATIONS.md's metrics table lists.
std::set<std::string> DocumentedExposerMetrics() {
  std::ifstream file("docs/OPERATIONS.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  std::set<std::string> names;
  const std::regex name("`(exposer_[a-z_]+)`");
  for (std::sregex_iterator it(doc.begin(), doc.end(), name), end; it != end; ++it) {
    names.insert((*it)[1].str());
  }
  return names;
}

// One exposer for the suite: stopping one takes civetweb about 2 s (its listener
// polls for the stop flag every 2 s), so each test starting its own would be slow.
class MetricsExposerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    metrics_ = new Metrics;
    absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer =
        MetricsExposer::Start("127.0.0.1:0", *metrics_);
    ASSERT_TRUE(exposer.ok()) << exposer.status();
    exposer_ = exposer->release();
  }
  static void TearDownTestSuite() {
    delete exposer_;  // first: it reads metrics_
    delete metrics_;
  }
  void SetUp() override { ASSERT_NE(exposer_, nullptr); }

  static int port() { return exposer_->port(); }

  static Metrics* metrics_;
  static MetricsExposer* exposer_;
};

Metrics* MetricsExposerTest::metrics_ = nullptr;
MetricsExposer* MetricsExposerTest::exposer_ = nullptr;

TEST_F(MetricsExposerTest, ServesTheTextFormatAtSlashMetrics) {
  EXPECT_GT(port(), 0);
  metrics_->RecordRpc("Seal", absl::StatusCode::kOk, absl::Milliseconds(1));
  const std::string response = HttpGet(port(), "/metrics");
  EXPECT_EQ(StatusCode(response), "200") << response;
  EXPECT_NE(response.find("\r\nContent-Type: text/plain"), std::string::npos) << response;
  const std::string body = Body(response);
  EXPECT_NE(body.find("\nsealbox_rpcs_total{method=\"Seal\",code=\"OK\"} "), std::string::npos)
      << body;
  EXPECT_NE(body.find("# TYPE sealbox_auth_failures_total counter\n"), std::string::npos);
  EXPECT_NE(body.find("\nprocess_cpu_seconds_total "), std::string::npos);
  const std::set<std::string> exposer_metrics = DocumentedExposerMetrics();
  EXPECT_EQ(exposer_metrics.size(), 3u) << "cannot find exposer_* in docs/OPERATIONS.md";
  for (const std::string& name : exposer_metrics) {
    EXPECT_NE(body.find("# TYPE " + name + " "), std::string::npos) << name << " not served";
  }
}

TEST_F(MetricsExposerTest, EachScrapeReadsTheCurrentValues) {
  EXPECT_NE(Body(HttpGet(port(), "/metrics")).find("\nsealbox_active_streams 0\n"),
            std::string::npos);
  EXPECT_EQ(Body(HttpGet(port(), "/metrics")).find("sealbox_keystore_"), std::string::npos);
  metrics_->StreamStarted();
  metrics_->ReadKeystoreWith([] {
    KeystoreHealth health;
    health.loaded = true;
    health.revision = 77;
    return health;
  });
  const std::string body = Body(HttpGet(port(), "/metrics"));
  metrics_->StreamEnded();
  metrics_->ReadKeystoreWith(nullptr);
  EXPECT_NE(body.find("\nsealbox_active_streams 1\n"), std::string::npos) << body;
  EXPECT_NE(body.find("\nsealbox_keystore_loaded 1\n"), std::string::npos) << body;
  EXPECT_NE(body.find("\nsealbox_keystore_revision 77\n"), std::string::npos) << body;
}

TEST_F(MetricsExposerTest, OtherPathsAreNotFound) {
  for (const char* path : {"/", "/other", "/favicon.ico"}) {
    const std::string response = HttpGet(port(), path);
    EXPECT_EQ(StatusCode(response), "404") << path << ": " << response;
  }
}

TEST_F(MetricsExposerTest, APortInUseIsUnavailable) {
  const std::string taken = "127.0.0.1:" + std::to_string(port());
  absl::StatusOr<std::unique_ptr<MetricsExposer>> second = MetricsExposer::Start(taken, *metrics_);
  EXPECT_TRUE(absl::IsUnavailable(second.status())) << second.status();
  // The first still serves.
  EXPECT_EQ(StatusCode(HttpGet(port(), "/metrics")), "200");
}

TEST(MetricsExposer, RefusesAnAddressThatIsNotHostPort) {
  Metrics metrics;
  for (const char* bad :
       {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:65536", "127.0.0.1:-1"}) {
    absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer = MetricsExposer::Start(bad, metrics);
    EXPECT_TRUE(absl::IsInvalidArgument(exposer.status())) << bad << ": " << exposer.status();
  }
}

TEST(MetricsExposer, SaysSoWhenItCannotServeIpv6) {
  Metrics metrics;
  absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer =
      MetricsExposer::Start("[::1]:0", metrics);
  // mg_check_feature(8): civetweb built with IPv6 (Debian 12's is not).
  if (mg_check_feature(8) != 0) GTEST_SKIP() << "this civetweb serves IPv6";
  EXPECT_TRUE(absl::IsInvalidArgument(exposer.status())) << exposer.status();
  EXPECT_NE(exposer.status().message().find("IPv6"), absl::string_view::npos) << exposer.status();
}

}  // namespace
}  // namespace sealbox::server
