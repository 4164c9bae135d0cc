// EtcdRecords: opening (prepare, rewrap), loading, transactions and import.
#include "server/keystore/etcd/etcd_records.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/keystore/etcd/record_envelope.h"
#include "server/keystore/kek.h"
#include "server/log.h"

namespace sealbox::server::etcd {
namespace {

using etcdserverpb::Compare;
using etcdserverpb::TxnRequest;

// etcd takes at most 128 operations per Txn (--max-txn-ops) and 1.5 MiB per request
// (--max-request-bytes); bulk writes (import, rewrap) stay well inside both.
constexpr int kBatchOps = 60;
constexpr size_t kBatchBytes = 512 << 10;
// A value etcd would refuse: far more versions than any key should keep.
constexpr size_t kMaxValueBytes = 1 << 20;
// A Txn that failed in flight is sent again this many times before giving up.
constexpr int kTxnAttempts = 5;

void CompareModRevision(TxnRequest& txn, const std::string& key, int64_t revision) {
  Compare* compare = txn.add_compare();
  compare->set_key(key);
  compare->set_target(etcdserverpb::Compare_CompareTarget_MOD);
  compare->set_result(etcdserverpb::Compare_CompareResult_EQUAL);
  compare->set_mod_revision(revision);
}

void Put(TxnRequest& txn, const std::string& key, const std::string& value) {
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
}

void DeleteRange(TxnRequest& txn, const std::string& key, const std::string& end = "") {
  etcdserverpb::DeleteRangeRequest* del = txn.add_success()->mutable_request_delete_range();
  del->set_key(key);
  if (!end.empty()) del->set_range_end(end);
}

}  // namespace

// Reads by Range, remembering each record's mod_revision (0: absent); commits one Txn
// conditioned on all of them.
class EtcdRecords::Transaction : public StorageTransaction {
 public:
  explicit Transaction(EtcdRecords* records) : records_(records) {}

  absl::StatusOr<std::optional<internal::Record>> Read(const RecordName& name) override {
    const std::string key = records_->layout_.KeyOf(name);
    auto kv = records_->Get(key);
    if (!kv.ok()) return kv.status();
    if (!kv->has_value()) {
      read_[key] = 0;
      return std::nullopt;
    }
    auto record = records_->Decode(**kv, name);
    if (!record.ok()) return record.status();
    read_[key] = (*kv)->mod_revision();
    return *std::move(record);
  }

  absl::StatusOr<uint64_t> Commit(std::vector<RecordChange> changes) override {
    TxnRequest txn;
    for (const auto& [key, revision] : read_) CompareModRevision(txn, key, revision);
    const std::shared_ptr<const KekRing> keks = records_->keks_.ring();
    std::optional<Written> written;
    const Layout& layout = records_->layout_;
    for (const RecordChange& change : changes) {
      const std::string key = layout.KeyOf(change.name);
      if (change.value.has_value()) {
        auto value = records_->Seal(key, *change.value, keks->current);
        if (!value.ok()) return value.status();
        Put(txn, key, *value);
        if (!written.has_value() || !written->value.has_value()) written = {key, *value};
        if (change.name.kind == RecordName::Kind::kTenant) {
          // A tenant is put only when it is created: clear whatever a hand edit of
          // etcd may have left under its name.
          const std::string children = layout.ChildrenOf(change.name.tenant);
          DeleteRange(txn, children, PrefixEnd(children));
        }
      } else {
        DeleteRange(txn, key);
        if (change.name.kind == RecordName::Kind::kTenant) {
          const std::string children = layout.ChildrenOf(change.name.tenant);
          DeleteRange(txn, children, PrefixEnd(children));
        }
        if (!written.has_value()) written = Written{key, std::nullopt};
      }
    }
    return records_->Commit(txn, written, *keks);
  }

 private:
  EtcdRecords* records_;
  std::map<std::string, int64_t> read_;
};

EtcdRecords::EtcdRecords(EtcdClient& client, std::string prefix,
                         std::shared_ptr<const KekRing> keks, KekSource* kek_source, int page_size)
    : client_(client),
      layout_(std::move(prefix)),
      page_size_(std::max(page_size, 1)),
      keks_(std::move(keks), kek_source) {}

std::string EtcdRecords::Describe() const {
  return absl::StrCat("etcd keystore ", layout_.prefix(), " at ", client_.Endpoints());
}

absl::Status EtcdRecords::NoKeystore() const {
  return absl::NotFoundError(
      absl::StrCat("there is no ", Describe(), " (start one server with --init to create it)"));
}

absl::Status EtcdRecords::DifferentKek() const {
  return absl::FailedPreconditionError(
      absl::StrCat(Describe(), " was written with a different KEK"));
}

KekRef EtcdRecords::KekFor(absl::string_view value) {
  return keks_.For([value](const Kek& kek) { return RecordWrittenWithKek(kek, value); });
}

absl::StatusOr<std::string> EtcdRecords::Seal(const std::string& key,
                                              const internal::Record& record,
                                              const Kek& kek) const {
  auto value = SealRecord(kek, key, record);
  if (value.ok() && value->size() > kMaxValueBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "etcd record ", key, " would be ", value->size(), " bytes, more than etcd takes (",
        kMaxValueBytes, "); a key this large has too many versions"));
  }
  return value;
}

absl::StatusOr<internal::Record> EtcdRecords::Decode(const mvccpb::KeyValue& kv,
                                                     const std::optional<RecordName>& name) {
  const KekRef kek = KekFor(kv.value());
  // None known: opening with the current one says "a different KEK", or damage.
  auto record = OpenRecord(kek != nullptr ? *kek : *keks_.Current(), kv.key(), kv.value());
  if (!record.ok()) return record.status();
  // The AAD already binds the value to its etcd key; this checks that what it holds
  // is the record that key names.
  const bool right = name.has_value()
                         ? NameOf(name->tenant, *record).value_or(RecordName()) == *name
                         : record->has_keystore();
  if (!right) {
    WipeRecord(*record);
    return absl::DataLossError(absl::StrCat("etcd record ", kv.key(),
                                            " is damaged, or was moved there from another name"));
  }
  return record;
}

absl::StatusOr<std::optional<mvccpb::KeyValue>> EtcdRecords::Get(const std::string& key,
                                                                 int64_t* revision) {
  etcdserverpb::RangeRequest request;
  request.set_key(key);
  auto response = client_.Range(request);
  if (!response.ok()) return response.status();
  if (revision != nullptr) *revision = response->header().revision();
  if (response->kvs_size() == 0) return std::nullopt;
  return response->kvs(0);
}

// The sealed KEK (written before the keystore, by --init with an HSM) does not count.
absl::StatusOr<int64_t> EtcdRecords::Count() {
  etcdserverpb::RangeRequest request;
  request.set_key(layout_.prefix());
  request.set_range_end(layout_.prefix_end());
  request.set_count_only(true);
  auto response = client_.Range(request);
  if (!response.ok()) return response.status();
  auto sealed_kek = Get(layout_.SealedKek());
  if (!sealed_kek.ok()) return sealed_kek.status();
  return response->count() - (sealed_kek->has_value() ? 1 : 0);
}

absl::StatusOr<bool> EtcdRecords::Prepare(bool create) {
  auto marker = Get(layout_.Marker());
  if (!marker.ok()) return marker.status();
  if (!marker->has_value()) {
    if (!create) return NoKeystore();
    auto count = Count();
    if (!count.ok()) return count.status();
    if (*count > 0) {
      // Another replica's --init may have written its marker since we looked.
      marker = Get(layout_.Marker());
      if (!marker.ok()) return marker.status();
      if (!marker->has_value()) {
        return absl::FailedPreconditionError(
            absl::StrCat("etcd prefix ", layout_.prefix(), " holds ", *count,
                         " keys but no sealbox keystore; refusing to create one there (choose "
                         "another --etcd-prefix, or delete them)"));
      }
    }
  }
  if (!marker->has_value()) {
    internal::Record info;
    info.mutable_keystore()->set_layout_version(1);
    info.mutable_keystore()->set_create_time_unix(absl::ToUnixSeconds(absl::Now()));
    const std::shared_ptr<const KekRing> keks = keks_.ring();
    auto value = Seal(layout_.Marker(), info, keks->current);
    if (!value.ok()) return value.status();
    TxnRequest txn;
    CompareModRevision(txn, layout_.Marker(), 0);
    Put(txn, layout_.Marker(), *value);
    // Lost to another replica's --init: its keystore is as good as ours.
    auto created = Commit(txn, Written{layout_.Marker(), *value}, *keks);
    if (!created.ok() && !absl::IsAborted(created.status())) return created.status();
    if (created.ok()) {
      Log("keystore_created").Add("store", Describe());
    }
    marker = Get(layout_.Marker());
    if (!marker.ok()) return marker.status();
    if (!marker->has_value()) return NoKeystore();
  }
  if (KekFor((*marker)->value()) == nullptr) return DifferentKek();
  if (keks_.ring()->previous.empty()) return false;
  auto rewrapped = RewrapAll(RewrapPace());
  if (!rewrapped.ok()) return rewrapped.status();
  return *rewrapped > 0;
}

// Each pass reads every record and writes again those not under the current KEK,
// each conditioned on being unchanged since read; one that changed meanwhile (or a
// batch that found the KEK changed) is picked up by the next pass.
absl::StatusOr<uint64_t> EtcdRecords::RewrapAll(const RewrapPace& pace) {
  uint64_t rewrapped = 0, written = 0;
  const absl::Time began = absl::Now();
  for (int pass = 0; pass < kTxnAttempts; ++pass) {
    const std::shared_ptr<const KekRing> keks = keks_.ring();
    bool lost_a_race = false;
    TxnRequest batch;
    size_t batch_bytes = 0;
    int batch_records = 0;
    auto flush = [&]() -> absl::Status {
      if (batch.success_size() == 0) return absl::OkStatus();
      auto committed = Commit(batch, std::nullopt, *keks);
      batch.Clear();
      batch_bytes = 0;
      if (absl::IsAborted(committed.status())) {
        lost_a_race = true;
        batch_records = 0;
        return absl::OkStatus();
      }
      if (committed.ok()) {
        rewrapped += batch_records;
        if (pace.progress) pace.progress(rewrapped);
      }
      written += batch_records;
      batch_records = 0;
      // Keep to the pace asked for (etcd serves the other replicas meanwhile), in
      // slices short enough to stop soon when asked.
      const absl::Time due = pace.records_per_second > 0
                                 ? began + absl::Seconds(written / pace.records_per_second)
                                 : absl::InfinitePast();
      do {
        if (pace.cancelled && pace.cancelled()) return absl::CancelledError("rewrap stopped");
      } while (absl::Now() < due && !stopping_.WaitForNotificationWithTimeout(
                                        std::min(due - absl::Now(), absl::Milliseconds(100))));
      if (stopping_.HasBeenNotified()) return absl::CancelledError("stopping");
      return committed.status();
    };
    etcdserverpb::RangeRequest request;
    request.set_key(layout_.prefix());
    request.set_range_end(layout_.prefix_end());
    request.set_limit(page_size_);
    while (true) {
      auto page = client_.Range(request);
      if (!page.ok()) return page.status();
      for (const mvccpb::KeyValue& kv : page->kvs()) {
        if (RecordWrittenWithKek(keks->current, kv.value())) continue;
        const bool marker = layout_.IsMarker(kv.key());
        std::optional<RecordName> name = layout_.Parse(kv.key());
        if (!marker && !name.has_value()) continue;  // not ours
        auto record = Decode(kv, name);
        if (!record.ok()) return record.status();
        auto value = Seal(kv.key(), *record, keks->current);
        WipeRecord(*record);
        if (!value.ok()) return value.status();
        CompareModRevision(batch, kv.key(), kv.mod_revision());
        Put(batch, kv.key(), *value);
        batch_bytes += value->size();
        ++batch_records;
        if (batch.success_size() >= kBatchOps || batch_bytes >= kBatchBytes) {
          if (absl::Status s = flush(); !s.ok()) return s;
        }
      }
      if (!page->more() || page->kvs_size() == 0) break;
      request.set_key(page->kvs(page->kvs_size() - 1).key() + '\0');
    }
    if (absl::Status s = flush(); !s.ok()) return s;
    if (!lost_a_race) return rewrapped;
  }
  return absl::AbortedError(
      absl::StrCat("rewrapping the ", Describe(), " kept racing other writers; start again"));
}

absl::StatusOr<KeystoreContents> EtcdRecords::Load() {
  int64_t revision = 0;
  auto marker = Get(layout_.Marker(), &revision);
  if (!marker.ok()) return marker.status();
  if (!marker->has_value()) return NoKeystore();
  if (KekFor((*marker)->value()) == nullptr) return DifferentKek();
  if (auto info = Decode(**marker, std::nullopt); !info.ok()) return info.status();

  KeystoreContents contents;
  contents.generation = static_cast<uint64_t>(revision);
  std::map<std::string, int> tenant_index;
  int64_t orphans = 0, unknown = 0;
  const std::string tenants = layout_.prefix() + "tenants/";
  etcdserverpb::RangeRequest request;
  request.set_key(tenants);
  request.set_range_end(PrefixEnd(tenants));
  request.set_limit(page_size_);
  request.set_revision(revision);  // every page at the marker's revision
  while (true) {
    auto page = client_.Range(request);
    if (!page.ok()) return page.status();
    for (const mvccpb::KeyValue& kv : page->kvs()) {
      std::optional<RecordName> name = layout_.Parse(kv.key());
      if (!name.has_value()) {
        ++unknown;
        continue;
      }
      auto record = Decode(kv, name);
      if (!record.ok()) return record.status();
      // A tenant's record sorts before its keys and tokens ("t" < "t/...").
      if (name->kind == RecordName::Kind::kTenant) {
        tenant_index[name->tenant] = contents.file.tenants_size();
        internal::Tenant* tenant = contents.file.add_tenants();
        tenant->set_name(name->tenant);
        tenant->mutable_import_keys()->Swap(record->mutable_tenant()->mutable_import_keys());
        continue;
      }
      auto tenant = tenant_index.find(name->tenant);
      if (tenant == tenant_index.end()) {
        ++orphans;
        WipeRecord(*record);
        continue;
      }
      internal::Tenant* t = contents.file.mutable_tenants(tenant->second);
      if (record->has_key()) {
        t->add_keys()->Swap(record->mutable_key());
      } else {
        t->add_tokens()->Swap(record->mutable_token());
      }
    }
    if (!page->more() || page->kvs_size() == 0) break;
    request.set_key(page->kvs(page->kvs_size() - 1).key() + '\0');
  }
  if (orphans > 0 || unknown > 0) {
    Log("keystore_records_skipped", "warning")
        .Add("store", Describe())
        .Add("without_tenant", orphans)
        .Add("not_sealbox", unknown)
        .Add("detail", "etcd keys under the prefix that no tenant record owns");
  }
  return contents;
}

absl::StatusOr<std::unique_ptr<StorageTransaction>> EtcdRecords::Begin() {
  return std::make_unique<Transaction>(this);
}

absl::StatusOr<uint64_t> EtcdRecords::Commit(TxnRequest txn, const std::optional<Written>& written,
                                             const KekRing& keks) {
  // Only while the sealed KEK is still the one `keks` came from: a replica that has
  // not seen a KEK rotation yet must not write under the KEK it retires.
  const bool guarded = keks.sealed_revision > 0;
  if (guarded) {
    CompareModRevision(txn, layout_.SealedKek(), keks.sealed_revision);
    txn.add_failure()->mutable_request_range()->set_key(layout_.SealedKek());
  }
  bool failed_in_flight = false;
  absl::Duration backoff = absl::Milliseconds(100);
  absl::Status last;
  for (int attempt = 0; attempt < kTxnAttempts; ++attempt) {
    auto response = client_.Txn(txn);
    if (response.ok()) {
      if (response->succeeded()) return response->header().revision();
      if (guarded) {
        const auto& sealed = response->responses(response->responses_size() - 1).response_range();
        if (sealed.kvs_size() == 0 || sealed.kvs(0).mod_revision() != keks.sealed_revision) {
          if (auto fresh = keks_.Refresh(); !fresh.ok()) return fresh.status();
          return absl::AbortedError("the KEK changed (a KEK rotation) since the change began");
        }
      }
      if (!failed_in_flight || !written.has_value()) {
        return absl::AbortedError("a record changed since it was read");
      }
      // An attempt that failed in flight may have committed; then these compares
      // fail. What it wrote tells: our (random) value there means it did.
      auto now = Get(written->key);
      if (!now.ok()) return now.status();
      if (written->value.has_value() && now->has_value() && (*now)->value() == *written->value) {
        return (*now)->mod_revision();
      }
      if (!written->value.has_value() && !now->has_value()) {
        return response->header().revision();  // deleted, whoever did it
      }
      return absl::UnavailableError(
          absl::StrCat("the ", Describe(),
                       " stopped answering while the change was committed, and "
                       "the record changed since: the change may or may not have been made; look "
                       "before trying again"));
    }
    last = response.status();
    if (!absl::IsUnavailable(last)) return last;
    failed_in_flight = true;
    if (stopping_.WaitForNotificationWithTimeout(backoff)) break;
    backoff *= 2;
  }
  return absl::UnavailableError(absl::StrCat("the ", Describe(), " is unreachable (",
                                             last.message(),
                                             "); the change may or may not have been made"));
}

absl::Status EtcdRecords::Import(const KeystoreContents& contents) {
  auto count = Count();
  if (!count.ok()) return count.status();
  if (*count > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("etcd prefix ", layout_.prefix(), " is not empty (", *count,
                     " keys); a keystore is only copied into an empty prefix"));
  }
  // Each batch is conditioned on there being no keystore yet, so a server started
  // with --init meanwhile stops the copy instead of being mixed into it.
  const std::shared_ptr<const KekRing> keks = keks_.ring();
  TxnRequest batch;
  size_t batch_bytes = 0;
  auto flush = [&]() -> absl::Status {
    if (batch.success_size() == 0) return absl::OkStatus();
    CompareModRevision(batch, layout_.Marker(), 0);
    auto committed = Commit(batch, std::nullopt, *keks);
    batch.Clear();
    batch_bytes = 0;
    if (absl::IsAborted(committed.status())) {
      return absl::AbortedError(absl::StrCat("a keystore was created under etcd prefix ",
                                             layout_.prefix(), " during the copy"));
    }
    return committed.status();
  };
  for (const RecordChange& record : RecordsOf(contents.file)) {
    const std::string key = layout_.KeyOf(record.name);
    auto value = Seal(key, *record.value, keks->current);
    if (!value.ok()) return value.status();
    Put(batch, key, *value);
    batch_bytes += value->size();
    if (batch.success_size() >= kBatchOps || batch_bytes >= kBatchBytes) {
      if (absl::Status s = flush(); !s.ok()) return s;
    }
  }
  internal::Record info;
  info.mutable_keystore()->set_layout_version(1);
  info.mutable_keystore()->set_create_time_unix(absl::ToUnixSeconds(absl::Now()));
  auto marker = Seal(layout_.Marker(), info, keks->current);
  if (!marker.ok()) return marker.status();
  Put(batch, layout_.Marker(), *marker);
  return flush();
}

void EtcdRecords::Stop() {
  std::call_once(stop_once_, [this] { stopping_.Notify(); });
}

}  // namespace sealbox::server::etcd
