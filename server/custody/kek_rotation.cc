#include "server/custody/kek_rotation.h"

#include <openssl/rand.h>

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/custody/sealed_kek.h"

namespace sealbox::server::custody {
namespace {

std::string FingerprintHex(const Kek& kek) {
  const KekFingerprint fingerprint = FingerprintOf(kek);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(fingerprint.data()), fingerprint.size()));
}

}  // namespace

KekRotation::KekRotation(RootKey* root_key, SealedKekStore* store, SealedKekSource* source,
                         Keystore* keystore, KekRotationOptions options, OnEvent on_event)
    : root_key_(root_key),
      store_(store),
      source_(source),
      keystore_(keystore),
      options_(options),
      on_event_(std::move(on_event)) {
  checker_ = std::thread([this] { CheckLoop(); });
}

KekRotation::~KekRotation() {
  stop_.Notify();
  checker_.join();
  std::thread worker;
  {
    absl::MutexLock lock(&mu_);
    worker = std::move(worker_);
  }
  if (worker.joinable()) worker.join();
}

absl::StatusOr<SealedKekStore::Stored> KekRotation::ReadStored() {
  absl::StatusOr<std::optional<SealedKekStore::Stored>> stored = store_->Read();
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the sealed KEK at ", store_->Describe(), " is gone"));
  }
  return **std::move(stored);
}

absl::StatusOr<KekStatus> KekRotation::Status() {
  absl::StatusOr<SealedKekStore::Stored> stored = ReadStored();
  if (!stored.ok()) return stored.status();
  absl::StatusOr<SealedKekInfo> info = InfoOf(stored->bytes, store_->Describe());
  if (!info.ok()) return info.status();
  KekStatus status;
  status.root_key = root_key_->Describe();
  status.sealed_at = store_->Describe();
  status.fingerprint = info->fingerprint;
  status.created = info->created;
  status.previous_keks = info->previous;
  if (options_.period > absl::ZeroDuration())
    status.next_rotation = info->created + options_.period;
  absl::MutexLock lock(&mu_);
  status.rewrapping = rewrapping_;
  status.records_rewrapped = records_rewrapped_;
  status.last_error = last_error_;
  return status;
}

absl::StatusOr<KekStatus> KekRotation::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (rewrapping_) {
      return absl::FailedPreconditionError("a KEK rotation is rewrapping on this replica now");
    }
  }
  absl::StatusOr<SealedKekStore::Stored> stored = ReadStored();
  if (!stored.ok()) return stored.status();
  absl::StatusOr<SealedKekInfo> info = InfoOf(stored->bytes, store_->Describe());
  if (!info.ok()) return info.status();
  if (info->previous > 0) {
    absl::MutexLock lock(&mu_);
    StartFinishing();
    return absl::FailedPreconditionError(
        "the last KEK rotation is not finished (records may still be under the KEK before); "
        "it is finishing now: see GetKekStatus");
  }
  crypto::SecretBytes bytes(kKekBytes);
  if (RAND_bytes(bytes.data(), bytes.size()) != 1) return absl::InternalError("RAND_bytes failed");
  absl::StatusOr<Kek> next = Kek::FromBytes(bytes.span());
  if (!next.ok()) return next.status();
  absl::StatusOr<std::string> sealed = SealNextKek(*root_key_, *next, absl::Now(), stored->bytes);
  if (!sealed.ok()) return sealed.status();
  absl::StatusOr<SealedKekStore::Stored> replaced = store_->Replace(*stored, *sealed);
  if (absl::IsAborted(replaced.status())) {
    return absl::AbortedError("another replica changed the KEK just now; see GetKekStatus");
  }
  if (!replaced.ok()) return replaced.status();
  // From here the new KEK is in force everywhere: writes under the old one fail
  // their condition and are made again under the new one.
  absl::StatusOr<std::shared_ptr<const KekRing>> ring = source_->Adopt(*replaced);
  if (ring.ok()) keystore_->keks().Set(*ring);
  on_event_("kek_rotation_started", absl::OkStatus(), FingerprintHex(*next));
  {
    absl::MutexLock lock(&mu_);
    StartFinishing();
  }
  return Status();
}

void KekRotation::StartFinishing() {
  if (rewrapping_ || stop_.HasBeenNotified()) return;
  if (worker_.joinable()) worker_.join();  // the last one, finished
  rewrapping_ = true;
  records_rewrapped_ = 0;
  last_error_.clear();
  worker_ = std::thread([this] { Finish(); });
}

void KekRotation::Finish() {
  absl::Status outcome;
  std::string fingerprint;
  uint64_t rewrapped = 0;
  // Retiring the old KEK can lose a race to another replica retiring it, or starting
  // the next rotation: look again, a few times.
  for (int attempt = 0; attempt < 5 && !stop_.HasBeenNotified(); ++attempt) {
    // The KEKs in force now, so that the rewrap is under the newest.
    absl::StatusOr<std::shared_ptr<const KekRing>> ring = keystore_->keks().Refresh();
    if (!ring.ok()) {
      outcome = ring.status();
      break;
    }
    fingerprint = FingerprintHex((*ring)->current);
    RewrapPace pace;
    pace.records_per_second = options_.rewrap_records_per_second;
    pace.cancelled = [this] { return stop_.HasBeenNotified(); };
    pace.progress = [this, before = rewrapped](uint64_t done) {
      absl::MutexLock lock(&mu_);
      records_rewrapped_ = before + done;
    };
    absl::StatusOr<uint64_t> count = keystore_->RewrapAll(pace);
    if (!count.ok()) {
      outcome = count.status();
      break;
    }
    rewrapped += *count;
    {
      absl::MutexLock lock(&mu_);
      records_rewrapped_ = rewrapped;
    }
    absl::StatusOr<SealedKekStore::Stored> stored = ReadStored();
    if (!stored.ok()) {
      outcome = stored.status();
      break;
    }
    absl::StatusOr<SealedKekInfo> info = InfoOf(stored->bytes, store_->Describe());
    if (!info.ok()) {
      outcome = info.status();
      break;
    }
    if (info->fingerprint != fingerprint) continue;  // a newer KEK meanwhile: rewrap to it
    if (info->previous == 0) break;                  // another replica retired the old one
    absl::StatusOr<std::string> dropped = DropPreviousKeks(stored->bytes);
    if (!dropped.ok()) {
      outcome = dropped.status();
      break;
    }
    absl::StatusOr<SealedKekStore::Stored> replaced = store_->Replace(*stored, *dropped);
    if (absl::IsAborted(replaced.status())) continue;
    if (!replaced.ok()) {
      outcome = replaced.status();
      break;
    }
    if (auto adopted = source_->Adopt(*replaced); adopted.ok()) keystore_->keks().Set(*adopted);
    on_event_("kek_rotation_finished", absl::OkStatus(), fingerprint);
    break;
  }
  if (!outcome.ok() && !stop_.HasBeenNotified()) {
    on_event_("kek_rotation_failed", outcome, fingerprint);
  }
  absl::MutexLock lock(&mu_);
  rewrapping_ = false;
  if (!outcome.ok()) last_error_ = std::string(outcome.message());
}

void KekRotation::CheckLoop() {
  Check();  // at once: a rotation a kill left unfinished
  while (!stop_.WaitForNotificationWithTimeout(options_.check_interval)) Check();
}

void KekRotation::Check() {
  // The KEKs in force, adopted: this replica learns of a rotation another started
  // before it meets a record under the new KEK, and lets the old KEK go from memory
  // once a rotation is finished (one store read; an HSM call only when it changed).
  absl::StatusOr<SealedKekStore::Stored> stored = ReadStored();
  if (!stored.ok()) return;  // the store is unreachable: the next check
  absl::StatusOr<std::shared_ptr<const KekRing>> ring = source_->Adopt(*stored);
  if (!ring.ok()) return;  // the HSM: the next check
  keystore_->keks().Set(*ring);
  absl::StatusOr<SealedKekInfo> info = InfoOf(stored->bytes, store_->Describe());
  if (!info.ok()) return;
  if (info->previous > 0) {
    absl::MutexLock lock(&mu_);
    StartFinishing();
    return;
  }
  if (options_.period > absl::ZeroDuration() && info->created + options_.period <= absl::Now()) {
    // Every replica may find it due; the store lets one of them start it.
    absl::StatusOr<KekStatus> started = Start();
    if (!started.ok() && !absl::IsAborted(started.status())) {
      on_event_("kek_rotation_failed", started.status(), info->fingerprint);
    }
  }
}

}  // namespace sealbox::server::custody
