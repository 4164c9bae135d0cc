#include "server/metrics/metrics.h"

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "crypto/decryption_failure.h"
#include "crypto/secret/locked_memory.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"

namespace sealbox::server {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::map<std::string, std::string>;

// What a scrape of `metrics` shows, family by family, as an exposer collects it.
std::vector<MetricFamily> Scrape(const Metrics& metrics) {
  std::vector<MetricFamily> families;
  for (const auto& collectable : metrics.collectables()) {
    for (MetricFamily& family : collectable->Collect()) families.push_back(std::move(family));
  }
  return families;
}

const MetricFamily* FindFamily(const std::vector<MetricFamily>& families, const std::string& name) {
  for (const MetricFamily& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

// The series of `family` with exactly these labels, or null.
const ClientMetric* FindSeries(const MetricFamily& family, const Labels& labels) {
  for (const ClientMetric& series : family.metric) {
    Labels have;
    for (const ClientMetric::Label& label : series.label) have[label.name] = label.value;
    if (have == labels) return &series;
  }
  return nullptr;
}

// A counter's or gauge's value in a fresh scrape; NaN when the series is missing.
double Value(const Metrics& metrics, const std::string& name, const Labels& labels = {}) {
  const std::vector<MetricFamily> families = Scrape(metrics);
  const MetricFamily* family = FindFamily(families, name);
  if (family == nullptr) return std::nan("");
  const ClientMetric* series = FindSeries(*family, labels);
  if (series == nullptr) return std::nan("");
  return family->type == MetricType::Gauge ? series->gauge.value : series->counter.value;
}

ClientMetric::Histogram Latency(const Metrics& metrics, const std::string& method) {
  const std::vector<MetricFamily> families = Scrape(metrics);
  const MetricFamily* family = FindFamily(families, "sealbox_rpc_duration_seconds");
  if (family == nullptr) return {};
  const ClientMetric* series = FindSeries(*family, {{"method", method}});
  return series == nullptr ? ClientMetric::Histogram{} : series->histogram;
}

std::string TypeName(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
    case MetricType::Summary:
      return "summary";
    default:
      return "untyped";
  }
}

// ---------------------------------------------------------------------------------
// docs/OPERATIONS.md's metrics table: the names, labels and types operators alert on.

constexpr char kOperationsDoc[] = "docs/OPERATIONS.md";

std::string ReadOperationsDoc() {
  std::ifstream file(kOperationsDoc);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The part of the document between the metrics heading and the alerts that follow it.
std::string MetricsSection(const std::string& doc) {
  const size_t start = doc.find("**Metrics:**");
  const size_t end = doc.find("**Abuse limits.**", start);
  if (start == std::string::npos || end == std::string::npos) return "";
  return doc.substr(start, end - start);
}

struct DocumentedMetric {
  std::vector<std::string> labels;  // in the order the table writes them
  std::string type;                 // the type column: "counter", "counter, gauges", ...
};

// Each row of the table names one or more metrics in backquotes, `name{label,...}`.
std::map<std::string, DocumentedMetric> DocumentedMetrics(const std::string& section) {
  std::map<std::string, DocumentedMetric> metrics;
  const std::regex name(R"(`([a-z_]+)(\{([a-z_,]+)\})?`)");
  for (absl::string_view line : absl::StrSplit(section, '\n')) {
    if (!absl::ConsumePrefix(&line, "| `")) continue;
    const std::vector<std::string> columns = absl::StrSplit(line, " | ");
    if (columns.size() < 3) continue;
    const std::string names = "`" + columns[0];
    for (std::sregex_iterator it(names.begin(), names.end(), name), end; it != end; ++it) {
      DocumentedMetric metric;
      metric.type = columns[1];
      if ((*it)[3].matched) metric.labels = absl::StrSplit((*it)[3].str(), ',');
      metrics[(*it)[1].str()] = metric;
    }
  }
  return metrics;
}

// A Metrics whose every family has a series: the ones that start empty given one.
void FillEveryFamily(Metrics& metrics) {
  metrics.RecordRpc("Seal", absl::StatusCode::kOk, absl::Milliseconds(1));
  metrics.CountKeyDecryptionFailure("acme", "orders");
  metrics.ReadKeystoreWith([] { return KeystoreHealth{}; });
}

TEST(Metrics, ScrapeHasExactlyTheFamiliesOfTheOperationsTable) {
  const std::map<std::string, DocumentedMetric> documented =
      DocumentedMetrics(MetricsSection(ReadOperationsDoc()));
  ASSERT_GE(documented.size(), 20u) << "cannot find the metrics table in " << kOperationsDoc;
  Metrics metrics;
  FillEveryFamily(metrics);
  const std::vector<MetricFamily> families = Scrape(metrics);

  std::set<std::string> scraped;
  for (const MetricFamily& family : families) {
    scraped.insert(family.name);
    auto doc = documented.find(family.name);
    if (doc == documented.end()) {
      ADD_FAILURE() << family.name << " is scraped but not in the table of " << kOperationsDoc;
      continue;
    }
    EXPECT_FALSE(family.help.empty()) << family.name;
    EXPECT_NE(doc->second.type.find(TypeName(family.type)), std::string::npos)
        << family.name << " is a " << TypeName(family.type) << "; the table says "
        << doc->second.type;
    // Every series carries the documented labels, in the documented order.
    ASSERT_FALSE(family.metric.empty()) << family.name;
    for (const ClientMetric& series : family.metric) {
      std::vector<std::string> labels;
      for (const ClientMetric::Label& label : series.label) labels.push_back(label.name);
      EXPECT_EQ(labels, doc->second.labels) << family.name;
    }
  }
  for (const auto& [name, doc] : documented) {
    // exposer_* come from prometheus-cpp's Exposer (exposer_test.cc).
    if (name.rfind("exposer_", 0) == 0) continue;
    EXPECT_EQ(scraped.count(name), 1u) << name << " is in " << kOperationsDoc << " but not scraped";
  }
}

TEST(Metrics, EverySeriesTheDocumentedAlertsNameIsScraped) {
  const std::string section = MetricsSection(ReadOperationsDoc());
  Metrics metrics;
  FillEveryFamily(metrics);
  const std::vector<MetricFamily> families = Scrape(metrics);
  const std::regex series_name(R"(\b(sealbox|process)_[a-z_]+)");
  int alerts = 0;
  for (absl::string_view line : absl::StrSplit(section, '\n')) {
    absl::string_view expr = absl::StripLeadingAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&expr, "expr:")) continue;
    ++alerts;
    const std::string text(expr);
    for (std::sregex_iterator it(text.begin(), text.end(), series_name), end; it != end; ++it) {
      EXPECT_NE(FindFamily(families, it->str()), nullptr)
          << "an alert in " << kOperationsDoc << " names " << it->str() << ": " << text;
    }
  }
  EXPECT_GE(alerts, 10);
}

// ---------------------------------------------------------------------------------
// What a fresh registry shows.

TEST(Metrics, FamiliesWithoutSeriesAreLeftOut) {
  Metrics metrics;
  const std::vector<MetricFamily> families = Scrape(metrics);
  EXPECT_EQ(FindFamily(families, "sealbox_rpcs_total"), nullptr);
  EXPECT_EQ(FindFamily(families, "sealbox_rpc_duration_seconds"), nullptr);
  EXPECT_EQ(FindFamily(families, "sealbox_key_decryption_failures_total"), nullptr);
  // No keystore reader yet: no keystore series.
  EXPECT_EQ(FindFamily(families, "sealbox_keystore_loaded"), nullptr);
  const std::string text = metrics.Render();
  EXPECT_EQ(text.find("sealbox_rpcs_total"), std::string::npos) << text;
  EXPECT_EQ(text.find("sealbox_key_decryption_failures_total"), std::string::npos) << text;
}

TEST(Metrics, AlertedSeriesExistAtZeroFromTheStart) {
  Metrics metrics;
  for (const char* plane : {"data", "admin"}) {
    for (const char* reason : {"missing", "invalid", "wrong_plane", "expired"}) {
      EXPECT_EQ(
          Value(metrics, "sealbox_auth_failures_total", {{"plane", plane}, {"reason", reason}}), 0)
          << plane << " " << reason;
    }
    EXPECT_EQ(Value(metrics, "sealbox_auth_limited_total", {{"plane", plane}}), 0) << plane;
  }
  EXPECT_EQ(Value(metrics, "sealbox_audit_lines_dropped_total", {{"reason", "queue_full"}}), 0);
  EXPECT_EQ(Value(metrics, "sealbox_audit_lines_dropped_total", {{"reason", "write_failed"}}), 0);
  EXPECT_EQ(Value(metrics, "sealbox_decryption_failures_total"), 0);
  EXPECT_EQ(Value(metrics, "sealbox_decryption_refused_total"), 0);
  EXPECT_EQ(Value(metrics, "sealbox_active_streams"), 0);
  EXPECT_FALSE(std::isnan(Value(metrics, "sealbox_secret_memory_bytes", {{"locked", "true"}})));
  EXPECT_FALSE(std::isnan(Value(metrics, "sealbox_secret_memory_bytes", {{"locked", "false"}})));
}

// ---------------------------------------------------------------------------------
// The recording methods.

TEST(Metrics, RecordRpcCountsByMethodAndCode) {
  Metrics metrics;
  metrics.RecordRpc("Seal", absl::StatusCode::kOk, absl::Milliseconds(1));
  metrics.RecordRpc("Seal", absl::StatusCode::kOk, absl::Milliseconds(1));
  metrics.RecordRpc("Seal", absl::StatusCode::kNotFound, absl::Milliseconds(1));
  metrics.RecordRpc("CreateKey", absl::StatusCode::kUnauthenticated, absl::Milliseconds(1));
  EXPECT_EQ(Value(metrics, "sealbox_rpcs_total", {{"method", "Seal"}, {"code", "OK"}}), 2);
  EXPECT_EQ(Value(metrics, "sealbox_rpcs_total", {{"method", "Seal"}, {"code", "NOT_FOUND"}}), 1);
  EXPECT_EQ(
      Value(metrics, "sealbox_rpcs_total", {{"method", "CreateKey"}, {"code", "UNAUTHENTICATED"}}),
      1);
  // A code never seen for a method has no series.
  EXPECT_TRUE(
      std::isnan(Value(metrics, "sealbox_rpcs_total", {{"method", "CreateKey"}, {"code", "OK"}})));
  EXPECT_EQ(Latency(metrics, "Seal").sample_count, 3u);
  EXPECT_EQ(Latency(metrics, "CreateKey").sample_count, 1u);
}

TEST(Metrics, LatencyFallsInTheDocumentedBuckets) {
  Metrics metrics;
  metrics.RecordRpc("Open", absl::StatusCode::kOk, absl::Microseconds(300));
  metrics.RecordRpc("Open", absl::StatusCode::kOk, absl::Seconds(1));
  metrics.RecordRpc("Open", absl::StatusCode::kOk, absl::Seconds(10));
  const ClientMetric::Histogram latency = Latency(metrics, "Open");
  EXPECT_EQ(latency.sample_count, 3u);
  EXPECT_DOUBLE_EQ(latency.sample_sum, 11.0003);
  // "buckets 0.1 ms to 2.5 s", then +Inf.
  ASSERT_EQ(latency.bucket.size(), Metrics::kLatencyBounds.size() + 1);
  EXPECT_EQ(latency.bucket.front().upper_bound, 0.0001);
  EXPECT_EQ(latency.bucket[latency.bucket.size() - 2].upper_bound, 2.5);
  EXPECT_TRUE(std::isinf(latency.bucket.back().upper_bound));
  for (const ClientMetric::Bucket& bucket : latency.bucket) {
    const uint64_t expected =
        (bucket.upper_bound >= 0.0003) + (bucket.upper_bound >= 1.0) + (bucket.upper_bound >= 10.0);
    EXPECT_EQ(bucket.cumulative_count, expected) << "le=" << bucket.upper_bound;
  }
}

TEST(Metrics, RecordOutcomeCountsOnlyRealDecryptionFailures) {
  Metrics metrics;
  metrics.RecordOutcome("Open", crypto::DecryptionFailedError(), absl::Now());
  EXPECT_EQ(Value(metrics, "sealbox_decryption_failures_total"), 1);
  // The same code and text without the payload is some other INVALID_ARGUMENT.
  metrics.RecordOutcome("Open", absl::InvalidArgumentError("decryption failed"), absl::Now());
  metrics.RecordOutcome("Open", absl::OkStatus(), absl::Now() - absl::Milliseconds(5));
  EXPECT_EQ(Value(metrics, "sealbox_decryption_failures_total"), 1);
  EXPECT_EQ(
      Value(metrics, "sealbox_rpcs_total", {{"method", "Open"}, {"code", "INVALID_ARGUMENT"}}), 2);
  EXPECT_EQ(Value(metrics, "sealbox_rpcs_total", {{"method", "Open"}, {"code", "OK"}}), 1);
  const ClientMetric::Histogram latency = Latency(metrics, "Open");
  EXPECT_EQ(latency.sample_count, 3u);
  EXPECT_GE(latency.sample_sum, 0.005);  // measured from `started`
}

TEST(Metrics, CountersMoveByWhatTheyAreGiven) {
  Metrics metrics;
  metrics.AddBytesSealed(100);
  metrics.AddBytesSealed(28);
  metrics.AddBytesOpened(7);
  metrics.CountDecryptionRefused();
  metrics.CountStreamIdleTimeout();
  metrics.CountStreamIdleTimeout();
  metrics.CountAuditLinesWritten(3);
  metrics.CountAuditLinesDropped("queue_full", 2);
  metrics.CountAuditLinesDropped("write_failed", 5);
  EXPECT_EQ(Value(metrics, "sealbox_plaintext_bytes_sealed_total"), 128);
  EXPECT_EQ(Value(metrics, "sealbox_plaintext_bytes_opened_total"), 7);
  EXPECT_EQ(Value(metrics, "sealbox_decryption_refused_total"), 1);
  EXPECT_EQ(Value(metrics, "sealbox_stream_idle_timeouts_total"), 2);
  EXPECT_EQ(Value(metrics, "sealbox_audit_lines_written_total"), 3);
  EXPECT_EQ(Value(metrics, "sealbox_audit_lines_dropped_total", {{"reason", "queue_full"}}), 2);
  EXPECT_EQ(Value(metrics, "sealbox_audit_lines_dropped_total", {{"reason", "write_failed"}}), 5);
}

TEST(Metrics, AuthFailuresCountByPlaneAndReason) {
  Metrics metrics;
  const std::vector<std::string> planes = {"data", "admin"};
  const std::vector<std::string> reasons = {"missing", "invalid", "wrong_plane", "expired"};
  // Count each (plane, reason) a different number of times, so a mix-up shows.
  int times = 1;
  for (const std::string& plane : planes) {
    for (const std::string& reason : reasons) {
      for (int i = 0; i < times; ++i) metrics.CountAuthFailure(plane, reason);
      ++times;
    }
  }
  metrics.CountAuthLimited("admin");
  metrics.CountAuthLimited("admin");
  metrics.CountAuthLimited("data");
  int expected = 1;
  for (const std::string& plane : planes) {
    for (const std::string& reason : reasons) {
      EXPECT_EQ(
          Value(metrics, "sealbox_auth_failures_total", {{"plane", plane}, {"reason", reason}}),
          expected++)
          << plane << " " << reason;
    }
  }
  EXPECT_EQ(Value(metrics, "sealbox_auth_limited_total", {{"plane", "data"}}), 1);
  EXPECT_EQ(Value(metrics, "sealbox_auth_limited_total", {{"plane", "admin"}}), 2);
}

TEST(Metrics, ActiveStreamsGoesUpAndDown) {
  Metrics metrics;
  metrics.StreamStarted();
  metrics.StreamStarted();
  metrics.StreamStarted();
  metrics.StreamEnded();
  EXPECT_EQ(Value(metrics, "sealbox_active_streams"), 2);
  metrics.StreamEnded();
  metrics.StreamEnded();
  EXPECT_EQ(Value(metrics, "sealbox_active_streams"), 0);
}

TEST(Metrics, KeyFailuresPastTheLimitShareOneOtherSeries) {
  Metrics metrics;
  for (size_t i = 0; i < Metrics::kMaxKeySeries; ++i) {
    metrics.CountKeyDecryptionFailure("acme", "key" + std::to_string(i));
  }
  metrics.CountKeyDecryptionFailure("acme", "late1");
  metrics.CountKeyDecryptionFailure("globex", "late2");
  metrics.CountKeyDecryptionFailure("acme", "key0");  // known before the limit: its own series
  const std::vector<MetricFamily> families = Scrape(metrics);
  const MetricFamily* family = FindFamily(families, "sealbox_key_decryption_failures_total");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->metric.size(), Metrics::kMaxKeySeries + 1);
  EXPECT_EQ(Value(metrics, "sealbox_key_decryption_failures_total",
                  {{"tenant", "acme"}, {"key", "key0"}}),
            2);
  EXPECT_EQ(Value(metrics, "sealbox_key_decryption_failures_total",
                  {{"tenant", "acme"}, {"key", "key999"}}),
            1);
  EXPECT_EQ(Value(metrics, "sealbox_key_decryption_failures_total",
                  {{"tenant", "_other"}, {"key", "_other"}}),
            2);
  EXPECT_TRUE(std::isnan(Value(metrics, "sealbox_key_decryption_failures_total",
                               {{"tenant", "acme"}, {"key", "late1"}})));
}

TEST(Metrics, ConcurrentCallsLoseNoCount) {
  Metrics metrics;
  constexpr int kThreads = 4;
  constexpr int kCalls = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    // All start on a method and codes never seen, so they race to create the series.
    threads.emplace_back([&metrics] {
      for (int i = 0; i < kCalls; ++i) {
        metrics.RecordRpc("Rewrap", i % 2 ? absl::StatusCode::kOk : absl::StatusCode::kNotFound,
                          absl::Microseconds(50));
        metrics.CountKeyDecryptionFailure("acme", "shared");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(Value(metrics, "sealbox_rpcs_total", {{"method", "Rewrap"}, {"code", "OK"}}),
            kThreads * kCalls / 2);
  EXPECT_EQ(Value(metrics, "sealbox_rpcs_total", {{"method", "Rewrap"}, {"code", "NOT_FOUND"}}),
            kThreads * kCalls / 2);
  EXPECT_EQ(Latency(metrics, "Rewrap").sample_count, uint64_t{kThreads * kCalls});
  EXPECT_EQ(Value(metrics, "sealbox_key_decryption_failures_total",
                  {{"tenant", "acme"}, {"key", "shared"}}),
            kThreads * kCalls);
}

TEST(Metrics, SecretMemoryIsReadAtEachScrape) {
  Metrics metrics;
  auto held = [&metrics] {
    return Value(metrics, "sealbox_secret_memory_bytes", {{"locked", "true"}}) +
           Value(metrics, "sealbox_secret_memory_bytes", {{"locked", "false"}});
  };
  // Past 4 KiB a block gets pages of its own, so the total grows by at least its size.
  constexpr size_t kBig = 64 * 1024;
  const double before = held();
  void* secret = crypto::AllocateSecret(kBig);
  const double during = held();
  const crypto::SecretMemoryStats stats = crypto::LockedMemoryStats();
  crypto::FreeSecret(secret, kBig);
  EXPECT_GE(during - before, kBig);
  EXPECT_EQ(during, static_cast<double>(stats.locked_bytes + stats.unlocked_bytes));
  EXPECT_EQ(held(), before);  // its pages are unmapped when freed
}

// ---------------------------------------------------------------------------------
// The text format.

TEST(Metrics, RenderWritesLabelsInSealboxOrder) {
  Metrics metrics;
  metrics.RecordRpc("Seal", absl::StatusCode::kOk, absl::Milliseconds(1));
  metrics.CountKeyDecryptionFailure("acme", "orders");
  const std::string text = metrics.Render();
  // prometheus-cpp would sort them by name (code before method, key before tenant).
  EXPECT_NE(text.find("sealbox_rpcs_total{method=\"Seal\",code=\"OK\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("sealbox_key_decryption_failures_total{tenant=\"acme\",key=\"orders\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sealbox_rpc_duration_seconds_bucket{method=\"Seal\",le=\"+Inf\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(Metrics, RenderHasHelpTypeAndValueOfEachFamily) {
  Metrics metrics;
  metrics.AddBytesSealed(42);
  const std::string text = metrics.Render();
  EXPECT_NE(text.find("# HELP sealbox_plaintext_bytes_sealed_total Plaintext bytes sealed.\n"
                      "# TYPE sealbox_plaintext_bytes_sealed_total counter\n"
                      "sealbox_plaintext_bytes_sealed_total 42\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE sealbox_active_streams gauge\n"), std::string::npos) << text;
  // The sealbox_* series come first, then process_*.
  const size_t sealbox = text.find("# HELP sealbox_");
  const size_t process = text.find("# HELP process_");
  ASSERT_NE(sealbox, std::string::npos);
  ASSERT_NE(process, std::string::npos);
  EXPECT_LT(sealbox, process);
  EXPECT_EQ(text.find("# HELP sealbox_", process), std::string::npos);
}

}  // namespace
}  // namespace sealbox::server
