// Keystore at scale, for `tools/dev bench keystore`: writes a keystore of
// --tenants x --keys_per_tenant AES-256 keys (one version each, one token per tenant)
// straight through the file format, or with --etcd_endpoints into a fresh prefix of
// that etcd (one etcd key per record), then measures what loading and holding it
// costs:
//
//   store      the size of keystore.sbx, or the time the etcd import took
//   open       wall time of Keystore::Open (median of --opens fresh opens), and of
//              its two halves: the backend's Load (file: decrypt + parse; etcd:
//              paginated Range at one revision + unwrapping each record) and
//              Snapshot::Build
//   memory     VmRSS and heap in use (mallinfo2) before and after one loaded keystore,
//              each after malloc_trim; the peak (VmHWM) during that Open
//   seal       the first Seal on a key (its epoch is derived then) beside later ones
//   warm       what every key's derived epoch adds once each has sealed (--warm_all)
//   idle       two sweeps of the idle-time policy (Epochs::DropIdle) with no Seal between
//              them drop every epoch; then the first Seal on each sampled key again
//              (it derives a new epoch: the cost of a drop) (--drop_idle)
//
// and checks the targets: 100,000 keys load in under 3 s and use under 256 MiB. Then,
// with the loaded keystore released:
//
//   rotate     a KEK rotation (--rotate_kek): wall time of RewrapAll to a new KEK,
//              as a rotation runs it on a serving storage (the ring set, then the
//              rewrap; --rewrap_rate paces it), median of --rotations runs that go
//              to the new KEK and back, so that each rewraps every record; after
//              each, every record must be under the new KEK and load with it alone
// A tool, not a test: build it with -c opt; docs/PERFORMANCE.md has the figures.
#include <fcntl.h>
#include <malloc.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "crypto/aes_gcm.h"
#include "crypto/format/unary.h"
#include "crypto/secret/locked_memory.h"
#include "crypto/secret/secret_bytes.h"
#include "server/bench/stats.h"
#include "server/keystore/etcd/etcd_client.h"
#include "server/keystore/etcd/etcd_storage.h"
#include "server/keystore/etcd/layout.h"
#include "server/keystore/etcd/record_envelope.h"
#include "server/keystore/file/file_storage.h"
#include "server/keystore/kek_ring.h"
#include "server/keystore/keystore.h"
#include "server/keystore/keystore_file.h"
#include "server/keystore/snapshot.h"

ABSL_FLAG(int, tenants, 1000, "Tenants in the keystore.");
ABSL_FLAG(int, keys_per_tenant, 100, "AES-256 keys per tenant, one version each.");
ABSL_FLAG(int, opens, 3, "Fresh Keystore::Open calls timed; the median is reported.");
ABSL_FLAG(int, seal_keys, 1000, "Keys, spread over the keystore, whose Seals are timed.");
ABSL_FLAG(int, later_seals, 20, "Seals timed on each of those keys after the first.");
ABSL_FLAG(int, seal_bytes, 64, "Plaintext bytes per Seal.");
ABSL_FLAG(int, name_bytes, 0,
          "Pad tenant and key names to this many bytes (at most 64); 0: 12 and 8.");
ABSL_FLAG(std::vector<std::string>, etcd_endpoints, {},
          "Measure the etcd backend on this etcd (HOST:PORT,...) instead of the file.");
ABSL_FLAG(bool, warm_all, true,
          "Also seal once with every key and report the memory their epochs add.");
ABSL_FLAG(bool, drop_idle, true,
          "Then drop every idle epoch (two sweeps) and time the first Seals after.");
ABSL_FLAG(bool, rotate_kek, false,
          "Last, time RewrapAll of every record to a new KEK (a KEK rotation), checking "
          "that it leaves every record under the new KEK.");
ABSL_FLAG(int, rotations, 3,
          "KEK rotations timed with --rotate_kek, to the new KEK and back; the median "
          "is reported.");
ABSL_FLAG(double, rewrap_rate, 0,
          "Records per second each rotation rewraps at on etcd, as the server's "
          "--kek-rewrap-rate (the file ignores it); 0: as fast as it goes.");

namespace sealbox::scale {
namespace {

using Clock = std::chrono::steady_clock;
using server::bench::Median;

constexpr double kTargetOpenSeconds = 3;
constexpr double kTargetMiB = 256;
constexpr double kTargetRederiveSeconds = 50e-6;
constexpr int64_t kTargetKeys = 100000;
constexpr double kMiB = 1024.0 * 1024.0;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

[[noreturn]] void Fail(const std::string& what, const absl::Status& status) {
  std::fprintf(stderr, "keystore_scale: %s: %s\n", what.c_str(), status.ToString().c_str());
  std::exit(1);
}

std::string RandomString(size_t bytes) {
  std::string out(bytes, '\0');
  RAND_bytes(reinterpret_cast<uint8_t*>(out.data()), bytes);
  return out;
}

// ---- Memory, from /proc/self/status and glibc -----------------------------------

// A "VmRSS:" style field, in bytes; 0 when unreadable.
int64_t ProcStatusBytes(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) != 0) continue;
    int64_t kib = 0;
    std::istringstream(line.substr(std::strlen(field))) >> kib;
    return kib * 1024;
  }
  return 0;
}

// Resets VmHWM to the current RSS (Linux 4.0+); false where not allowed.
bool ResetPeakRss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";
  clear_refs.flush();
  return static_cast<bool>(clear_refs);
}

struct Memory {
  int64_t rss = 0;        // VmRSS
  int64_t heap = 0;       // malloc'd bytes in use, every arena plus mmapped chunks
  int64_t secret = 0;     // mapped for secrets (crypto/secret), locked or not
  int64_t heap_free = 0;  // free bytes malloc keeps (holes malloc_trim cannot return)
};

// Memory now, after handing every free page back to the kernel.
Memory MemoryNow() {
  malloc_trim(0);
  struct mallinfo2 info = mallinfo2();
  const crypto::SecretMemoryStats secret = crypto::LockedMemoryStats();
  return {ProcStatusBytes("VmRSS:"), static_cast<int64_t>(info.uordblks + info.hblkhd),
          static_cast<int64_t>(secret.locked_bytes + secret.unlocked_bytes),
          static_cast<int64_t>(info.fordblks)};
}

// ---- The keystore file -----------------------------------------------------------

// Short names fit in the string's inline buffer (15 bytes in libstdc++); longer ones
// (--name_bytes, up to 64) each cost a heap allocation per copy in the snapshot.
std::string Padded(std::string name) {
  const size_t bytes = std::clamp(absl::GetFlag(FLAGS_name_bytes), 0, 64);
  if (name.size() < bytes) name.append(bytes - name.size(), 'x');
  return name;
}
std::string TenantName(int t) { return Padded(absl::StrFormat("tenant-%05d", t)); }
std::string KeyName(int k) { return Padded(absl::StrFormat("key-%04d", k)); }

// Builds the file's contents directly: one admin call per key would rewrite the
// whole file 100,000 times.
server::KeystoreContents BuildContents(int tenants, int keys_per_tenant) {
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  server::KeystoreContents contents;
  contents.generation = 1;
  for (int t = 0; t < tenants; ++t) {
    internal::Tenant* tenant = contents.file.add_tenants();
    tenant->set_name(TenantName(t));
    internal::Token* token = tenant->add_tokens();
    token->set_id(absl::BytesToHexString(RandomString(8)));
    std::string secret = RandomString(32);
    std::string sha256(SHA256_DIGEST_LENGTH, '\0');
    SHA256(reinterpret_cast<const uint8_t*>(secret.data()), secret.size(),
           reinterpret_cast<uint8_t*>(sha256.data()));
    token->set_sha256(sha256);
    token->set_description("keystore_scale");
    token->set_create_time_unix(now);
    for (int k = 0; k < keys_per_tenant; ++k) {
      internal::Key* key = tenant->add_keys();
      key->set_name(KeyName(k));
      key->set_algorithm(internal::AES_256_GCM);
      key->set_primary_version(1);
      key->set_min_decryption_version(1);
      internal::KeyVersion* version = key->add_versions();
      version->set_version(1);
      version->set_state(internal::ENABLED);
      version->set_material(RandomString(32));
      version->set_imported(false);
      version->set_create_time_unix(now);
    }
  }
  return contents;
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  size_t done = 0;
  while (fd >= 0 && done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += n;
  }
  if (fd < 0 || done != bytes.size() || close(fd) != 0) {
    Fail(absl::StrCat("writing ", path), absl::InternalError(std::strerror(errno)));
  }
}

std::vector<uint8_t> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// ---- Measurements ----------------------------------------------------------------

// Where the keystore is kept for this run: `dir` (the file), or `prefix` on the
// etcd of --etcd_endpoints.
struct Store {
  std::string dir;
  std::string prefix;
  bool etcd() const { return !prefix.empty(); }
};

server::etcd::EtcdOptions EtcdOptionsOf() {
  server::etcd::EtcdOptions options;
  options.endpoints = absl::GetFlag(FLAGS_etcd_endpoints);
  options.request_timeout = absl::Seconds(30);
  return options;
}

std::unique_ptr<server::KeystoreStorage> StorageOf(const Store& store, const server::Kek& kek) {
  if (store.etcd()) {
    server::etcd::EtcdStorageOptions options;
    options.etcd = EtcdOptionsOf();
    options.prefix = store.prefix;
    options.kek = kek.Clone();
    auto storage = server::etcd::EtcdStorage::Create(std::move(options));
    if (!storage.ok()) Fail("EtcdStorage::Create", storage.status());
    return *std::move(storage);
  }
  server::FileStorageOptions options;
  options.data_dir = store.dir;
  options.kek = kek.Clone();
  auto storage = server::FileStorage::Create(std::move(options));
  if (!storage.ok()) Fail("FileStorage::Create", storage.status());
  return *std::move(storage);
}

std::unique_ptr<server::Keystore> OpenFresh(const Store& store, const server::Kek& kek) {
  auto keystore = server::Keystore::Open(StorageOf(store, kek));
  if (!keystore.ok()) Fail("Keystore::Open", keystore.status());
  return *std::move(keystore);
}

// Seconds per Seal, first (deriving the epoch) and later, on `keys`.
struct SealTimes {
  std::vector<double> first;
  std::vector<double> later;
};

SealTimes TimeSeals(const std::vector<const server::KeyEntry*>& keys, int later_seals,
                    size_t seal_bytes) {
  const std::vector<uint8_t> plaintext(seal_bytes, 0x5a);
  SealTimes times;
  auto seal = [&](const server::KeyEntry& key) {
    Clock::time_point start = Clock::now();
    absl::StatusOr<std::shared_ptr<crypto::EpochSubkey>> epoch = key.sealing->Current();
    if (!epoch.ok()) Fail("SealingEpoch::Current", epoch.status());
    auto sealed = (*epoch)->Seal(plaintext, {});
    double seconds = SecondsSince(start);
    if (!sealed.ok()) Fail("EpochSubkey::Seal", sealed.status());
    return seconds;
  };
  for (const server::KeyEntry* key : keys) times.first.push_back(seal(*key));
  for (int i = 0; i < later_seals; ++i) {
    for (const server::KeyEntry* key : keys) times.later.push_back(seal(*key));
  }
  return times;
}

// ---- KEK rotation ------------------------------------------------------------------

server::Kek RandomKek() {
  crypto::SecretBytes bytes(server::kKekBytes);
  RAND_bytes(bytes.data(), bytes.size());
  return *server::Kek::FromBytes(bytes.span());
}

// What a rotation to `current` sets: `current`, and `previous`, which the records
// are under until rewrapped.
std::shared_ptr<const server::KekRing> RingOf(const server::Kek& current,
                                              const server::Kek& previous) {
  std::vector<server::Kek> before;
  before.push_back(previous.Clone());
  return std::make_shared<const server::KekRing>(current.Clone(), std::move(before));
}

// The etcd prefix's record values (record_envelope.h: each starts "SBXR"), each of
// which must be under `kek`; their count.
uint64_t EtcdRecordsUnder(const Store& store, const server::Kek& kek) {
  auto client = server::etcd::EtcdClient::Create(EtcdOptionsOf());
  if (!client.ok()) Fail("EtcdClient::Create", client.status());
  etcdserverpb::RangeRequest request;
  request.set_key(store.prefix);
  request.set_range_end(server::etcd::PrefixEnd(store.prefix));
  request.set_limit(2000);
  uint64_t records = 0;
  while (true) {
    auto page = (*client)->Range(request);
    if (!page.ok()) Fail("Range", page.status());
    for (const mvccpb::KeyValue& kv : page->kvs()) {
      if (!absl::StartsWith(kv.value(), "SBXR")) continue;
      if (!server::etcd::RecordWrittenWithKek(kek, kv.value())) {
        Fail("after RewrapAll", absl::InternalError(absl::StrCat("etcd record ", kv.key(),
                                                                 " is not under the new KEK")));
      }
      ++records;
    }
    if (!page->more() || page->kvs_size() == 0) break;
    request.set_key(page->kvs(page->kvs_size() - 1).key() + '\0');
  }
  return records;
}

// Checks that the whole keystore is under `kek`: every etcd record value, or the
// file, carries its fingerprint; and a Load with `kek` alone opens every record and
// finds `keys` keys. Returns the records held, as RewrapAll counts them.
uint64_t CheckUnderKek(const Store& store, const std::string& path, const server::Kek& kek,
                       int64_t keys) {
  uint64_t records = 0;
  if (store.etcd()) {
    records = EtcdRecordsUnder(store, kek);
  } else if (!server::WrittenWithKek(kek, ReadWholeFile(path))) {
    Fail("after RewrapAll", absl::InternalError(absl::StrCat(path, " is not under the new KEK")));
  }
  auto contents = StorageOf(store, kek)->Load();
  if (!contents.ok()) Fail("Load with the new KEK alone", contents.status());
  int64_t loaded_keys = 0;
  for (const internal::Tenant& tenant : contents->file.tenants()) {
    loaded_keys += tenant.keys_size();
  }
  if (loaded_keys != keys) {
    Fail("Load with the new KEK alone",
         absl::InternalError(absl::StrCat("found ", loaded_keys, " keys of ", keys)));
  }
  return store.etcd() ? records : server::RecordsOf(contents->file).size();
}

// Seconds per RewrapAll, and the records each rewrapped.
struct RotationTimes {
  uint64_t records = 0;
  std::vector<double> seconds;
};

// Rotates `runs` times between `kek` and a new KEK, on one storage, as a rotation
// does on a serving one: the ring set, then RewrapAll alone timed. Prepare is not
// called (with previous KEKs in the ring, it rewraps too). Each run starts with
// every record under the other KEK, so each rewraps them all.
RotationTimes TimeRotations(const Store& store, const std::string& path, const server::Kek& kek,
                            int runs, int64_t keys) {
  std::vector<server::Kek> keks;
  keks.push_back(kek.Clone());
  keks.push_back(RandomKek());
  std::unique_ptr<server::KeystoreStorage> storage = StorageOf(store, kek);
  server::RewrapPace pace;
  pace.records_per_second = std::max(0.0, absl::GetFlag(FLAGS_rewrap_rate));
  RotationTimes times;
  for (int i = 0; i < runs; ++i) {
    const server::Kek& from = keks[i % 2];
    const server::Kek& to = keks[(i + 1) % 2];
    storage->keks().Set(RingOf(to, from));
    Clock::time_point start = Clock::now();
    absl::StatusOr<uint64_t> rewrapped = storage->RewrapAll(pace);
    times.seconds.push_back(SecondsSince(start));
    if (!rewrapped.ok()) Fail("RewrapAll", rewrapped.status());
    const uint64_t held = CheckUnderKek(store, path, to, keys);
    if (*rewrapped != held) {
      Fail("RewrapAll", absl::InternalError(
                            absl::StrCat("rewrapped ", *rewrapped, " of the ", held, " records")));
    }
    times.records = held;
  }
  return times;
}

std::string Mib(int64_t bytes) { return absl::StrFormat("%.1f MiB", bytes / kMiB); }
std::string Micros(double seconds) { return absl::StrFormat("%.1f us", seconds * 1e6); }

int Run() {
  const int tenants = absl::GetFlag(FLAGS_tenants);
  const int keys_per_tenant = absl::GetFlag(FLAGS_keys_per_tenant);
  const int opens = std::max(1, absl::GetFlag(FLAGS_opens));
  const int64_t keys = int64_t{tenants} * keys_per_tenant;
  if (tenants < 1 || keys_per_tenant < 1) {
    std::fprintf(stderr, "keystore_scale: --tenants and --keys_per_tenant must be >= 1\n");
    return 2;
  }
  auto implementation = crypto::DefaultImplementation();
  std::printf(
      "keystore_scale: Keystore::Open, memory, and first vs later Seals against the "
      "targets%s; %d tenants x %d keys = %lld keys (AES-256, 1 version each), %d tokens; "
      "crypto implementation: %s\n",
      absl::GetFlag(FLAGS_rotate_kek) ? ", then KEK rotations" : "", tenants, keys_per_tenant,
      static_cast<long long>(keys), tenants, implementation.ok() ? implementation->c_str() : "?");

  char dir_template[] = "/tmp/keystore_scale.XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    Fail("mkdtemp", absl::InternalError(std::strerror(errno)));
  }
  const std::string dir = dir_template;
  const std::string path = dir + "/keystore.sbx";
  Store store{dir, ""};
  if (!absl::GetFlag(FLAGS_etcd_endpoints).empty()) {
    store.prefix = absl::StrCat("/keystore-scale-", getpid(), "-", time(nullptr), "/");
  }
  crypto::SecretBytes kek_bytes(server::kKekBytes);
  RAND_bytes(kek_bytes.data(), kek_bytes.size());
  const server::Kek kek = *server::Kek::FromBytes(kek_bytes.span());

  // Write the keystore, then free everything that built it.
  Clock::time_point start = Clock::now();
  {
    server::KeystoreContents contents = BuildContents(tenants, keys_per_tenant);
    if (store.etcd()) {
      absl::Status imported = StorageOf(store, kek)->Import(contents);
      if (!imported.ok()) Fail("EtcdStorage::Import", imported);
    } else {
      auto bytes = server::SealKeystore(kek, contents);
      if (!bytes.ok()) Fail("SealKeystore", bytes.status());
      WriteFile(path, *bytes);
    }
  }
  const double write_seconds = SecondsSince(start);
  const std::vector<uint8_t> file = store.etcd() ? std::vector<uint8_t>() : ReadWholeFile(path);

  // Open: fresh each time, and its two halves on their own.
  std::vector<double> open_times, decrypt_times, build_times;
  for (int i = 0; i < opens; ++i) {
    start = Clock::now();
    std::unique_ptr<server::Keystore> keystore = OpenFresh(store, kek);
    open_times.push_back(SecondsSince(start));
  }
  for (int i = 0; i < opens; ++i) {
    start = Clock::now();
    auto contents = StorageOf(store, kek)->Load();
    if (!contents.ok()) Fail("Load", contents.status());
    decrypt_times.push_back(SecondsSince(start));
    start = Clock::now();
    crypto::Epochs epochs;
    auto snapshot = server::Snapshot::Build(*contents, nullptr, epochs);
    if (!snapshot.ok()) Fail("Snapshot::Build", snapshot.status());
    build_times.push_back(SecondsSince(start));
  }

  // Memory of one loaded keystore, held from here on.
  const Memory before = MemoryNow();
  const bool peak_known = ResetPeakRss();
  std::unique_ptr<server::Keystore> keystore = OpenFresh(store, kek);
  const int64_t peak_rss = ProcStatusBytes("VmHWM:");
  const Memory loaded = MemoryNow();
  std::shared_ptr<const server::Snapshot> snapshot = keystore->snapshot();

  // Seals on keys spread over the whole keystore.
  std::vector<const server::KeyEntry*> all_keys;
  all_keys.reserve(keys);
  for (const auto& [tenant_name, tenant] : snapshot->tenants()) {
    for (const auto& [key_name, key] : tenant->keys) all_keys.push_back(key.get());
  }
  const int seal_keys = std::clamp<int64_t>(absl::GetFlag(FLAGS_seal_keys), 1, all_keys.size());
  std::vector<const server::KeyEntry*> sample;
  for (int i = 0; i < seal_keys; ++i) {
    sample.push_back(all_keys[static_cast<size_t>(i) * all_keys.size() / seal_keys]);
  }
  const SealTimes seals =
      TimeSeals(sample, std::max(1, absl::GetFlag(FLAGS_later_seals)),
                static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_seal_bytes))));
  const Memory sampled = MemoryNow();

  Memory warm{};
  if (absl::GetFlag(FLAGS_warm_all)) {
    TimeSeals(all_keys, 1, 16);
    warm = MemoryNow();
  }

  // Two sweeps, nothing sealed between them: every epoch is idle for a whole period.
  size_t dropped = 0;
  SealTimes after_drop;
  Memory idle{};
  if (absl::GetFlag(FLAGS_drop_idle)) {
    keystore->epochs().DropIdle();
    dropped = keystore->epochs().DropIdle();
    idle = MemoryNow();
    after_drop =
        TimeSeals(sample, 1, static_cast<size_t>(std::max(0, absl::GetFlag(FLAGS_seal_bytes))));
  }

  // ---- Report ----------------------------------------------------------------------
  auto row = [](const std::string& name, const std::string& value) {
    std::printf("  %-28s %s\n", name.c_str(), value.c_str());
  };
  auto seconds_list = [](const std::vector<double>& v) {
    std::string out;
    for (double s : v) {
      absl::StrAppend(&out, out.empty() ? "" : ", ", absl::StrFormat("%.3f", s));
    }
    return out;
  };
  const double open_s = Median(open_times);
  const int64_t held_rss = loaded.rss - before.rss;
  const int64_t held_heap = loaded.heap - before.heap;
  std::printf("\n");
  if (store.etcd()) {
    row("etcd",
        absl::StrFormat("prefix %s on %s (imported in %.2f s)", store.prefix,
                        absl::StrJoin(absl::GetFlag(FLAGS_etcd_endpoints), ","), write_seconds));
  } else {
    row("file", absl::StrFormat("%s (%.0f bytes per key; written in %.2f s)", Mib(file.size()),
                                double(file.size()) / keys, write_seconds));
  }
  row("Keystore::Open (median)",
      absl::StrFormat("%.3f s  (runs: %s)", open_s, seconds_list(open_times)));
  row(store.etcd() ? "  Range pages + unwrap" : "  decrypt + parse",
      absl::StrFormat("%.3f s", Median(decrypt_times)));
  row("  Snapshot::Build", absl::StrFormat("%.3f s", Median(build_times)));
  row("held: RSS growth",
      absl::StrFormat("%s (%.0f bytes per key)", Mib(held_rss), double(held_rss) / keys));
  row("held: heap growth",
      absl::StrFormat("%s (%.0f bytes per key)", Mib(held_heap), double(held_heap) / keys));
  if (peak_known) {
    row("peak RSS during Open", absl::StrCat("+", Mib(peak_rss - before.rss)));
  }
  row("process RSS, loaded", Mib(loaded.rss));
  row(absl::StrFormat("first Seal (%d keys)", seal_keys),
      absl::StrFormat("median %s, max %s  (derives the epoch)", Micros(Median(seals.first)),
                      Micros(*std::max_element(seals.first.begin(), seals.first.end()))));
  row(absl::StrFormat("later Seal (%zu)", seals.later.size()),
      absl::StrFormat("median %s  (%d-byte plaintext)", Micros(Median(seals.later)),
                      absl::GetFlag(FLAGS_seal_bytes)));
  // Per epoch from the pass over every other key where there is one: the sample's
  // figure also carries one-time costs (OpenSSL's first HKDF, the allocator's growth).
  const int64_t rest = keys - seal_keys;
  const bool from_rest = absl::GetFlag(FLAGS_warm_all) && rest > 0;
  row("heap per derived epoch",
      absl::StrFormat("%.0f bytes (over %lld keys)",
                      from_rest ? double(warm.heap - sampled.heap) / rest
                                : double(sampled.heap - loaded.heap) / seal_keys,
                      static_cast<long long>(from_rest ? rest : seal_keys)));
  if (absl::GetFlag(FLAGS_warm_all)) {
    row("every key sealed once", absl::StrFormat("RSS +%s over loaded, process %s",
                                                 Mib(warm.rss - loaded.rss), Mib(warm.rss)));
    row("  of which secret memory", absl::StrFormat("+%s (%.0f bytes per key; %s of it locked)",
                                                    Mib(warm.secret - loaded.secret),
                                                    double(warm.secret - loaded.secret) / keys,
                                                    Mib(crypto::LockedMemoryStats().locked_bytes)));
    row("  and heap",
        absl::StrFormat("+%s in use, +%s free in malloc's arenas", Mib(warm.heap - loaded.heap),
                        Mib(warm.heap_free - loaded.heap_free)));
  }

  if (absl::GetFlag(FLAGS_drop_idle)) {
    row("idle: two sweeps",
        absl::StrFormat("dropped %zu epochs; process RSS %s (freed secret memory is "
                        "kept for the next epochs)",
                        dropped, Mib(idle.rss)));
    row(absl::StrFormat("first Seal after a drop (%d)", seal_keys),
        absl::StrFormat(
            "median %s, max %s  (derives a new epoch)", Micros(Median(after_drop.first)),
            Micros(*std::max_element(after_drop.first.begin(), after_drop.first.end()))));
  }

  const bool open_met = open_s < kTargetOpenSeconds;
  const bool memory_met = held_rss / kMiB < kTargetMiB;
  std::printf("\ntargets%s:\n",
              keys == kTargetKeys ? "" : " (set for 100,000 keys; this run has another count)");
  std::printf("  %-28s %-10s %s\n", "loads in under 3 s", absl::StrFormat("%.2f s", open_s).c_str(),
              open_met ? "met" : "MISSED");
  std::printf("  %-28s %-10s %s\n", "uses under 256 MiB",
              absl::StrFormat("%.0f MiB", held_rss / kMiB).c_str(), memory_met ? "met" : "MISSED");
  // Issue 18's: the same 256 MiB with every key sealed once, and a first Seal after a
  // drop under 50 us (median over the sample).
  bool warm_met = true, redrive_met = true;
  if (absl::GetFlag(FLAGS_warm_all)) {
    const int64_t warm_rss = warm.rss - before.rss;
    warm_met = warm_rss / kMiB < kTargetMiB;
    std::printf("  %-28s %-10s %s\n", "every key sealed, < 256 MiB",
                absl::StrFormat("%.0f MiB", warm_rss / kMiB).c_str(), warm_met ? "met" : "MISSED");
  }
  if (absl::GetFlag(FLAGS_drop_idle)) {
    const double median = Median(after_drop.first);
    redrive_met = median < kTargetRederiveSeconds;
    std::printf("  %-28s %-10s %s\n", "Seal after a drop < 50 us", Micros(median).c_str(),
                redrive_met ? "met" : "MISSED");
  }

  keystore.reset();
  snapshot.reset();
  if (absl::GetFlag(FLAGS_rotate_kek)) {
    const int runs = std::max(1, absl::GetFlag(FLAGS_rotations));
    const RotationTimes rotations = TimeRotations(store, path, kek, runs, keys);
    const double rewrap_s = Median(rotations.seconds);
    const double rate = absl::GetFlag(FLAGS_rewrap_rate);
    const std::string pace =
        rate > 0 && store.etcd() ? absl::StrFormat("paced at %.0f records/s", rate) : "unpaced";
    std::printf("\nKEK rotation (RewrapAll to a new KEK, then back; %s):\n", pace.c_str());
    row("records rewrapped per run",
        absl::StrFormat("%llu (every record; each run left all under the new KEK)",
                        static_cast<unsigned long long>(rotations.records)));
    row(absl::StrFormat("RewrapAll (median of %d)", runs),
        absl::StrFormat("%.3f s  (runs: %s)", rewrap_s, seconds_list(rotations.seconds)));
    row("records per second", absl::StrFormat("%.0f", rotations.records / rewrap_s));
  }

  unlink(path.c_str());
  unlink((dir + "/keystore.lock").c_str());
  rmdir(dir.c_str());
  if (store.etcd()) {
    std::printf("\n(the keystore stays under etcd prefix %s; the etcd is the caller's)\n",
                store.prefix.c_str());
  }
  return open_met && memory_met && warm_met && redrive_met ? 0 : 1;
}

}  // namespace
}  // namespace sealbox::scale

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Writes a keystore of --tenants x --keys_per_tenant keys in a temporary "
      "directory and measures Keystore::Open, its memory, and first vs later Seals; "
      "with --rotate_kek, then a KEK rotation's rewrap of every record.");
  absl::ParseCommandLine(argc, argv);
  return sealbox::scale::Run();
}
