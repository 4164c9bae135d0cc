#include "server/metrics/keystore_metrics.h"

#include <atomic>
#include <cmath>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/metrics/collected_value.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;

TEST(KeystoreMetrics, NoSeriesUntilAReaderIsSet) {
  KeystoreMetrics metrics;
  EXPECT_TRUE(metrics.Collect().empty());
}

TEST(KeystoreMetrics, ReflectTheHealthTheReaderGives) {
  KeystoreHealth health;
  health.loaded = true;
  health.reachable = true;
  health.staleness = absl::Milliseconds(250);
  health.max_staleness = absl::Seconds(30);
  health.fresh = true;
  health.stale_refusals = 4;
  health.revision = 123456789;
  health.reloads = 2;
  health.catch_ups = 7;
  health.catch_up_seconds = 1.5;
  KeystoreMetrics metrics;
  metrics.SetReader([&health] { return health; });

  const std::vector<MetricFamily> families = metrics.Collect();
  EXPECT_EQ(families.size(), 9u);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_loaded", MetricType::Gauge), 1);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_reachable", MetricType::Gauge), 1);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_staleness_seconds", MetricType::Gauge),
            0.25);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_max_staleness_seconds", MetricType::Gauge),
            30);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_revision", MetricType::Gauge), 123456789);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_reloads_total", MetricType::Counter), 2);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_catch_ups_total", MetricType::Counter), 7);
  EXPECT_EQ(
      CollectedValue(families, "sealbox_keystore_catch_up_seconds_total", MetricType::Counter),
      1.5);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_stale_refusals_total", MetricType::Counter),
            4);

  // Read again at the next scrape: the store went away.
  health.reachable = false;
  health.staleness = absl::Seconds(12);
  health.stale_refusals = 5;
  const std::vector<MetricFamily> later = metrics.Collect();
  EXPECT_EQ(CollectedValue(later, "sealbox_keystore_loaded", MetricType::Gauge), 1);
  EXPECT_EQ(CollectedValue(later, "sealbox_keystore_reachable", MetricType::Gauge), 0);
  EXPECT_EQ(CollectedValue(later, "sealbox_keystore_staleness_seconds", MetricType::Gauge), 12);
  EXPECT_EQ(CollectedValue(later, "sealbox_keystore_stale_refusals_total", MetricType::Counter), 5);
}

TEST(KeystoreMetrics, BeforeLoadingStalenessIsInfinite) {
  KeystoreMetrics metrics;
  metrics.SetReader([] { return KeystoreHealth{}; });
  const std::vector<MetricFamily> families = metrics.Collect();
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_loaded", MetricType::Gauge), 0);
  EXPECT_EQ(CollectedValue(families, "sealbox_keystore_reachable", MetricType::Gauge), 0);
  const double staleness =
      CollectedValue(families, "sealbox_keystore_staleness_seconds", MetricType::Gauge);
  EXPECT_TRUE(std::isinf(staleness) && staleness > 0) << staleness;
  const double max_staleness =
      CollectedValue(families, "sealbox_keystore_max_staleness_seconds", MetricType::Gauge);
  EXPECT_TRUE(std::isinf(max_staleness) && max_staleness > 0) << max_staleness;
}

TEST(KeystoreMetrics, MetricsRendersTheKeystoreItIsGiven) {
  Metrics metrics;
  EXPECT_EQ(metrics.Render().find("sealbox_keystore_"), std::string::npos);
  KeystoreHealth health;
  health.loaded = true;
  health.revision = 42;
  metrics.ReadKeystoreWith([&health] { return health; });
  const std::string text = metrics.Render();
  EXPECT_NE(text.find("\nsealbox_keystore_loaded 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsealbox_keystore_revision 42\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nsealbox_keystore_staleness_seconds +Inf\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE sealbox_keystore_reloads_total counter\n"), std::string::npos)
      << text;
}

TEST(KeystoreMetrics, ClearingTheReaderRemovesTheSeries) {
  KeystoreMetrics metrics;
  int reads = 0;
  metrics.SetReader([&reads] {
    ++reads;
    return KeystoreHealth{};
  });
  EXPECT_FALSE(metrics.Collect().empty());
  metrics.SetReader(nullptr);
  EXPECT_TRUE(metrics.Collect().empty());
  EXPECT_EQ(reads, 1);
}

// The server clears the reader before the keystore goes away; a scrape that is
// reading must finish first, or it would read a destroyed keystore.
TEST(KeystoreMetrics, ClearingTheReaderWaitsForAScrapeThatIsReading) {
  KeystoreMetrics metrics;
  absl::Notification reading;
  absl::Notification release;
  metrics.SetReader([&] {
    reading.Notify();
    release.WaitForNotification();
    return KeystoreHealth{};
  });
  std::thread scrape([&metrics] { EXPECT_EQ(metrics.Collect().size(), 9u); });
  reading.WaitForNotification();
  std::atomic<bool> cleared{false};
  std::thread clear([&] {
    metrics.SetReader(nullptr);
    cleared = true;
  });
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_FALSE(cleared) << "SetReader(nullptr) returned while the reader was running";
  release.Notify();
  clear.join();
  scrape.join();
  EXPECT_TRUE(cleared);
  EXPECT_TRUE(metrics.Collect().empty());
}

}  // namespace
}  // namespace sealbox::server
