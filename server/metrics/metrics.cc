#include "server/metrics/metrics.h"

#include <sstream>

#include "crypto/aes_gcm.h"
#include "crypto/secret/locked_memory.h"
#include "prometheus/text_serializer.h"
#include "server/metrics/label_order.h"
#include "server/metrics/process_metrics.h"

namespace sealbox::server {
namespace {

constexpr absl::string_view kPlaneNames[] = {"data", "admin"};
constexpr absl::string_view kReasonNames[] = {"missing", "invalid", "wrong_plane", "expired"};

int PlaneIndex(absl::string_view plane) { return plane == "admin" ? 1 : 0; }

prometheus::Family<prometheus::Counter>& CounterFamily(prometheus::Registry& registry,
                                                       const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

}  // namespace

// The registry's series as sealbox writes them: the secret-memory gauge read at
// scrape time, labels in sealbox's order (label_order.h).
class Metrics::SealboxSeries : public prometheus::Collectable {
 public:
  explicit SealboxSeries(const Metrics* metrics) : metrics_(metrics) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    const crypto::SecretMemoryStats secret_memory = crypto::LockedMemoryStats();
    metrics_->secret_memory_[0]->Set(static_cast<double>(secret_memory.locked_bytes));
    metrics_->secret_memory_[1]->Set(static_cast<double>(secret_memory.unlocked_bytes));
    std::vector<prometheus::MetricFamily> families = metrics_->registry_->Collect();
    OrderLabels(families, "sealbox_rpcs_total", {"method", "code"});
    OrderLabels(families, "sealbox_key_decryption_failures_total", {"tenant", "key"});
    return families;
  }

 private:
  const Metrics* metrics_;
};

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  rpcs_ = &CounterFamily(r, "sealbox_rpcs_total", "Finished RPCs by method and status code.");
  rpc_duration_ = &prometheus::BuildHistogram()
                       .Name("sealbox_rpc_duration_seconds")
                       .Help("RPC latency by method.")
                       .Register(r);
  bytes_sealed_ =
      &CounterFamily(r, "sealbox_plaintext_bytes_sealed_total", "Plaintext bytes sealed.").Add({});
  bytes_opened_ =
      &CounterFamily(r, "sealbox_plaintext_bytes_opened_total", "Plaintext bytes opened.").Add({});
  auto& auth_failures =
      CounterFamily(r, "sealbox_auth_failures_total",
                    "Calls refused for their credentials, by plane and reason (missing, invalid, "
                    "wrong_plane, expired).");
  auto& auth_limited =
      CounterFamily(r, "sealbox_auth_limited_total",
                    "Calls refused unchecked because their address failed authentication too often "
                    "(--auth-failures-per-minute).");
  // Every plane and reason is shown from the start, at 0: alerts need the series.
  for (int p = 0; p < kPlanes; ++p) {
    const std::string plane(kPlaneNames[p]);
    for (int reason = 0; reason < kReasons; ++reason) {
      auth_failures_[p * kReasons + reason] =
          &auth_failures.Add({{"plane", plane}, {"reason", std::string(kReasonNames[reason])}});
    }
    auth_limited_[p] = &auth_limited.Add({{"plane", plane}});
  }
  decryption_failures_ =
      &CounterFamily(r, "sealbox_decryption_failures_total",
                     "Ciphertexts that failed authentication (SP 800-38D Appendix B: watch it).")
           .Add({});
  key_failures_ = &CounterFamily(
      r, "sealbox_key_decryption_failures_total",
      "Failed opens by tenant and key (keys that failed at least once; past 1000 keys, "
      "tenant=\"_other\").");
  decryption_refused_ =
      &CounterFamily(r, "sealbox_decryption_refused_total",
                     "Opens refused because their key reached --max-decryption-failures-per-key.")
           .Add({});
  stream_idle_timeouts_ =
      &CounterFamily(r, "sealbox_stream_idle_timeouts_total",
                     "Streams ended for receiving nothing for --stream-idle-seconds.")
           .Add({});
  audit_written_ =
      &CounterFamily(r, "sealbox_audit_lines_written_total", "Audit lines written (--audit).")
           .Add({});
  auto& audit_dropped =
      CounterFamily(r, "sealbox_audit_lines_dropped_total",
                    "Audit lines lost rather than let requests wait, by reason: queue_full (the "
                    "writer fell behind) or write_failed (a full disk, say).");
  audit_dropped_ = {&audit_dropped.Add({{"reason", "queue_full"}}),
                    &audit_dropped.Add({{"reason", "write_failed"}})};
  auto& secret_memory =
      prometheus::BuildGauge()
          .Name("sealbox_secret_memory_bytes")
          .Help("Memory holding key material, by whether it is locked in RAM (mlock).")
          .Register(r);
  secret_memory_ = {&secret_memory.Add({{"locked", "true"}}),
                    &secret_memory.Add({{"locked", "false"}})};
  active_streams_ = &prometheus::BuildGauge()
                         .Name("sealbox_active_streams")
                         .Help("Streaming calls in progress.")
                         .Register(r)
                         .Add({});
  root_key_up_ = &prometheus::BuildGauge()
                      .Name("sealbox_root_key_up")
                      .Help(
                          "1 while the HSM key that seals the KEK can be used, 0 while not "
                          "(the server keeps serving from the KEK in memory).")
                      .Register(r);
  custody_events_ = &CounterFamily(
      r, "sealbox_custody_events_total",
      "Custody events by name: kek_unsealed, kek_created, root_key_created, root_key_lost, "
      "root_key_back, kek_rotation_started, kek_rotation_finished, kek_rotation_failed, "
      "import_parameters_issued, key_imported_wrapped, wrapped_import_refused, key_exported, "
      "export_refused.");
  sealbox_series_ = std::make_shared<SealboxSeries>(this);
  keystore_series_ = std::make_shared<KeystoreMetrics>();
  process_series_ = std::make_shared<ProcessMetrics>();
}

Metrics::~Metrics() = default;

void Metrics::SetRootKeyUp(bool up) { root_key_up_->Add({}).Set(up ? 1 : 0); }

void Metrics::CountCustodyEvent(absl::string_view event) {
  custody_events_->Add({{"event", std::string(event)}}).Increment();
}

void Metrics::CountAuditLinesDropped(absl::string_view reason, uint64_t n) {
  audit_dropped_[reason == "queue_full" ? 0 : 1]->Increment(static_cast<double>(n));
}

void Metrics::CountAuthFailure(absl::string_view plane, absl::string_view reason) {
  int r = 1;
  for (int i = 0; i < kReasons; ++i) {
    if (kReasonNames[i] == reason) r = i;
  }
  auth_failures_[PlaneIndex(plane) * kReasons + r]->Increment();
}

void Metrics::CountAuthLimited(absl::string_view plane) {
  auth_limited_[PlaneIndex(plane)]->Increment();
}

void Metrics::CountKeyDecryptionFailure(absl::string_view tenant, absl::string_view key) {
  std::pair<std::string, std::string> series(tenant, key);
  absl::MutexLock lock(&key_failures_mutex_);
  auto it = key_series_.find(series);
  if (it == key_series_.end()) {
    if (key_series_.size() >= kMaxKeySeries) series = {"_other", "_other"};
    // Family::Add returns the existing counter for labels it already holds.
    prometheus::Counter& counter =
        key_failures_->Add({{"tenant", series.first}, {"key", series.second}});
    it = key_series_.emplace(std::move(series), &counter).first;
  }
  it->second->Increment();
}

Metrics::PerMethod& Metrics::ForMethod(absl::string_view method) {
  {
    // Every call after a method's first finds it under the shared lock.
    absl::ReaderMutexLock lock(&mutex_);
    auto it = methods_.find(method);
    if (it != methods_.end()) return *it->second;
  }
  absl::MutexLock lock(&mutex_);
  auto it = methods_.find(method);
  if (it == methods_.end()) {
    auto per_method = std::make_unique<PerMethod>();
    per_method->latency = &rpc_duration_->Add(
        {{"method", std::string(method)}},
        prometheus::Histogram::BucketBoundaries(kLatencyBounds.begin(), kLatencyBounds.end()));
    it = methods_.emplace(std::string(method), std::move(per_method)).first;
  }
  return *it->second;
}

void Metrics::RecordRpc(absl::string_view method, absl::StatusCode code, absl::Duration took) {
  PerMethod& per_method = ForMethod(method);
  per_method.latency->Observe(absl::ToDoubleSeconds(took));
  const size_t index = static_cast<size_t>(code);
  if (index >= per_method.by_code.size()) return;
  prometheus::Counter* counter = per_method.by_code[index].load(std::memory_order_acquire);
  if (counter == nullptr) {
    // First call of this method with this code. Racing callers get the same
    // counter: Family::Add returns the one it already holds for these labels.
    counter =
        &rpcs_->Add({{"method", std::string(method)}, {"code", absl::StatusCodeToString(code)}});
    per_method.by_code[index].store(counter, std::memory_order_release);
  }
  counter->Increment();
}

void Metrics::RecordOutcome(absl::string_view method, const absl::Status& status,
                            absl::Time started) {
  if (crypto::IsDecryptionFailure(status)) CountDecryptionFailure();
  RecordRpc(method, status.code(), absl::Now() - started);
}

std::vector<std::shared_ptr<prometheus::Collectable>> Metrics::collectables() const {
  return {sealbox_series_, keystore_series_, process_series_};
}

std::string Metrics::Render() const {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& collectable : collectables()) {
    std::vector<prometheus::MetricFamily> some = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(some.begin()),
                    std::make_move_iterator(some.end()));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace sealbox::server
