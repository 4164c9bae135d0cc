#include "server/keystore/etcd/etcd_storage.h"

#include <algorithm>
#include <chrono>
#include <map>
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

// How long a heartbeat's read may take before its connection counts as stuck: ten
// times what reads have recently taken, within these limits. Short, because a cut
// that drops packets shows only as silence, and the sooner it is noticed the sooner
// new connections are tried; a read that was merely slow costs a new connection.
constexpr absl::Duration kLeastReadTimeout = absl::Milliseconds(200);
constexpr absl::Duration kMostReadTimeout = absl::Seconds(2);
// How long the watch may take to deliver a revision etcd has confirmed: first one
// that may be another writer's, then a barrier of our own.
constexpr absl::Duration kWatchLag = absl::Milliseconds(50);
constexpr absl::Duration kBarrierPatience = absl::Seconds(1);
// The most records read afresh after an outage rather than waited for (one page).
constexpr int64_t kRelistAtMost = 2000;
// After a member answered a probe and still failed the proof (refused permission,
// say): the least pause before searching again, doubling up to a second.
constexpr absl::Duration kRetryPause = absl::Milliseconds(25);

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
class EtcdStorage::Transaction : public StorageTransaction {
 public:
  explicit Transaction(EtcdStorage* storage) : storage_(storage) {}

  absl::StatusOr<std::optional<internal::Record>> Read(const RecordName& name) override {
    const std::string key = storage_->layout_.KeyOf(name);
    auto kv = storage_->Get(key);
    if (!kv.ok()) return kv.status();
    if (!kv->has_value()) {
      read_[key] = 0;
      return std::nullopt;
    }
    auto record = storage_->Decode(**kv, name);
    if (!record.ok()) return record.status();
    read_[key] = (*kv)->mod_revision();
    return *std::move(record);
  }

  absl::StatusOr<uint64_t> Commit(std::vector<RecordChange> changes) override {
    TxnRequest txn;
    for (const auto& [key, revision] : read_) CompareModRevision(txn, key, revision);
    std::optional<Written> written;
    const Layout& layout = storage_->layout_;
    for (const RecordChange& change : changes) {
      const std::string key = layout.KeyOf(change.name);
      if (change.value.has_value()) {
        auto value = storage_->Seal(key, *change.value);
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
    return storage_->Commit(txn, written);
  }

 private:
  EtcdStorage* storage_;
  std::map<std::string, int64_t> read_;
};

absl::StatusOr<std::unique_ptr<EtcdStorage>> EtcdStorage::Create(EtcdStorageOptions options) {
  if (!options.kek.has_value()) return absl::InvalidArgumentError("no KEK");
  if (options.prefix.empty()) return absl::InvalidArgumentError("the etcd prefix is empty");
  if (options.page_size < 1) options.page_size = 1;
  auto client = EtcdClient::Create(options.etcd);
  if (!client.ok()) return client.status();
  return std::unique_ptr<EtcdStorage>(new EtcdStorage(std::move(options), *std::move(client)));
}

EtcdStorage::EtcdStorage(EtcdStorageOptions options, std::unique_ptr<EtcdClient> client)
    : options_(std::move(options)), client_(std::move(client)), layout_(options_.prefix) {}

EtcdStorage::~EtcdStorage() { Stop(); }

std::string EtcdStorage::Describe() const {
  return absl::StrCat("etcd keystore ", layout_.prefix(), " at ", client_->Endpoints());
}

absl::Status EtcdStorage::NoKeystore() const {
  return absl::NotFoundError(
      absl::StrCat("there is no ", Describe(), " (start one server with --init to create it)"));
}

absl::Status EtcdStorage::DifferentKek() const {
  return absl::FailedPreconditionError(
      absl::StrCat(Describe(), " was written with a different KEK"));
}

const Kek& EtcdStorage::KekFor(absl::string_view value) const {
  if (options_.previous_kek.has_value() && RecordWrittenWithKek(*options_.previous_kek, value)) {
    return *options_.previous_kek;
  }
  return *options_.kek;  // or neither: opening then says "a different KEK"
}

absl::StatusOr<std::string> EtcdStorage::Seal(const std::string& key,
                                              const internal::Record& record) const {
  auto value = SealRecord(*options_.kek, key, record);
  if (value.ok() && value->size() > kMaxValueBytes) {
    return absl::FailedPreconditionError(absl::StrCat(
        "etcd record ", key, " would be ", value->size(), " bytes, more than etcd takes (",
        kMaxValueBytes, "); a key this large has too many versions"));
  }
  return value;
}

absl::StatusOr<internal::Record> EtcdStorage::Decode(const mvccpb::KeyValue& kv,
                                                     const std::optional<RecordName>& name) const {
  auto record = OpenRecord(KekFor(kv.value()), kv.key(), kv.value());
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

absl::StatusOr<std::optional<mvccpb::KeyValue>> EtcdStorage::Get(const std::string& key,
                                                                 int64_t* revision) {
  etcdserverpb::RangeRequest request;
  request.set_key(key);
  auto response = client_->Range(request);
  if (!response.ok()) return response.status();
  if (revision != nullptr) *revision = response->header().revision();
  if (response->kvs_size() == 0) return std::nullopt;
  return response->kvs(0);
}

absl::StatusOr<int64_t> EtcdStorage::CountUnderPrefix() {
  etcdserverpb::RangeRequest request;
  request.set_key(layout_.prefix());
  request.set_range_end(layout_.prefix_end());
  request.set_count_only(true);
  auto response = client_->Range(request);
  if (!response.ok()) return response.status();
  return response->count();
}

absl::StatusOr<bool> EtcdStorage::Prepare(bool create) {
  auto marker = Get(layout_.Marker());
  if (!marker.ok()) return marker.status();
  if (!marker->has_value()) {
    if (!create) return NoKeystore();
    auto count = CountUnderPrefix();
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
    auto value = Seal(layout_.Marker(), info);
    if (!value.ok()) return value.status();
    TxnRequest txn;
    CompareModRevision(txn, layout_.Marker(), 0);
    Put(txn, layout_.Marker(), *value);
    // Lost to another replica's --init: its keystore is as good as ours.
    auto created = Commit(txn, Written{layout_.Marker(), *value});
    if (!created.ok() && !absl::IsAborted(created.status())) return created.status();
    if (created.ok()) {
      Log("keystore_created").Add("store", Describe());
    }
    marker = Get(layout_.Marker());
    if (!marker.ok()) return marker.status();
    if (!marker->has_value()) return NoKeystore();
  }
  const std::string& value = (*marker)->value();
  if (!RecordWrittenWithKek(*options_.kek, value) &&
      (!options_.previous_kek.has_value() ||
       !RecordWrittenWithKek(*options_.previous_kek, value))) {
    return DifferentKek();
  }
  if (!options_.previous_kek.has_value()) return false;
  return Rewrap();
}

// Every record still under the previous KEK is written again under the current one,
// each conditioned on being unchanged since read; one that changed meanwhile is
// picked up by the next pass.
absl::StatusOr<bool> EtcdStorage::Rewrap() {
  bool rewrapped = false;
  for (int pass = 0; pass < kTxnAttempts; ++pass) {
    bool lost_a_race = false;
    TxnRequest batch;
    size_t batch_bytes = 0;
    auto flush = [&]() -> absl::Status {
      if (batch.success_size() == 0) return absl::OkStatus();
      auto committed = Commit(batch, std::nullopt);
      batch.Clear();
      batch_bytes = 0;
      if (absl::IsAborted(committed.status())) {
        lost_a_race = true;
        return absl::OkStatus();
      }
      if (committed.ok()) rewrapped = true;
      return committed.status();
    };
    etcdserverpb::RangeRequest request;
    request.set_key(layout_.prefix());
    request.set_range_end(layout_.prefix_end());
    request.set_limit(options_.page_size);
    while (true) {
      auto page = client_->Range(request);
      if (!page.ok()) return page.status();
      for (const mvccpb::KeyValue& kv : page->kvs()) {
        if (!RecordWrittenWithKek(*options_.previous_kek, kv.value())) continue;
        const bool marker = layout_.IsMarker(kv.key());
        std::optional<RecordName> name = layout_.Parse(kv.key());
        if (!marker && !name.has_value()) continue;  // not ours
        auto record = Decode(kv, name);
        if (!record.ok()) return record.status();
        auto value = Seal(kv.key(), *record);
        WipeRecord(*record);
        if (!value.ok()) return value.status();
        CompareModRevision(batch, kv.key(), kv.mod_revision());
        Put(batch, kv.key(), *value);
        batch_bytes += value->size();
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

absl::StatusOr<KeystoreContents> EtcdStorage::Load() {
  int64_t revision = 0;
  auto marker = Get(layout_.Marker(), &revision);
  if (!marker.ok()) return marker.status();
  if (!marker->has_value()) return NoKeystore();
  if (!RecordWrittenWithKek(KekFor((*marker)->value()), (*marker)->value())) {
    return DifferentKek();
  }
  if (auto info = Decode(**marker, std::nullopt); !info.ok()) return info.status();

  KeystoreContents contents;
  contents.generation = static_cast<uint64_t>(revision);
  std::map<std::string, int> tenant_index;
  int64_t orphans = 0, unknown = 0;
  const std::string tenants = layout_.prefix() + "tenants/";
  etcdserverpb::RangeRequest request;
  request.set_key(tenants);
  request.set_range_end(PrefixEnd(tenants));
  request.set_limit(options_.page_size);
  request.set_revision(revision);  // every page at the marker's revision
  while (true) {
    auto page = client_->Range(request);
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
        contents.file.add_tenants()->set_name(name->tenant);
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

absl::StatusOr<std::unique_ptr<StorageTransaction>> EtcdStorage::Begin() {
  return std::make_unique<Transaction>(this);
}

absl::StatusOr<uint64_t> EtcdStorage::Commit(const TxnRequest& txn,
                                             const std::optional<Written>& written) {
  bool failed_in_flight = false;
  absl::Duration backoff = absl::Milliseconds(100);
  absl::Status last;
  for (int attempt = 0; attempt < kTxnAttempts; ++attempt) {
    auto response = client_->Txn(txn);
    if (response.ok()) {
      if (response->succeeded()) return response->header().revision();
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

absl::Status EtcdStorage::Import(const KeystoreContents& contents) {
  auto count = CountUnderPrefix();
  if (!count.ok()) return count.status();
  if (*count > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("etcd prefix ", layout_.prefix(), " is not empty (", *count,
                     " keys); a keystore is only copied into an empty prefix"));
  }
  // Each batch is conditioned on there being no keystore yet, so a server started
  // with --init meanwhile stops the copy instead of being mixed into it.
  TxnRequest batch;
  size_t batch_bytes = 0;
  auto flush = [&]() -> absl::Status {
    if (batch.success_size() == 0) return absl::OkStatus();
    CompareModRevision(batch, layout_.Marker(), 0);
    auto committed = Commit(batch, std::nullopt);
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
    auto value = Seal(key, *record.value);
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
  auto marker = Seal(layout_.Marker(), info);
  if (!marker.ok()) return marker.status();
  Put(batch, layout_.Marker(), *marker);
  return flush();
}

// ---- Following -------------------------------------------------------------------

void EtcdStorage::Follow(uint64_t revision, StorageListener* listener) {
  {
    absl::MutexLock lock(&deliver_mu_);
    listener_ = listener;
    delivered_ = revision;
  }
  watcher_ = std::thread([this] { WatchLoop(); });
  heartbeat_ = std::thread([this] { HeartbeatLoop(); });
}

void EtcdStorage::Deliver(std::vector<RecordChange> changes, uint64_t revision) {
  absl::MutexLock lock(&deliver_mu_);
  if (revision <= delivered_ || listener_ == nullptr) return;
  if (holding_) {
    held_.emplace_back(std::move(changes), revision);
    return;
  }
  listener_->Apply(changes, revision);
  delivered_ = revision;
}

bool EtcdStorage::WaitDelivered(uint64_t revision, absl::Duration patience) {
  absl::MutexLock lock(&deliver_mu_);
  auto reached = [this, revision]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(deliver_mu_) { return delivered_ >= revision; };
  return deliver_mu_.AwaitWithTimeout(absl::Condition(&reached), patience);
}

void EtcdStorage::SetReachable(bool reachable, absl::string_view why) {
  absl::MutexLock lock(&deliver_mu_);
  if (listener_ != nullptr) listener_->Reachable(reachable, why);
}

absl::Status EtcdStorage::ReloadAll(absl::string_view reason) {
  auto contents = Load();
  if (!contents.ok()) return contents.status();
  absl::MutexLock lock(&deliver_mu_);
  if (contents->generation <= delivered_ || listener_ == nullptr) return absl::OkStatus();
  listener_->Reload(*contents);
  delivered_ = contents->generation;
  if (!reason.empty()) {
    Log("keystore_reloaded")
        .Add("store", Describe())
        .Add("revision", static_cast<int64_t>(delivered_))
        .Add("reason", reason);
  }
  return absl::OkStatus();
}

absl::Status EtcdStorage::Refresh() { return ReloadAll(""); }

absl::StatusOr<uint64_t> EtcdStorage::Barrier(absl::Duration timeout) {
  // A caller waiting for a token it does not know gives up within a second in a cut
  // (a write etcd takes longer than that to commit is lost in a partition anyway).
  timeout = std::min(timeout, kBarrierPatience);
  const absl::Time deadline = absl::Now() + timeout;
  etcdserverpb::TxnRequest txn;
  Put(txn, layout_.Sync(), "");
  // Lost in flight, it is simply written again: a barrier carries nothing.
  auto response = client_->Txn(txn, timeout);
  if (!response.ok() && absl::Now() < deadline) {
    response = client_->Txn(txn, deadline - absl::Now());
  }
  if (!response.ok()) return response.status();
  return static_cast<uint64_t>(response->header().revision());
}

void EtcdStorage::HandleEvents(const etcdserverpb::WatchResponse& response) {
  std::vector<RecordChange> changes;
  int64_t revision = 0;
  auto flush = [&] {
    if (revision > 0) Deliver(std::move(changes), static_cast<uint64_t>(revision));
    changes.clear();
  };
  for (const mvccpb::Event& event : response.events()) {
    const mvccpb::KeyValue& kv = event.kv();
    if (kv.mod_revision() != revision) {
      flush();  // one commit's changes together, each commit in order
      revision = kv.mod_revision();
    }
    std::optional<RecordName> name = layout_.Parse(kv.key());
    if (!name.has_value()) {
      if (layout_.IsMarker(kv.key()) && event.type() == mvccpb::Event_EventType_DELETE) {
        Log("keystore_marker_deleted", "error")
            .Add("store", Describe())
            .Add("detail", "someone deleted the keystore's marker; serving what is loaded");
      }
      continue;
    }
    if (event.type() == mvccpb::Event_EventType_DELETE) {
      changes.emplace_back(*name, std::nullopt);
      continue;
    }
    auto record = Decode(kv, name);
    if (!record.ok()) {
      // Only someone writing etcd by hand gets here: the record keeps its last good
      // value in this replica, and the logs say why.
      Log("keystore_record_refused", "error")
          .Add("store", Describe())
          .Add("error", record.status().message());
      continue;
    }
    changes.emplace_back(*name, *std::move(record));
  }
  flush();
}

absl::Status EtcdStorage::WatchOnce(bool& created) {
  created = false;
  // Known (so cancellable by Stop and RestartWatch) before the stream is opened:
  // opening it waits for a connection.
  auto context = std::make_unique<grpc::ClientContext>();
  bool from_now;
  {
    absl::MutexLock lock(&stream_mu_);
    if (stopping_.HasBeenNotified()) return absl::CancelledError("stopping");
    stream_context_ = context.get();
    restart_watch_ = false;  // this stream is the restart asked for
    from_now = std::exchange(resume_from_now_, false);
  }
  auto watch = client_->Watch(context.get());
  if (!watch.ok()) {
    absl::MutexLock lock(&stream_mu_);
    stream_context_ = nullptr;
    return watch.status();
  }
  uint64_t from = 0;  // 0: from etcd's revision now
  {
    // A stream from now holds what it delivers until the relist it was started for
    // is in (Relist): until then there is a gap before it.
    absl::MutexLock lock(&deliver_mu_);
    holding_ = from_now;
    held_.clear();
    if (!from_now) from = delivered_ + 1;
  }
  etcdserverpb::WatchRequest request;
  etcdserverpb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(layout_.prefix());
  create->set_range_end(layout_.prefix_end());
  create->set_start_revision(static_cast<int64_t>(from));
  absl::Status ended = absl::UnavailableError("the watch ended");
  if (watch->stream->Write(request)) {
    etcdserverpb::WatchResponse response;
    while (watch->stream->Read(&response)) {
      if (response.compact_revision() > 0) {
        ended = absl::OutOfRangeError(absl::StrCat("the watch's revision ", from,
                                                   " was compacted (etcd keeps from ",
                                                   response.compact_revision(), ")"));
        context->TryCancel();
        break;
      }
      if (response.canceled()) {
        ended = absl::UnavailableError(
            absl::StrCat("etcd cancelled the watch: ", response.cancel_reason()));
        context->TryCancel();
        break;
      }
      if (response.created()) {
        created = true;
        if (from_now) {
          absl::MutexLock lock(&stream_mu_);
          resumed_at_ = std::max<int64_t>(1, response.header().revision());
        }
      }
      HandleEvents(response);
    }
  }
  grpc::Status finished = watch->stream->Finish();
  bool restarted;
  {
    absl::MutexLock lock(&stream_mu_);
    stream_context_ = nullptr;
    restarted = restart_watch_;
  }
  // Moved on purpose, to an endpoint that answers: not this one's failure.
  if (!restarted && (!created || absl::IsUnavailable(ended))) {
    client_->EndpointFailed(watch->endpoint, watch->connection.get());
  }
  if (absl::IsUnavailable(ended) && !finished.ok()) {
    ended = absl::UnavailableError(absl::StrCat("etcd: ", finished.error_message()));
  }
  return ended;
}

void EtcdStorage::RestartWatch() {
  absl::MutexLock lock(&stream_mu_);
  restart_watch_ = true;
  if (stream_context_ != nullptr) stream_context_->TryCancel();
}

bool EtcdStorage::TakeRestart() {
  absl::MutexLock lock(&stream_mu_);
  const bool restart = restart_watch_;
  restart_watch_ = false;
  return restart;
}

void EtcdStorage::WatchLoop() {
  absl::Duration backoff = absl::Milliseconds(100);
  int failures = 0;  // in a row, since the last stream that worked
  while (!stopping_.HasBeenNotified()) {
    bool created = false;
    absl::Status ended = WatchOnce(created);
    if (stopping_.HasBeenNotified()) break;
    if (TakeRestart()) {
      failures = 0;
      backoff = absl::Milliseconds(100);
      continue;
    }
    if (absl::IsOutOfRange(ended)) {
      // The revisions in between are gone: start over from a whole load.
      ended = ReloadAll("watch compacted");
      if (ended.ok()) continue;
    }
    if (created) {
      failures = 0;
      backoff = absl::Milliseconds(100);
    }
    // A stream that had worked is tried again at once (on the next endpoint: one
    // member going away is not an outage); after that, with backoff, unless the
    // heartbeat finds a member that answers first (RestartWatch).
    if (++failures == 1) continue;
    {
      absl::MutexLock lock(&stream_mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stream_mu_) {
        return restart_watch_ || stopping_.HasBeenNotified();
      };
      stream_mu_.AwaitWithTimeout(absl::Condition(&woken), backoff);
    }
    backoff = std::min(backoff * 2, absl::Milliseconds(500));
  }
}

// ---- Proving the keystore current ---------------------------------------------------

absl::Status EtcdStorage::ProveCurrent(std::chrono::steady_clock::time_point began) {
  // At or after every revision committed before `began`.
  absl::StatusOr<int64_t> revision = client_->CurrentRevision(layout_.Marker(), ReadTimeout());
  if (!revision.ok()) return revision.status();
  // A moving average of what reads take, a new one weighing a quarter.
  const int64_t took =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began)
          .count();
  read_nanos_.store((3 * read_nanos_.load() + took) / 4);
  if (!WaitDelivered(static_cast<uint64_t>(*revision), kWatchLag)) {
    // Either the newest revision is another writer's (the watch sees only our
    // prefix) or the watch is behind: a revision of our own settles which.
    absl::StatusOr<uint64_t> barrier = Barrier(kBarrierPatience);
    if (!barrier.ok()) return barrier.status();
    if (!WaitDelivered(*barrier, kBarrierPatience)) {
      // Its member is behind the cluster, or its connection is dead: start over.
      RestartWatch();
      return absl::UnavailableError(absl::StrCat("the watch has not delivered etcd revision ",
                                                 *barrier, " within ",
                                                 absl::FormatDuration(kBarrierPatience)));
    }
  }
  absl::MutexLock lock(&deliver_mu_);
  if (listener_ != nullptr) listener_->CurrentAsOf(began);
  return absl::OkStatus();
}

// A watch resumed from a past revision delivers nothing until etcd's resync loop
// (every 100 ms) reaches it; a watch from etcd's revision now is in sync at once. So
// a small keystore resumes its watch from now and then is read afresh at a revision
// no older (what informers call a relist): the read covers everything before the
// watch, the watch everything after the read. A large one, or a relist that fails,
// resumes the watch where it left off.
void EtcdStorage::CatchUpAfterOutage() {
  absl::StatusOr<int64_t> records = CountUnderPrefix();
  if (records.ok() && *records <= kRelistAtMost) {
    absl::Status relisted =
        ResumeWatchFromNow() ? Relist() : absl::UnavailableError("the watch did not resume");
    if (relisted.ok()) return;
    Log("keystore_relist_failed", "warning")
        .Add("store", Describe())
        .Add("error", relisted.message());
  }
  RestartWatch();  // from where the listener is: nothing skipped
}

absl::Status EtcdStorage::Relist() {
  auto contents = Load();  // at a revision no older than the watch's start
  if (!contents.ok()) return contents.status();
  absl::MutexLock lock(&deliver_mu_);
  if (listener_ == nullptr) return absl::OkStatus();
  if (!holding_) {
    // The stream from now ended meanwhile, and one from where the listener is took
    // its place: an ordinary reload, if it is newer.
    if (contents->generation > delivered_) {
      listener_->Reload(*contents);
      delivered_ = contents->generation;
    }
    return absl::OkStatus();
  }
  // (A whole load in between, by Refresh, may already be newer.)
  if (contents->generation > delivered_) {
    listener_->Reload(*contents);
    delivered_ = contents->generation;
  }
  for (auto& [changes, revision] : held_) {
    if (revision <= delivered_) continue;
    listener_->Apply(changes, revision);
    delivered_ = revision;
  }
  held_.clear();
  holding_ = false;
  Log("keystore_reloaded")
      .Add("store", Describe())
      .Add("revision", static_cast<int64_t>(delivered_))
      .Add("reason", "caught up after an outage");
  return absl::OkStatus();
}

bool EtcdStorage::ResumeWatchFromNow() {
  {
    absl::MutexLock lock(&stream_mu_);
    resume_from_now_ = true;
    resumed_at_ = 0;
  }
  RestartWatch();
  absl::MutexLock lock(&stream_mu_);
  auto resumed = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(stream_mu_) {
    return resumed_at_ > 0 || stopping_.HasBeenNotified();
  };
  return stream_mu_.AwaitWithTimeout(absl::Condition(&resumed), ReadTimeout()) && resumed_at_ > 0;
}

absl::Duration EtcdStorage::ReadTimeout() const {
  return std::clamp(10 * absl::Nanoseconds(read_nanos_.load()), kLeastReadTimeout,
                    kMostReadTimeout);
}

void EtcdStorage::HeartbeatLoop() {
  int failures = 0;  // in a row
  while (!stopping_.HasBeenNotified()) {
    const auto began = std::chrono::steady_clock::now();
    absl::Status proved = ProveCurrent(began);
    if (proved.ok()) {
      if (failures > 0) SetReachable(true, "");
      failures = 0;
      client_->TidyProbes();
      const absl::Duration spent = absl::FromChrono(std::chrono::steady_clock::now() - began);
      if (stopping_.WaitForNotificationWithTimeout(options_.heartbeat - spent)) break;
      continue;
    }
    // Unreachable from the first failure: calls that would wait for the store (a
    // token not known here) stop piling up at once, and a slow answer costs only the
    // moment until a member answers again.
    ++failures;
    SetReachable(false, proved.message());
    if (failures > 2) {
      const absl::Duration pause =
          std::min(kRetryPause * (1 << std::min(failures - 3, 6)), absl::Seconds(1));
      if (stopping_.WaitForNotificationWithTimeout(pause)) break;
    }
    // Dial every member afresh until one answers, and follow it: the next proof
    // comes as soon as the network is back, not after gRPC's or TCP's backoff.
    std::optional<size_t> found =
        client_->FindAnsweringMember(layout_.Marker(), absl::InfiniteDuration(), stopping_);
    if (found.has_value()) {
      Log("keystore_member_answered")
          .Add("store", Describe())
          .Add("endpoint", static_cast<int64_t>(*found))
          .Add("detail", "following it from here: watch restarted, heartbeat next");
      CatchUpAfterOutage();
    }
  }
}

void EtcdStorage::Stop() {
  {
    absl::MutexLock lock(&stream_mu_);
    if (!stopping_.HasBeenNotified()) stopping_.Notify();
    if (stream_context_ != nullptr) stream_context_->TryCancel();
  }
  if (heartbeat_.joinable()) heartbeat_.join();
  if (watcher_.joinable()) watcher_.join();
}

}  // namespace sealbox::server::etcd
