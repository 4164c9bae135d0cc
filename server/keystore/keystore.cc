#include "server/keystore/keystore.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <random>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

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

}  // namespace

struct Keystore::State : public StorageListener {
  State(std::unique_ptr<KeystoreStorage> s, KeystoreOpenOptions o)
      : storage(std::move(s)),
        options(std::move(o)),
        epochs(options.epochs),
        snapshot(Snapshot::Empty()),
        freshness(options.max_staleness, storage->Describe()) {}

  // StorageListener: the store's thread tells us what changed.
  void Reload(const KeystoreContents& contents) override {
    reloads.fetch_add(1, std::memory_order_relaxed);
    absl::MutexLock lock(&mu);
    auto next = Snapshot::Build(contents, std::atomic_load(&snapshot).get(), epochs);
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
    auto next = current->With(changes, revision, epochs);
    if (!next.ok()) {
      // Only a hand edit of the store can get here; the rest of the keystore goes on.
      Log("keystore_change_refused", "error")
          .Add("revision", static_cast<int64_t>(revision))
          .Add("error", next.status().message());
      next = current->With({}, revision, epochs);
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
    auto built = Snapshot::Build(*contents, nullptr, epochs);
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
  crypto::Epochs epochs;
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

Keystore::Keystore(std::unique_ptr<State> state)
    : state_(std::move(state)),
      tenants_(*this),
      keys_(*this),
      tokens_(*this),
      transfers_(*this, keys_) {}

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

crypto::Epochs& Keystore::epochs() { return state_->epochs; }

std::string Keystore::Describe() const { return state_->storage->Describe(); }

StoreKeks& Keystore::keks() { return state_->storage->keks(); }

absl::StatusOr<uint64_t> Keystore::RewrapAll(const RewrapPace& pace) {
  return state_->storage->RewrapAll(pace);
}

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

std::shared_ptr<const Snapshot> Keystore::CaughtUp() {
  if (!CatchUp().ok()) return nullptr;
  return snapshot();
}

absl::Status Keystore::Update(const RecordName& lock,
                              const std::function<absl::Status(KeystoreTransaction&)>& change) {
  if (absl::Status s = Writable(); !s.ok()) return s;
  absl::MutexLock writer(&state_->WriterLock(lock));
  thread_local std::minstd_rand jitter(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    auto storage_txn = state_->storage->Begin();
    if (!storage_txn.ok()) return storage_txn.status();
    KeystoreTransaction txn(**storage_txn);
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

absl::Duration Keystore::min_rotation_period() const { return state_->options.min_rotation_period; }

}  // namespace sealbox::server
