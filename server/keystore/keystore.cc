#include "server/keystore/keystore.h"

#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/keystore/names.h"
#include "server/keystore/record_enums.h"
#include "server/keystore/tokens.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

constexpr size_t kMaxDescriptionBytes = 256;
// Commits lost to other writers before a change gives up with ABORTED. Replicas race
// only when they change the same record at the same moment; each lost race means
// another writer committed, so the whole fleet always makes progress.
constexpr int kMaxAttempts = 16;
// How long a committed change may take to reach this keystore's snapshot (etcd: its
// watch) before the call returns anyway.
constexpr absl::Duration kVisibleWithin = absl::Seconds(5);
// The least time between two CatchUp barriers.
constexpr absl::Duration kCatchUpSpacing = absl::Milliseconds(25);
// Callers of CatchUp that may wait at once for an unreachable store to come back,
// and how long: a backend that lost its store looks for it many times a second, so
// a store that is back is followed again within this; one that is not makes no
// caller (and no server thread) wait longer.
constexpr int kMaxWaitingForStore = 4;
constexpr absl::Duration kWaitForStore = absl::Milliseconds(500);

absl::Status ValidateRef(const std::string& tenant, const std::string& key) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  return ValidateKeyName(key);
}

int64_t NowUnix() { return absl::ToUnixSeconds(absl::Now()); }

absl::Status CheckDescription(const std::string& description) {
  if (description.size() <= kMaxDescriptionBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("token description must be at most ", kMaxDescriptionBytes, " bytes"));
}

// What every new token (tenant or admin) takes from its request: the description,
// the creation time `now`, and the expiry in whole seconds, at least one.
void StartToken(const TokenRequest& request, int64_t now, internal::Token& stored) {
  stored.set_description(request.description);
  stored.set_create_time_unix(now);
  if (request.ttl != absl::ZeroDuration()) {
    stored.set_ttl_seconds(std::max<int64_t>(1, absl::ToInt64Seconds(request.ttl)));
    stored.set_expire_time_unix(now + stored.ttl_seconds());
  }
}

// A token lifetime: zero (none) up to a century, so that now + it fits.
absl::Status CheckLifetime(absl::Duration lifetime, const char* field) {
  if (lifetime >= absl::ZeroDuration() && lifetime <= absl::Hours(24 * 36525)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("a token's ", field, " must be between 0 and 100 years"));
}

// Material bytes per algorithm; 0 for none we know.
size_t MaterialBytes(internal::Algorithm algorithm) {
  switch (algorithm) {
    case internal::AES_128_GCM:
      return 16;
    case internal::AES_256_GCM:
      return 32;
    default:
      return 0;
  }
}

absl::StatusOr<crypto::SecretBytes> RandomMaterial(internal::Algorithm algorithm) {
  crypto::SecretBytes material(MaterialBytes(algorithm));
  if (material.empty() || RAND_bytes(material.data(), material.size()) != 1) {
    return absl::InternalError("generating key material failed");
  }
  return material;
}

// Every error names what it is about in one form (TenantRef, KeyRef; `key
// "acme/orders" version 3`). Names are validated before any lookup, so the ones quoted
// here are plain [A-Za-z0-9_.-] text.
absl::Status TenantNotFound(const std::string& tenant) {
  return absl::NotFoundError(absl::StrCat(TenantRef(tenant), " not found"));
}

absl::Status KeyNotFound(const std::string& tenant, const std::string& key) {
  return absl::NotFoundError(absl::StrCat(KeyRef(tenant, key), " not found"));
}

absl::StatusOr<internal::KeyVersion*> FindVersion(const std::string& tenant, internal::Key& key,
                                                  uint32_t version) {
  for (internal::KeyVersion& v : *key.mutable_versions()) {
    if (v.version() == version) return &v;
  }
  return absl::NotFoundError(
      absl::StrCat(KeyRef(tenant, key.name()), " version ", version, " not found"));
}

// Appends a version (one past the highest so far) and makes it primary.
void AddPrimaryVersion(internal::Key& key, absl::Span<const uint8_t> material, bool imported) {
  uint32_t next = 1;
  for (const internal::KeyVersion& v : key.versions()) {
    next = std::max(next, v.version() + 1);
  }
  internal::KeyVersion* version = key.add_versions();
  version->set_version(next);
  version->set_state(internal::ENABLED);
  version->set_material(material.data(), material.size());
  version->set_imported(imported);
  version->set_create_time_unix(NowUnix());
  key.set_primary_version(next);
  if (key.min_decryption_version() == 0) key.set_min_decryption_version(1);
}

absl::Status RotateFirst(const std::string& tenant, const internal::Key& key, uint32_t version) {
  return absl::FailedPreconditionError(absl::StrCat(
      KeyRef(tenant, key.name()), " version ", version, " is the primary version; rotate first"));
}

// What admin calls say of a key as committed (no key material).
KeyInfo InfoOf(const std::string& tenant, const internal::Key& key) {
  return KeyEntry::WithoutMaterial(tenant, key).Info();
}

}  // namespace

// Typed reads and buffered writes over one StorageTransaction. Records it reads are
// its own copies, wiped when it goes away.
class Keystore::Transaction {
 public:
  explicit Transaction(StorageTransaction& storage) : storage_(storage) {}
  ~Transaction() {
    for (internal::Record& record : reads_) WipeRecord(record);
  }

  absl::StatusOr<bool> HasTenant(const std::string& tenant) {
    auto record = storage_.Read(RecordName::Tenant(tenant));
    if (!record.ok()) return record.status();
    return record->has_value();
  }

  // OK when the tenant exists, else NOT_FOUND.
  absl::Status RequireTenant(const std::string& tenant) {
    auto exists = HasTenant(tenant);
    if (!exists.ok()) return exists.status();
    return *exists ? absl::OkStatus() : TenantNotFound(tenant);
  }

  // The key as stored, or nullptr when there is none. The transaction owns it: change
  // it in place, then Put it.
  absl::StatusOr<internal::Key*> FindKey(const std::string& tenant, const std::string& key) {
    auto record = storage_.Read(RecordName::Key(tenant, key));
    if (!record.ok()) return record.status();
    if (!record->has_value()) return nullptr;
    reads_.push_back(**std::move(record));
    return reads_.back().mutable_key();
  }

  // The key, or NOT_FOUND naming what is missing (its tenant, or the key). A key
  // that exists needs no read of its tenant: deleting a tenant deletes its keys in
  // the same commit, so the key's own read condition covers both.
  absl::StatusOr<internal::Key*> RequireKey(const std::string& tenant, const std::string& key) {
    auto found = FindKey(tenant, key);
    if (!found.ok()) return found.status();
    if (*found != nullptr) return *found;
    if (absl::Status s = RequireTenant(tenant); !s.ok()) return s;
    return KeyNotFound(tenant, key);
  }

  absl::StatusOr<bool> HasToken(const std::string& tenant, const std::string& id) {
    auto token = FindToken(tenant, id);
    if (!token.ok()) return token.status();
    return *token != nullptr;
  }

  // The token as stored, or nullptr when there is none.
  absl::StatusOr<const internal::Token*> FindToken(const std::string& tenant,
                                                   const std::string& id) {
    auto record = storage_.Read(RecordName::Token(tenant, id));
    if (!record.ok()) return record.status();
    if (!record->has_value()) return nullptr;
    reads_.push_back(**std::move(record));
    return &reads_.back().token();
  }

  void PutTenant(const std::string& tenant) {
    internal::Record record;
    record.mutable_tenant()->set_name(tenant);
    changes_.emplace_back(RecordName::Tenant(tenant), std::move(record));
  }
  void PutKey(const std::string& tenant, const internal::Key& key) {
    internal::Record record;
    *record.mutable_key() = key;
    changes_.emplace_back(RecordName::Key(tenant, key.name()), std::move(record));
  }
  void PutToken(const std::string& tenant, const internal::Token& token) {
    internal::Record record;
    *record.mutable_token() = token;
    changes_.emplace_back(RecordName::Token(tenant, token.id()), std::move(record));
  }
  void Delete(RecordName name) { changes_.emplace_back(std::move(name), std::nullopt); }

  std::vector<RecordChange> TakeChanges() { return std::move(changes_); }

 private:
  StorageTransaction& storage_;
  std::deque<internal::Record> reads_;
  std::vector<RecordChange> changes_;
};

struct Keystore::State : public StorageListener {
  State(std::unique_ptr<KeystoreStorage> s, KeystoreOpenOptions o)
      : storage(std::move(s)),
        options(std::move(o)),
        snapshot(Snapshot::Empty()),
        freshness(options.max_staleness, storage->Describe()) {}

  // StorageListener: the store's thread tells us what changed.
  void Reload(const KeystoreContents& contents) override {
    reloads.fetch_add(1, std::memory_order_relaxed);
    absl::MutexLock lock(&mu);
    auto next = Snapshot::Build(contents, std::atomic_load(&snapshot).get());
    if (!next.ok()) {
      Log("keystore_reload_refused", "error").Add("error", next.status().message());
      return;
    }
    Publish(*std::move(next));
  }

  void Apply(const std::vector<RecordChange>& changes, uint64_t revision) override {
    absl::MutexLock lock(&mu);
    if (changes.empty()) {
      // A barrier's or a heartbeat's revision: nothing to copy the snapshot for.
      generation = std::max(generation, revision);
      return;
    }
    auto current = std::atomic_load(&snapshot);
    auto next = current->With(changes, revision);
    if (!next.ok()) {
      // Only a hand edit of the store can get here; the rest of the keystore goes on.
      Log("keystore_change_refused", "error")
          .Add("revision", static_cast<int64_t>(revision))
          .Add("error", next.status().message());
      next = current->With({}, revision);
    }
    Publish(*std::move(next));
  }

  void Reachable(bool now, absl::string_view why) override {
    {
      absl::MutexLock lock(&mu);
      unreachable_because = now ? "" : std::string(why);
      if (reachable == now) return;
      reachable = now;
    }
    if (now) {
      Log("keystore_reachable").Add("store", storage->Describe());
    } else {
      Log("keystore_unreachable", "warning")
          .Add("store", storage->Describe())
          .Add("error", why)
          .Add("detail",
               "serving from the last snapshot for at most --max-staleness; "
               "admin calls fail until it is back");
    }
    if (options.on_writable) options.on_writable(now);
  }

  void CurrentAsOf(SteadyClock::time_point as_of) override { freshness.Confirm(as_of); }

  void Publish(std::shared_ptr<const Snapshot> next) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::atomic_store(&snapshot, std::move(next));
    generation = std::atomic_load(&snapshot)->generation();
  }

  // Prepare, Load, Follow: the whole of opening, once.
  absl::Status TryLoad() {
    auto rewrapped = storage->Prepare(options.create);
    if (!rewrapped.ok()) return rewrapped.status();
    // Load reads the store as it is now: what it returns is current as of its start.
    const SteadyClock::time_point began = SteadyClock::now();
    auto contents = storage->Load();
    if (!contents.ok()) return contents.status();
    auto built = Snapshot::Build(*contents, nullptr);
    if (!built.ok()) return built.status();
    {
      absl::MutexLock lock(&mu);
      Publish(*std::move(built));
      rewrapped_at_open = *rewrapped;
      loaded = true;
      freshness.Confirm(began);
      loaded_fast.store(true, std::memory_order_release);
      reachable = true;
    }
    storage->Follow(contents->generation, this);
    return absl::OkStatus();
  }

  // keep_trying: the background loader, with backoff, until loaded or stopped.
  void KeepTrying(absl::Status first) {
    absl::Duration backoff = absl::Milliseconds(200);
    std::string logged(first.message());
    while (!stopping.WaitForNotificationWithTimeout(backoff)) {
      absl::Status s = TryLoad();
      if (s.ok()) {
        Log("keystore_loaded")
            .Add("store", storage->Describe())
            .Add("generation", static_cast<int64_t>(std::atomic_load(&snapshot)->generation()));
        if (options.on_writable) options.on_writable(true);
        return;
      }
      if (!absl::IsUnavailable(s)) {
        Log("keystore_failed", "error").Add("store", storage->Describe()).Add("error", s.message());
        if (options.on_failure) options.on_failure(s);
        return;
      }
      {
        absl::MutexLock lock(&mu);
        not_loaded_because = std::string(s.message());
      }
      if (s.message() != logged) {  // one line per distinct error, not per attempt
        logged = std::string(s.message());
        Log("keystore_unavailable", "warning")
            .Add("store", storage->Describe())
            .Add("error", s.message());
      }
      backoff = std::min(backoff * 2, absl::Seconds(5));
    }
  }

  bool WaitForGeneration(uint64_t target, absl::Duration patience = kVisibleWithin) {
    absl::MutexLock lock(&mu);
    auto reached = [this, target]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return generation >= target; };
    return mu.AwaitWithTimeout(absl::Condition(&reached), patience);
  }

  absl::Mutex& WriterLock(const RecordName& name) {
    return writers[std::hash<std::string>()(name.ToString()) % writers.size()];
  }

  const std::unique_ptr<KeystoreStorage> storage;
  const KeystoreOpenOptions options;
  // Read and written only with std::atomic_load / std::atomic_store; replaced only
  // with `mu` held.
  std::shared_ptr<const Snapshot> snapshot;
  absl::Mutex mu;
  uint64_t generation ABSL_GUARDED_BY(mu) = 0;
  bool loaded ABSL_GUARDED_BY(mu) = false;
  std::atomic<bool> loaded_fast{false};  // `loaded`, for the data plane's every call
  bool reachable ABSL_GUARDED_BY(mu) = false;
  bool rewrapped_at_open ABSL_GUARDED_BY(mu) = false;
  std::string not_loaded_because ABSL_GUARDED_BY(mu);
  std::string unreachable_because ABSL_GUARDED_BY(mu);
  std::array<absl::Mutex, 64> writers;
  std::atomic<int> waiting_for_store{0};
  // CatchUp's barriers: tickets handed out, tickets a finished barrier covered.
  absl::Mutex sync_mu;
  uint64_t sync_requested ABSL_GUARDED_BY(sync_mu) = 0;
  uint64_t sync_served ABSL_GUARDED_BY(sync_mu) = 0;
  bool sync_running ABSL_GUARDED_BY(sync_mu) = false;
  absl::Time sync_last_start ABSL_GUARDED_BY(sync_mu) = absl::InfinitePast();
  Freshness freshness;
  std::atomic<uint64_t> reloads{0};  // Reload calls; the one of opening is not one
  std::atomic<uint64_t> catch_ups{0};
  std::atomic<uint64_t> stale_refusals{0};
  std::atomic<int64_t> catch_up_nanos{0};
  absl::Notification stopping;
  std::thread loader;
};

Keystore::Keystore(std::unique_ptr<State> state) : state_(std::move(state)) {}

Keystore::~Keystore() {
  state_->stopping.Notify();
  if (state_->loader.joinable()) state_->loader.join();
  state_->storage->Stop();
}

absl::StatusOr<std::unique_ptr<Keystore>> Keystore::Open(std::unique_ptr<KeystoreStorage> storage,
                                                         KeystoreOpenOptions options) {
  std::unique_ptr<Keystore> keystore(
      new Keystore(std::make_unique<State>(std::move(storage), std::move(options))));
  State& s = *keystore->state_;
  absl::Status loaded = s.TryLoad();
  if (loaded.ok()) return keystore;
  if (!absl::IsUnavailable(loaded) || !s.options.keep_trying) return loaded;
  {
    absl::MutexLock lock(&s.mu);
    s.not_loaded_because = std::string(loaded.message());
  }
  Log("keystore_unavailable", "warning")
      .Add("store", s.storage->Describe())
      .Add("error", loaded.message())
      .Add("detail", "retrying in the background; nothing is served until it loads");
  s.loader = std::thread([&s, loaded] { s.KeepTrying(loaded); });
  return keystore;
}

bool Keystore::rewrapped_at_open() const {
  absl::MutexLock lock(&state_->mu);
  return state_->rewrapped_at_open;
}

std::shared_ptr<const Snapshot> Keystore::snapshot() const {
  return std::atomic_load(&state_->snapshot);
}

absl::Status Keystore::Loaded() const {
  if (state_->loaded_fast.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&state_->mu);
  if (state_->loaded) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("the ", state_->storage->Describe(),
                                             " is not loaded yet: ", state_->not_loaded_because));
}

absl::Status Keystore::Writable() const {
  if (absl::Status s = Loaded(); !s.ok()) return s;
  absl::MutexLock lock(&state_->mu);
  if (state_->reachable) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("the ", state_->storage->Describe(),
                                             " is unreachable: ", state_->unreachable_because));
}

absl::Status Keystore::WaitUntilWritable(absl::Duration patience) const {
  if (absl::Status s = Writable(); s.ok() || !Loaded().ok()) return s;
  {
    State& s = *state_;
    absl::MutexLock lock(&s.mu);
    auto reachable = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.reachable; };
    s.mu.AwaitWithTimeout(absl::Condition(&reachable), patience);
  }
  return Writable();
}

absl::Status Keystore::Serving() const {
  if (!state_->loaded_fast.load(std::memory_order_acquire)) return Loaded();
  if (absl::Status fresh = state_->freshness.Check(); fresh.ok()) return fresh;
  state_->stale_refusals.fetch_add(1, std::memory_order_relaxed);
  std::string why;
  {
    absl::MutexLock lock(&state_->mu);
    why = state_->unreachable_because;
  }
  return state_->freshness.Check(why);
}

KeystoreHealth Keystore::Health() const {
  State& s = *state_;
  KeystoreHealth health;
  health.staleness = s.freshness.Staleness();
  health.max_staleness = s.freshness.max_staleness();
  health.fresh = s.freshness.Check().ok();
  health.stale_refusals = s.stale_refusals.load(std::memory_order_relaxed);
  health.reloads = s.reloads.load(std::memory_order_relaxed);
  health.catch_ups = s.catch_ups.load(std::memory_order_relaxed);
  health.catch_up_seconds =
      static_cast<double>(s.catch_up_nanos.load(std::memory_order_relaxed)) / 1e9;
  absl::MutexLock lock(&s.mu);
  health.revision = s.generation;
  health.loaded = s.loaded;
  health.reachable = s.loaded && s.reachable;
  return health;
}

absl::Status Keystore::Refresh() {
  if (absl::Status s = Loaded(); !s.ok()) return s;
  return state_->storage->Refresh();
}

std::string Keystore::Describe() const { return state_->storage->Describe(); }

absl::Status Keystore::CatchUp(absl::Duration patience) {
  const absl::Time began = absl::Now();
  State& s = *state_;
  if (absl::Status loaded = Loaded(); !loaded.ok()) return loaded;
  s.catch_ups.fetch_add(1, std::memory_order_relaxed);
  absl::Status caught_up = WaitForStore(began + patience);
  s.catch_up_nanos.fetch_add(absl::ToInt64Nanoseconds(absl::Now() - began),
                             std::memory_order_relaxed);
  return caught_up;
}

absl::Status Keystore::WaitForStore(absl::Time deadline) {
  State& s = *state_;
  // A store that just came back may not be followed again yet (its watch
  // reconnecting): wait for it within the patience, a few callers at a time, so an
  // outage does not hold many calls.
  if (!Writable().ok()) {
    if (s.waiting_for_store.fetch_add(1) >= kMaxWaitingForStore) {
      s.waiting_for_store.fetch_sub(1);
      return Writable();
    }
    {
      absl::MutexLock lock(&s.mu);
      auto reachable = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.mu) { return s.reachable; };
      s.mu.AwaitWithDeadline(absl::Condition(&reachable),
                             std::min(deadline, absl::Now() + kWaitForStore));
    }
    s.waiting_for_store.fetch_sub(1);
    if (absl::Status writable = Writable(); !writable.ok()) return writable;
  }
  absl::MutexLock lock(&s.sync_mu);
  // A barrier covers the callers that came before it started, so each caller waits
  // for one that starts after it came.
  const uint64_t ticket = ++s.sync_requested;
  while (s.sync_served < ticket) {
    if (!s.sync_running) {
      s.sync_running = true;
      const absl::Time start = std::max(absl::Now(), s.sync_last_start + kCatchUpSpacing);
      s.sync_mu.Unlock();
      absl::SleepFor(start - absl::Now());
      uint64_t covers;
      {
        absl::MutexLock again(&s.sync_mu);
        covers = s.sync_requested;
        s.sync_last_start = absl::Now();
      }
      absl::StatusOr<uint64_t> revision = s.storage->Barrier(deadline - absl::Now());
      const bool reached = revision.ok() && s.WaitForGeneration(*revision, deadline - absl::Now());
      s.sync_mu.Lock();
      s.sync_running = false;
      if (!revision.ok()) return revision.status();
      if (!reached) return absl::DeadlineExceededError("the store's changes have not arrived");
      s.sync_served = std::max(s.sync_served, covers);
      continue;
    }
    auto done = [&s, ticket]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(s.sync_mu) {
      return s.sync_served >= ticket || !s.sync_running;
    };
    if (!s.sync_mu.AwaitWithDeadline(absl::Condition(&done), deadline)) {
      return absl::DeadlineExceededError("the store's changes have not arrived");
    }
  }
  return absl::OkStatus();
}

std::shared_ptr<const Snapshot> Keystore::CaughtUpSnapshot() {
  if (!CatchUp().ok()) return nullptr;
  return snapshot();
}

absl::Status Keystore::Update(const RecordName& lock,
                              const std::function<absl::Status(Transaction&)>& change) {
  if (absl::Status s = Writable(); !s.ok()) return s;
  absl::MutexLock writer(&state_->WriterLock(lock));
  thread_local std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    auto storage_txn = state_->storage->Begin();
    if (!storage_txn.ok()) return storage_txn.status();
    Transaction txn(**storage_txn);
    if (absl::Status s = change(txn); !s.ok()) return s;
    std::vector<RecordChange> changes = txn.TakeChanges();
    // Nothing to write: what the change read is the answer.
    if (changes.empty()) return absl::OkStatus();
    absl::StatusOr<uint64_t> committed = (*storage_txn)->Commit(std::move(changes));
    if (committed.ok()) {
      if (!state_->WaitForGeneration(*committed)) {
        Log("keystore_change_not_seen", "warning")
            .Add("store", state_->storage->Describe())
            .Add("revision", static_cast<int64_t>(*committed))
            .Add("detail", "committed, but not yet in this replica's snapshot");
      }
      return absl::OkStatus();
    }
    if (!absl::IsAborted(committed.status())) return committed.status();
    if (attempt == kMaxAttempts) {
      return absl::AbortedError(
          absl::StrCat("the change to ", lock.ToString(), " lost ", kMaxAttempts,
                       " races with other writers of the keystore; try again"));
    }
    // Randomized backoff, so the writers that lost this round do not collide again.
    const int64_t cap_us = std::min<int64_t>(50'000, 500 << std::min(attempt, 7));
    absl::SleepFor(absl::Microseconds(std::uniform_int_distribution<int64_t>(0, cap_us)(jitter)));
  }
}

absl::StatusOr<KeyInfo> Keystore::UpdateKey(
    const std::string& tenant, const std::string& key,
    const std::function<absl::StatusOr<bool>(internal::Key&)>& change) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  KeyInfo result;
  absl::Status s = Update(RecordName::Key(tenant, key), [&](Transaction& txn) {
    auto k = txn.RequireKey(tenant, key);
    if (!k.ok()) return k.status();
    absl::StatusOr<bool> changed = change(**k);
    if (!changed.ok()) return changed.status();
    if (*changed) txn.PutKey(tenant, **k);
    result = InfoOf(tenant, **k);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<TenantInfo> Keystore::CreateTenant(const std::string& name) {
  if (absl::Status s = ValidateTenantName(name); !s.ok()) return s;
  absl::Status s = Update(RecordName::Tenant(name), [&](Transaction& txn) {
    auto exists = txn.HasTenant(name);
    if (!exists.ok()) return exists.status();
    if (*exists) {
      return absl::AlreadyExistsError(absl::StrCat(TenantRef(name), " already exists"));
    }
    txn.PutTenant(name);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return TenantInfo{name, {}, {}};
}

absl::Status Keystore::DeleteTenant(const std::string& name) {
  if (absl::Status s = ValidateTenantName(name); !s.ok()) return s;
  return Update(RecordName::Tenant(name), [&](Transaction& txn) {
    if (absl::Status s = txn.RequireTenant(name); !s.ok()) return s;
    txn.Delete(RecordName::Tenant(name));
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<TenantInfo>> Keystore::ListTenants() const {
  std::vector<TenantInfo> out;
  for (const auto& [name, tenant] : snapshot()->tenants()) {
    if (name != kAdminTokensTenant) out.push_back(tenant->Info());
  }
  return out;
}

absl::StatusOr<IssuedToken> Keystore::IssueToken(const std::string& tenant,
                                                 const TokenRequest& request) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  if (absl::Status s = CheckDescription(request.description); !s.ok()) return s;
  if (absl::StatusOr<TokenAccess> access = TokenAccess::Create(request.scope); !access.ok()) {
    return access.status();
  }
  if (absl::Status s = CheckLifetime(request.ttl, "ttl"); !s.ok()) return s;
  if (absl::Status s = CheckLifetime(request.max_ttl, "max_ttl"); !s.ok()) return s;
  if (request.max_ttl != absl::ZeroDuration() &&
      (request.ttl == absl::ZeroDuration() || request.max_ttl < request.ttl)) {
    return absl::InvalidArgumentError(
        "max_ttl bounds renewals of an expiring token: it needs a ttl, and must be at "
        "least as long");
  }
  return StoreNewToken(tenant, [&](Transaction&, internal::Token& stored) {
    const int64_t now = NowUnix();
    StartToken(request, now, stored);
    for (Operation operation : request.scope.operations) {
      stored.add_operations(static_cast<internal::Operation>(operation));
    }
    for (const std::string& pattern : request.scope.keys) stored.add_key_patterns(pattern);
    if (request.max_ttl != absl::ZeroDuration()) {
      stored.set_max_expire_time_unix(now + absl::ToInt64Seconds(request.max_ttl));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<IssuedToken> Keystore::RenewToken(const std::string& tenant,
                                                 const std::string& token_id, absl::Duration ttl) {
  if (absl::Status s = CheckLifetime(ttl, "ttl"); !s.ok()) return s;
  return StoreNewToken(tenant, [&](Transaction& txn, internal::Token& successor) {
    // Read in the transaction: a revocation meanwhile makes the commit retry, and
    // the retry finds the token gone.
    absl::StatusOr<const internal::Token*> found = txn.FindToken(tenant, token_id);
    if (!found.ok()) return found.status();
    if (*found == nullptr) return absl::NotFoundError("this token was revoked");
    const internal::Token& token = **found;
    const int64_t now = NowUnix();
    if (token.expire_time_unix() == 0) {
      return absl::FailedPreconditionError("this token does not expire: there is nothing to renew");
    }
    if (token.expire_time_unix() <= now) return absl::UnauthenticatedError("token expired");
    int64_t lifetime = ttl == absl::ZeroDuration()
                           ? token.ttl_seconds()
                           : std::max<int64_t>(1, absl::ToInt64Seconds(ttl));
    if (lifetime <= 0) lifetime = token.expire_time_unix() - token.create_time_unix();
    int64_t expire = now + lifetime;
    if (token.max_expire_time_unix() != 0) {
      expire = std::min(expire, token.max_expire_time_unix());
    }
    if (token.max_expire_time_unix() != 0 &&
        token.expire_time_unix() >= token.max_expire_time_unix()) {
      return absl::FailedPreconditionError(
          "this token has reached its max_expire_time and cannot be renewed further; "
          "ask an admin for a new one");
    }
    successor.set_description(token.description());
    successor.set_create_time_unix(now);
    *successor.mutable_operations() = token.operations();
    *successor.mutable_key_patterns() = token.key_patterns();
    successor.set_ttl_seconds(token.ttl_seconds());
    successor.set_expire_time_unix(expire);
    successor.set_max_expire_time_unix(token.max_expire_time_unix());
    successor.set_renewed_from(token_id);
    return absl::OkStatus();
  });
}

absl::StatusOr<IssuedToken> Keystore::StoreNewToken(
    const std::string& tenant,
    const std::function<absl::Status(Transaction&, internal::Token&)>& fill) {
  auto token = GenerateToken();
  if (!token.ok()) return token.status();
  internal::Token stored;
  absl::Status s = Update(RecordName::Token(tenant, token->id), [&](Transaction& txn) {
    if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
    // Conditions the commit on the id being unused (64 random bits: it always is).
    auto taken = txn.HasToken(tenant, token->id);
    if (!taken.ok()) return taken.status();
    if (*taken) return absl::AbortedError("token id collision");
    stored.Clear();
    if (absl::Status s = fill(txn, stored); !s.ok()) return s;
    stored.set_id(token->id);
    stored.set_sha256(token->sha256);
    txn.PutToken(tenant, stored);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return IssuedToken{token->token, TokenInfoOf(stored)};
}

absl::Status Keystore::RevokeToken(const std::string& tenant, const std::string& token_id) {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  return DeleteToken(tenant, token_id);
}

absl::Status Keystore::DeleteToken(const std::string& tenant, const std::string& token_id) {
  // Not echoed: a token pasted in place of its id must not reach a log.
  const absl::Status no_such_token =
      tenant == kAdminTokensTenant ? absl::NotFoundError("admin token with that id not found")
                                   : absl::NotFoundError(absl::StrCat(
                                         "token with that id not found in ", TenantRef(tenant)));
  if (token_id.empty() || token_id.size() > 64) return no_such_token;
  return Update(RecordName::Token(tenant, token_id), [&](Transaction& txn) {
    if (tenant != kAdminTokensTenant) {
      if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
    }
    auto exists = txn.HasToken(tenant, token_id);
    if (!exists.ok()) return exists.status();
    if (!*exists) return no_such_token;
    txn.Delete(RecordName::Token(tenant, token_id));
    return absl::OkStatus();
  });
}

absl::StatusOr<IssuedToken> Keystore::IssueAdminToken(const TokenRequest& request, bool read_only) {
  if (absl::Status s = CheckDescription(request.description); !s.ok()) return s;
  if (absl::Status s = CheckLifetime(request.ttl, "ttl"); !s.ok()) return s;
  // The reserved tenant is made with the first admin token, in a commit of its own
  // (the etcd backend clears a new tenant's children in the commit that makes it).
  const std::string tenant(kAdminTokensTenant);
  absl::Status made = Update(RecordName::Tenant(tenant), [&](Transaction& txn) {
    auto exists = txn.HasTenant(tenant);
    if (!exists.ok()) return exists.status();
    if (!*exists) txn.PutTenant(tenant);
    return absl::OkStatus();
  });
  if (!made.ok()) return made;
  return StoreNewToken(tenant, [&](Transaction&, internal::Token& stored) {
    StartToken(request, NowUnix(), stored);
    stored.set_read_only(read_only);
    return absl::OkStatus();
  });
}

absl::Status Keystore::RevokeAdminToken(const std::string& token_id) {
  // A retirement marker stays: a retired bootstrap token comes back only as a new
  // one, from a restart with another --admin-token-file.
  if (absl::StartsWith(token_id, "bootstrap-")) {
    return absl::NotFoundError("admin token with that id not found");
  }
  return DeleteToken(std::string(kAdminTokensTenant), token_id);
}

absl::Status Keystore::RetireBootstrapAdminToken(const std::string& sha256) {
  // Checked on this replica's view: enough to stop an operator locking everyone out
  // by mistake, which is what it is for.
  const absl::Time now = absl::Now();
  bool writer_remains = false;
  for (const TokenInfo& token : ListAdminTokens()) {
    writer_remains = writer_remains || (!token.read_only && token.expire_time > now);
  }
  if (!writer_remains) {
    return absl::FailedPreconditionError(
        "retiring the bootstrap admin token would leave no admin token that may change "
        "the keystore; issue one first (IssueAdminToken)");
  }
  const std::string id =
      absl::StrCat("bootstrap-", absl::BytesToHexString(absl::string_view(sha256).substr(0, 8)));
  absl::Status s =
      Update(RecordName::Token(std::string(kAdminTokensTenant), id), [&](Transaction& txn) {
        auto exists = txn.HasToken(std::string(kAdminTokensTenant), id);
        if (!exists.ok()) return exists.status();
        if (*exists) return absl::OkStatus();  // retired already
        internal::Token marker;
        marker.set_id(id);
        marker.set_sha256(sha256);
        marker.set_description("retired bootstrap admin token");
        marker.set_create_time_unix(NowUnix());
        marker.set_retired(true);
        txn.PutToken(std::string(kAdminTokensTenant), marker);
        return absl::OkStatus();
      });
  return s;
}

std::vector<TokenInfo> Keystore::ListAdminTokens() const {
  std::vector<TokenInfo> out;
  std::shared_ptr<const Snapshot> snap = snapshot();
  const TenantEntry* admin = snap->FindTenant(kAdminTokensTenant);
  if (admin == nullptr) return out;
  for (const TokenInfo& token : admin->tokens) {
    if (absl::StartsWith(token.id, "bootstrap-")) continue;  // retirement markers
    out.push_back(token);
  }
  return out;
}

absl::StatusOr<KeyInfo> Keystore::CreateKey(const std::string& tenant, const std::string& key,
                                            KeyAlgorithm requested) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  internal::Algorithm algorithm = ToRecord(requested);
  if (algorithm == internal::ALGORITHM_UNSPECIFIED) algorithm = internal::AES_256_GCM;
  if (MaterialBytes(algorithm) == 0) {
    return absl::InvalidArgumentError("algorithm must be AES_128_GCM or AES_256_GCM");
  }
  auto material = RandomMaterial(algorithm);
  if (!material.ok()) return material.status();
  KeyInfo result;
  absl::Status s = Update(RecordName::Key(tenant, key), [&](Transaction& txn) {
    if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
    auto existing = txn.FindKey(tenant, key);
    if (!existing.ok()) return existing.status();
    if (*existing != nullptr) {
      return absl::AlreadyExistsError(absl::StrCat(KeyRef(tenant, key), " already exists"));
    }
    internal::Record record;
    internal::Key& created = *record.mutable_key();
    created.set_name(key);
    created.set_algorithm(algorithm);
    AddPrimaryVersion(created, material->span(), /*imported=*/false);
    txn.PutKey(tenant, created);
    result = InfoOf(tenant, created);
    WipeRecord(record);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<KeyInfo> Keystore::ImportKey(const std::string& tenant, const std::string& key,
                                            absl::Span<const uint8_t> material) {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  const internal::Algorithm algorithm = material.size() == 16   ? internal::AES_128_GCM
                                        : material.size() == 32 ? internal::AES_256_GCM
                                                                : internal::ALGORITHM_UNSPECIFIED;
  if (algorithm == internal::ALGORITHM_UNSPECIFIED) {
    return absl::InvalidArgumentError(
        absl::StrCat("key material must be 16 or 32 bytes, not ", material.size()));
  }
  // All zeros (an unset buffer) and other one-byte fills are mistakes, not keys. The
  // message says nothing of which byte it was.
  if (std::all_of(material.begin(), material.end(), [&](uint8_t b) { return b == material[0]; })) {
    return absl::InvalidArgumentError(
        "key material is one byte repeated (such as all zeros); import random bytes");
  }
  KeyInfo result;
  absl::Status s = Update(RecordName::Key(tenant, key), [&](Transaction& txn) {
    if (absl::Status s = txn.RequireTenant(tenant); !s.ok()) return s;
    auto existing = txn.FindKey(tenant, key);
    if (!existing.ok()) return existing.status();
    internal::Record record;
    internal::Key& imported = *record.mutable_key();
    if (*existing != nullptr) {
      if ((*existing)->algorithm() != algorithm) {
        return absl::InvalidArgumentError(absl::StrCat(
            KeyRef(tenant, key), " is ", internal::Algorithm_Name((*existing)->algorithm()), " (",
            MaterialBytes((*existing)->algorithm()), "-byte material), not ", material.size(),
            " bytes"));
      }
      imported = **existing;
    } else {
      imported.set_name(key);
      imported.set_algorithm(algorithm);
    }
    AddPrimaryVersion(imported, material, /*imported=*/true);
    txn.PutKey(tenant, imported);
    result = InfoOf(tenant, imported);
    WipeRecord(record);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<KeyInfo> Keystore::RotateKey(const std::string& tenant, const std::string& key) {
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    auto material = RandomMaterial(k.algorithm());
    if (!material.ok()) return material.status();
    AddPrimaryVersion(k, material->span(), /*imported=*/false);
    return true;
  });
}

absl::StatusOr<KeyInfo> Keystore::SetRotationPeriod(const std::string& tenant,
                                                    const std::string& key, absl::Duration period) {
  const absl::Duration min = state_->options.min_rotation_period;
  if (period != absl::ZeroDuration() && (period < min || period > absl::Hours(24 * 36525))) {
    return absl::InvalidArgumentError(
        absl::StrCat("a rotation period must be zero (never) or between ",
                     absl::FormatDuration(min), " (--min-rotation-period-seconds) and 100 years"));
  }
  const int64_t seconds = absl::ToInt64Seconds(period);
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    if (k.rotation_period_seconds() == seconds) return false;
    k.set_rotation_period_seconds(seconds);
    return true;
  });
}

namespace {

// When `key`'s next automatic rotation is due, or InfiniteFuture.
absl::Time RotationDue(const internal::Key& key) {
  if (key.rotation_period_seconds() <= 0) return absl::InfiniteFuture();
  for (const internal::KeyVersion& v : key.versions()) {
    if (v.version() == key.primary_version()) {
      return absl::FromUnixSeconds(v.create_time_unix() + key.rotation_period_seconds());
    }
  }
  return absl::InfiniteFuture();
}

}  // namespace

std::vector<std::string> Keystore::RotateDueKeys(absl::Time now) {
  std::vector<std::pair<std::string, std::string>> due;
  for (const auto& [tenant_name, tenant] : snapshot()->tenants()) {
    for (const auto& [key_name, key] : tenant->keys) {
      if (key->rotation_period > absl::ZeroDuration() &&
          key->primary_create_time + key->rotation_period <= now) {
        due.emplace_back(tenant_name, key_name);
      }
    }
  }
  std::vector<std::string> rotated;
  for (const auto& [tenant, key] : due) {
    bool rotated_here = false;
    absl::StatusOr<KeyInfo> info =
        UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
          rotated_here = false;
          // Read in the transaction: another replica may have rotated it already.
          if (RotationDue(k) > now) return false;
          auto material = RandomMaterial(k.algorithm());
          if (!material.ok()) return material.status();
          AddPrimaryVersion(k, material->span(), /*imported=*/false);
          rotated_here = true;
          return true;
        });
    if (!info.ok()) {
      // Retried at the next check; a conflict that outlasted the retries means
      // another replica is changing this key right now.
      Log("auto_rotation_failed", absl::IsAborted(info.status()) ? "info" : "warning")
          .Add("tenant", tenant)
          .Add("key", key)
          .Add("detail", info.status().ToString());
      continue;
    }
    if (rotated_here) {
      Log("key_rotated", "info")
          .Add("tenant", tenant)
          .Add("key", key)
          .Add("version", static_cast<int64_t>(info->primary_version))
          .Add("reason", "rotation_period");
      rotated.push_back(absl::StrCat(tenant, "/", key));
    }
  }
  return rotated;
}

int Keystore::DeleteExpiredTokens(absl::Time now) {
  std::vector<std::pair<std::string, TokenInfo>> expired;
  for (const auto& [tenant_name, tenant] : snapshot()->tenants()) {
    for (const TokenInfo& token : tenant->tokens) {
      if (token.expire_time + kExpiredTokenRetention <= now) {
        expired.emplace_back(tenant_name, token);
      }
    }
  }
  int deleted = 0;
  for (const auto& [tenant, token] : expired) {
    absl::Status status = DeleteToken(tenant, token.id);
    if (absl::IsNotFound(status)) continue;  // another replica was first
    if (!status.ok()) {
      Log("expired_token_delete_failed", "warning")
          .Add("tenant", tenant)
          .Add("token_id", token.id)
          .Add("detail", status.ToString());
      continue;
    }
    ++deleted;
    Log("expired_token_deleted")
        .Add("tenant", tenant)
        .Add("token_id", token.id)
        .Add("expire_time",
             absl::FormatTime(absl::RFC3339_sec, token.expire_time, absl::UTCTimeZone()));
  }
  return deleted;
}

absl::Duration Keystore::RotationCheckInterval() const {
  return std::clamp(state_->options.min_rotation_period / 10, absl::Milliseconds(100),
                    absl::Minutes(1));
}

absl::StatusOr<KeyInfo> Keystore::GetKey(const std::string& tenant, const std::string& key) const {
  if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
  auto snap = snapshot();
  if (snap->FindTenant(tenant) == nullptr) return TenantNotFound(tenant);
  const KeyEntry* entry = snap->FindKey(tenant, key);
  if (entry == nullptr) return KeyNotFound(tenant, key);
  return entry->Info();
}

absl::StatusOr<std::vector<KeyInfo>> Keystore::ListKeys(const std::string& tenant) const {
  if (absl::Status s = ValidateTenantName(tenant); !s.ok()) return s;
  auto snap = snapshot();
  const TenantEntry* entry = snap->FindTenant(tenant);
  if (entry == nullptr) return TenantNotFound(tenant);
  std::vector<KeyInfo> out;
  for (const auto& [name, key] : entry->keys) out.push_back(key->Info());
  return out;
}

absl::StatusOr<KeyInfo> Keystore::SetMinDecryptionVersion(const std::string& tenant,
                                                          const std::string& key,
                                                          uint32_t version) {
  if (version == 0) {
    if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
    return absl::InvalidArgumentError("the minimum decryption version must be >= 1");
  }
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    if (version < k.min_available_version()) {
      return absl::FailedPreconditionError(
          absl::StrCat(KeyRef(tenant, key), " versions below ", k.min_available_version(),
                       " were trimmed; the minimum decryption version cannot go below it"));
    }
    if (version > k.primary_version()) {
      return absl::FailedPreconditionError(absl::StrCat(
          KeyRef(tenant, key), " minimum decryption version ", version,
          " would be above its primary version ", k.primary_version(), "; rotate first"));
    }
    k.set_min_decryption_version(version);
    return true;
  });
}

absl::StatusOr<KeyInfo> Keystore::SetVersionState(const std::string& tenant, const std::string& key,
                                                  uint32_t version, VersionState requested) {
  const internal::KeyVersionState state = ToRecord(requested);
  if (state != internal::ENABLED && state != internal::DISABLED) {
    if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
    return absl::InvalidArgumentError("a version can only be set ENABLED or DISABLED");
  }
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    auto v = FindVersion(tenant, k, version);
    if (!v.ok()) return v.status();
    if ((*v)->state() == internal::DESTROYED) {
      return absl::FailedPreconditionError(
          absl::StrCat(KeyRef(tenant, key), " version ", version, " is destroyed"));
    }
    if (state == internal::DISABLED && version == k.primary_version()) {
      return RotateFirst(tenant, k, version);
    }
    if ((*v)->state() == state) return false;
    (*v)->set_state(state);
    return true;
  });
}

absl::StatusOr<KeyInfo> Keystore::TrimKey(const std::string& tenant, const std::string& key,
                                          uint32_t min_available_version) {
  if (min_available_version == 0) {
    if (absl::Status s = ValidateRef(tenant, key); !s.ok()) return s;
    return absl::InvalidArgumentError("the minimum available version must be >= 1");
  }
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    if (min_available_version > k.min_decryption_version()) {
      return absl::FailedPreconditionError(
          absl::StrCat(KeyRef(tenant, key), " versions from ", k.min_decryption_version(),
                       " still open; trimming below ", min_available_version,
                       " needs the minimum decryption version raised to it first"));
    }
    if (min_available_version <= std::max<uint32_t>(1, k.min_available_version())) {
      return false;  // already trimmed that far: nothing to write
    }
    // Kept versions move to the front by swapping pointers (no copy of their
    // material is left behind); the trimmed ones, wiped, are deleted from the end.
    auto* versions = k.mutable_versions();
    int kept = 0;
    for (int i = 0; i < versions->size(); ++i) {
      if (versions->Get(i).version() < min_available_version) {
        WipeMaterial(*versions->Mutable(i));
      } else {
        versions->SwapElements(i, kept++);
      }
    }
    versions->DeleteSubrange(kept, versions->size() - kept);
    k.set_min_available_version(min_available_version);
    return true;
  });
}

absl::StatusOr<KeyInfo> Keystore::DestroyVersion(const std::string& tenant, const std::string& key,
                                                 uint32_t version) {
  return UpdateKey(tenant, key, [&](internal::Key& k) -> absl::StatusOr<bool> {
    auto v = FindVersion(tenant, k, version);
    if (!v.ok()) return v.status();
    if ((*v)->state() == internal::DESTROYED) return false;  // idempotent: nothing to write
    if (version == k.primary_version()) return RotateFirst(tenant, k, version);
    WipeMaterial(**v);
    (*v)->set_state(internal::DESTROYED);
    return true;
  });
}

}  // namespace sealbox::server
