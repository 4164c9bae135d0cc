#include "server/metrics/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "crypto/aes_gcm.h"
#include "crypto/kernel/locked_memory.h"

namespace sealbox::server {

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(static_cast<uint64_t>(seconds * 1e9), std::memory_order_relaxed);
}

void Histogram::Render(absl::string_view name, absl::string_view labels,
                       std::string& out) const {
  uint64_t cumulative = 0;
  const std::string sep = labels.empty() ? "" : ",";
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    absl::StrAppendFormat(&out, "%s_bucket{%s%sle=\"%g\"} %u\n", name, labels, sep,
                          kBounds[i], cumulative);
  }
  cumulative += buckets_[kBounds.size()].load(std::memory_order_relaxed);
  absl::StrAppendFormat(&out, "%s_bucket{%s%sle=\"+Inf\"} %u\n", name, labels, sep,
                        cumulative);
  absl::StrAppendFormat(&out, "%s_sum{%s} %.9f\n", name, labels,
                        sum_nanos_.load(std::memory_order_relaxed) / 1e9);
  absl::StrAppendFormat(&out, "%s_count{%s} %u\n", name, labels,
                        count_.load(std::memory_order_relaxed));
}

namespace {

constexpr absl::string_view kPlaneNames[] = {"data", "admin"};
constexpr absl::string_view kReasonNames[] = {"missing", "invalid", "wrong_plane"};

int PlaneIndex(absl::string_view plane) { return plane == "admin" ? 1 : 0; }

}  // namespace

void Metrics::CountAuthFailure(absl::string_view plane, absl::string_view reason) {
  int r = 1;
  for (int i = 0; i < kReasons; ++i) {
    if (kReasonNames[i] == reason) r = i;
  }
  auth_failures_[PlaneIndex(plane) * kReasons + r].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::CountAuthLimited(absl::string_view plane) {
  auth_limited_[PlaneIndex(plane)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::CountKeyDecryptionFailure(absl::string_view tenant, absl::string_view key) {
  std::pair<std::string, std::string> series(tenant, key);
  absl::MutexLock lock(&key_failures_mutex_);
  if (key_failures_.count(series) == 0 && key_failures_.size() >= kMaxKeySeries) {
    series = {"_other", "_other"};
  }
  ++key_failures_[series];
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
    it = methods_.emplace(std::string(method), std::make_unique<PerMethod>()).first;
  }
  return *it->second;
}

void Metrics::RecordRpc(absl::string_view method, absl::StatusCode code,
                        absl::Duration took) {
  PerMethod& per_method = ForMethod(method);
  per_method.latency.Observe(absl::ToDoubleSeconds(took));
  const size_t index = static_cast<size_t>(code);
  if (index < per_method.by_code.size()) {
    per_method.by_code[index].fetch_add(1, std::memory_order_relaxed);
  }
}

void Metrics::RecordOutcome(absl::string_view method, const absl::Status& status,
                            absl::Time started) {
  if (crypto::IsDecryptionFailure(status)) CountDecryptionFailure();
  RecordRpc(method, status.code(), absl::Now() - started);
}

std::string Metrics::Render() const {
  std::string out;
  out += "# HELP sealbox_rpcs_total Finished RPCs by method and status code.\n";
  out += "# TYPE sealbox_rpcs_total counter\n";
  absl::ReaderMutexLock lock(&mutex_);
  for (const auto& [method, per_method] : methods_) {
    for (size_t code = 0; code < per_method->by_code.size(); ++code) {
      const uint64_t count = per_method->by_code[code].load(std::memory_order_relaxed);
      if (count == 0) continue;
      absl::StrAppendFormat(
          &out, "sealbox_rpcs_total{method=\"%s\",code=\"%s\"} %u\n", method,
          absl::StatusCodeToString(static_cast<absl::StatusCode>(code)), count);
    }
  }
  out += "# HELP sealbox_rpc_duration_seconds RPC latency by method.\n";
  out += "# TYPE sealbox_rpc_duration_seconds histogram\n";
  for (const auto& [method, per_method] : methods_) {
    per_method->latency.Render("sealbox_rpc_duration_seconds",
                               absl::StrCat("method=\"", method, "\""), out);
  }
  auto counter = [&out](const char* name, const char* help, uint64_t value) {
    absl::StrAppendFormat(&out, "# HELP %s %s\n# TYPE %s counter\n%s %u\n", name, help,
                          name, name, value);
  };
  counter("sealbox_plaintext_bytes_sealed_total", "Plaintext bytes sealed.",
          bytes_sealed_.load());
  counter("sealbox_plaintext_bytes_opened_total", "Plaintext bytes opened.",
          bytes_opened_.load());
  out += "# HELP sealbox_auth_failures_total Calls refused for their credentials, by "
         "plane and reason (missing, invalid, wrong_plane).\n"
         "# TYPE sealbox_auth_failures_total counter\n";
  for (int p = 0; p < kPlanes; ++p) {
    for (int r = 0; r < kReasons; ++r) {
      absl::StrAppendFormat(&out, "sealbox_auth_failures_total{plane=\"%s\",reason=\"%s\"} %u\n",
                            kPlaneNames[p], kReasonNames[r],
                            auth_failures_[p * kReasons + r].load());
    }
  }
  out += "# HELP sealbox_auth_limited_total Calls refused unchecked because their "
         "address failed authentication too often (--auth-failures-per-minute).\n"
         "# TYPE sealbox_auth_limited_total counter\n";
  for (int p = 0; p < kPlanes; ++p) {
    absl::StrAppendFormat(&out, "sealbox_auth_limited_total{plane=\"%s\"} %u\n",
                          kPlaneNames[p], auth_limited_[p].load());
  }
  counter("sealbox_decryption_failures_total",
          "Ciphertexts that failed authentication (SP 800-38D Appendix B: watch it).",
          decryption_failures_.load());
  out += "# HELP sealbox_key_decryption_failures_total Failed opens by tenant and key "
         "(keys that failed at least once; past 1000 keys, tenant=\"_other\").\n"
         "# TYPE sealbox_key_decryption_failures_total counter\n";
  {
    absl::MutexLock key_lock(&key_failures_mutex_);
    for (const auto& [series, count] : key_failures_) {
      absl::StrAppendFormat(
          &out, "sealbox_key_decryption_failures_total{tenant=\"%s\",key=\"%s\"} %u\n",
          series.first, series.second, count);
    }
  }
  counter("sealbox_decryption_refused_total",
          "Opens refused because their key reached --max-decryption-failures-per-key.",
          decryption_refused_.load());
  counter("sealbox_stream_idle_timeouts_total",
          "Streams ended for receiving nothing for --stream-idle-seconds.",
          stream_idle_timeouts_.load());
  const crypto::SecretMemoryStats secret_memory = crypto::LockedMemoryStats();
  absl::StrAppendFormat(
      &out,
      "# HELP sealbox_secret_memory_bytes Memory holding key material, by whether it "
      "is locked in RAM (mlock).\n# TYPE sealbox_secret_memory_bytes gauge\n"
      "sealbox_secret_memory_bytes{locked=\"true\"} %u\n"
      "sealbox_secret_memory_bytes{locked=\"false\"} %u\n",
      secret_memory.locked_bytes, secret_memory.unlocked_bytes);
  absl::StrAppendFormat(&out,
                        "# HELP sealbox_active_streams Streaming calls in progress.\n"
                        "# TYPE sealbox_active_streams gauge\nsealbox_active_streams %d\n",
                        active_streams_.load());
  return out;
}

}  // namespace sealbox::server
