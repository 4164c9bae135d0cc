// The file backend: the file's modes, messages, generations and crash safety. The
// keystore's logic over it is tested in keystore_test.cc, with every backend.
#include "server/keystore/file/file_storage.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/keystore/keystore.h"
#include "server/keystore/testing/test_store.h"

namespace sealbox::server {
namespace {

using testing::RandomKek;
using ::testing::SizeIs;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

class FileStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = absl::StrCat(std::getenv("TEST_TMPDIR"), "/ks.XXXXXX");
    ASSERT_NE(mkdtemp(base.data()), nullptr);
    dir_ = base + "/data";  // not there yet: Prepare creates it
    path_ = dir_ + "/keystore.sbx";
  }

  FileStorageOptions Options() {
    FileStorageOptions options;
    options.data_dir = dir_;
    options.kek = kek_.Clone();
    return options;
  }

  static absl::StatusOr<std::unique_ptr<Keystore>> Open(FileStorageOptions options,
                                                        bool create = true) {
    auto storage = FileStorage::Create(std::move(options));
    if (!storage.ok()) return storage.status();
    KeystoreOpenOptions open;
    open.create = create;
    return Keystore::Open(*std::move(storage), std::move(open));
  }

  std::unique_ptr<Keystore> OpenOrDie(bool create = true) {
    auto keystore = Open(Options(), create);
    EXPECT_TRUE(keystore.ok()) << keystore.status();
    return keystore.ok() ? std::move(*keystore) : nullptr;
  }

  std::string dir_, path_;
  Kek kek_ = RandomKek();
};

TEST_F(FileStorageTest, CreatesAnEmptyKeystoreWithPrivateModes) {
  auto ks = OpenOrDie();
  EXPECT_EQ(ks->snapshot()->generation(), 1u);
  EXPECT_TRUE(ks->snapshot()->tenants().empty());
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(FileStorageTest, MissingFileIsNotFoundWithoutCreate) {
  auto ks = Open(Options(), /*create=*/false);
  EXPECT_TRUE(absl::IsNotFound(ks.status()));
  EXPECT_EQ(ks.status().message(), absl::StrCat("keystore ", path_, " does not exist"));
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(FileStorageTest, WrongKekIsAClearErrorAndLeavesTheFile) {
  ASSERT_TRUE(OpenOrDie()->tenants().CreateTenant("acme").ok());
  const std::string before = ReadAll(path_);
  FileStorageOptions options = Options();
  options.kek = RandomKek();
  auto ks = Open(std::move(options));
  EXPECT_TRUE(absl::IsFailedPrecondition(ks.status()));
  EXPECT_EQ(ks.status().message(),
            absl::StrCat("keystore ", path_, " was written with a different KEK"));
  EXPECT_EQ(ReadAll(path_), before);
}

TEST_F(FileStorageTest, ChangingTheKekRewrapsUnderTheNewOneAtOpen) {
  {
    auto old = OpenOrDie();
    ASSERT_TRUE(old->tenants().CreateTenant("acme").ok());
    ASSERT_TRUE(old->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  }
  const Kek old_kek = kek_.Clone();
  const std::string under_old = ReadAll(path_);
  kek_ = RandomKek();

  // The new KEK alone cannot read the file yet, and leaves it alone.
  EXPECT_TRUE(absl::IsFailedPrecondition(Open(Options()).status()));
  EXPECT_EQ(ReadAll(path_), under_old);

  // With the old one as the previous KEK: opened, and rewritten under the new one.
  FileStorageOptions both = Options();
  both.previous_kek = old_kek.Clone();
  auto changed = Open(std::move(both), /*create=*/false);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE((*changed)->rewrapped_at_open());
  EXPECT_NE((*changed)->snapshot()->FindKey("acme", "k"), nullptr);
  EXPECT_EQ((*changed)->snapshot()->generation(), 4u);  // the rewrap is a commit

  // Now the new KEK alone opens it, with nothing to rewrap, and the old one cannot.
  auto after = OpenOrDie(/*create=*/false);
  ASSERT_NE(after, nullptr);
  EXPECT_FALSE(after->rewrapped_at_open());
  EXPECT_NE(after->snapshot()->FindKey("acme", "k"), nullptr);
  FileStorageOptions old_only = Options();
  old_only.kek = old_kek.Clone();
  EXPECT_TRUE(absl::IsFailedPrecondition(Open(std::move(old_only), /*create=*/false).status()));

  // A replica that has both reloads a file an old replica wrote under the previous
  // KEK (a rolling update), and its next write is under the new KEK.
  WriteAll(path_ + ".new", under_old);
  ASSERT_EQ(rename((path_ + ".new").c_str(), path_.c_str()), 0);
  ASSERT_TRUE((*changed)->Refresh().ok());
  EXPECT_EQ((*changed)->snapshot()->generation(), 3u);
  ASSERT_TRUE((*changed)->tenants().CreateTenant("beta").ok());
  auto reopened = OpenOrDie(/*create=*/false);
  ASSERT_NE(reopened, nullptr);
  EXPECT_NE(reopened->snapshot()->FindTenant("beta"), nullptr);
}

TEST_F(FileStorageTest, DamagedFilesAreRefusedAndLeftAlone) {
  ASSERT_TRUE(OpenOrDie()->tenants().CreateTenant("acme").ok());
  const std::string good = ReadAll(path_);
  std::string flipped = good;
  flipped[flipped.size() / 2 + 32] ^= 1;
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  for (const std::string& bad :
       {flipped, bad_magic, good.substr(0, good.size() - 1), good.substr(0, 40), std::string()}) {
    WriteAll(path_, bad);
    auto ks = Open(Options(), /*create=*/true);
    EXPECT_TRUE(absl::IsDataLoss(ks.status())) << ks.status();
    EXPECT_EQ(ks.status().message(), absl::StrCat("keystore ", path_, " is damaged"));
    EXPECT_EQ(ReadAll(path_), bad);
  }
}

TEST_F(FileStorageTest, GenerationCountsCommittedChangesOnly) {
  auto ks = OpenOrDie();
  EXPECT_EQ(ks->snapshot()->generation(), 1u);
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  EXPECT_EQ(ks->snapshot()->generation(), 2u);
  EXPECT_FALSE(ks->tenants().CreateTenant("acme").ok());
  EXPECT_FALSE(ks->tenants().CreateTenant("Bad").ok());
  EXPECT_EQ(ks->snapshot()->generation(), 2u);
  ASSERT_TRUE(ks->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  EXPECT_EQ(ks->snapshot()->generation(), 3u);
}

TEST_F(FileStorageTest, FailedReloadKeepsTheOldSnapshot) {
  auto a = OpenOrDie();
  ASSERT_TRUE(a->tenants().CreateTenant("acme").ok());
  auto before = a->snapshot();
  std::string damaged = ReadAll(path_);
  damaged.back() ^= 1;
  WriteAll(path_ + ".new", damaged);
  ASSERT_EQ(rename((path_ + ".new").c_str(), path_.c_str()), 0);
  absl::Status s = a->Refresh();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_EQ(a->snapshot(), before);
  // And admin changes refuse to overwrite a damaged file.
  EXPECT_TRUE(absl::IsDataLoss(a->tenants().CreateTenant("beta").status()));
  EXPECT_EQ(ReadAll(path_), damaged);
}

TEST_F(FileStorageTest, FailedWriteLeavesOldFileAndSnapshot) {
  auto fail = std::make_shared<std::atomic<bool>>(false);
  FileStorageOptions options = Options();
  options.fail_before_rename_for_testing = [fail] { return fail->load(); };
  auto opened = Open(std::move(options));
  ASSERT_TRUE(opened.ok());
  auto& ks = *opened;
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  const std::string before = ReadAll(path_);
  auto snapshot = ks->snapshot();

  fail->store(true);
  EXPECT_FALSE(ks->tenants().CreateTenant("beta").ok());
  EXPECT_FALSE(ks->keys().CreateKey("acme", "k", KeyAlgorithm::kAes256Gcm).ok());
  EXPECT_EQ(ReadAll(path_), before);
  EXPECT_EQ(ks->snapshot(), snapshot);
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    files.push_back(entry.path().filename());
  }
  EXPECT_THAT(files, ::testing::UnorderedElementsAre("keystore.sbx", "keystore.lock"));

  fail->store(false);
  ASSERT_TRUE(ks->tenants().CreateTenant("beta").ok());
  EXPECT_EQ(ks->snapshot()->generation(), snapshot->generation() + 1);
  auto reopened = OpenOrDie(/*create=*/false);
  EXPECT_THAT(reopened->snapshot()->tenants(), SizeIs(2));
}

// A writer killed between writing its temp file and the rename leaves the temp file:
// a whole keystore, key versions destroyed later included. The next write removes it.
TEST_F(FileStorageTest, AKilledWritersTempFileIsRemovedByTheNextWrite) {
  auto ks = OpenOrDie();
  ASSERT_TRUE(ks->tenants().CreateTenant("acme").ok());
  WriteAll(path_ + ".tmp.999999", ReadAll(path_));
  ASSERT_TRUE(ks->tenants().CreateTenant("beta").ok());
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    files.push_back(entry.path().filename());
  }
  EXPECT_THAT(files, ::testing::UnorderedElementsAre("keystore.sbx", "keystore.lock"));
}

}  // namespace
}  // namespace sealbox::server
