#include "client/cli/output.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sealbox::client {
namespace {

class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern =
        std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
        "/output_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& name : Entries()) unlink((dir_ + "/" + name).c_str());
    rmdir(dir_.c_str());
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    DIR* dir = opendir(dir_.c_str());
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
    return names;
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static void WriteFile(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
  }

  static mode_t Mode(const std::string& path) {
    struct stat st;
    EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 07777;
  }

  std::string dir_;
};

TEST_F(OutputTest, DashAndEmptyAreStdout) {
  for (const char* path : {"", "-"}) {
    absl::StatusOr<std::unique_ptr<Output>> output = Output::Create(path);
    ASSERT_TRUE(output.ok()) << output.status();
    EXPECT_EQ((*output)->name(), "stdout");
    EXPECT_TRUE((*output)->Commit().ok());  // nothing to rename
  }
}

TEST_F(OutputTest, ANewFileAppearsOnlyAtCommitWithModeOwnerOnly) {
  const std::string target = Path("out");
  absl::StatusOr<std::unique_ptr<Output>> output = Output::Create(target);
  ASSERT_TRUE(output.ok()) << output.status();
  EXPECT_EQ((*output)->name(), target);
  ASSERT_TRUE((*output)->Write("hello, ").ok());
  ASSERT_TRUE((*output)->Write("sealbox").ok());
  // Until Commit, only the temporary file beside it: ".out.sealbox-XXXXXX".
  std::vector<std::string> entries = Entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].rfind(".out.sealbox-", 0), 0u) << entries[0];
  ASSERT_TRUE((*output)->Commit().ok());
  EXPECT_EQ(Entries(), std::vector<std::string>{"out"});
  EXPECT_EQ(Read(target), "hello, sealbox");
  EXPECT_EQ(Mode(target), 0600u);
}

TEST_F(OutputTest, WithoutCommitNothingIsLeftAndAnExistingFileIsKept) {
  WriteFile(Path("keep"), "old");
  {
    absl::StatusOr<std::unique_ptr<Output>> fresh = Output::Create(Path("fresh"));
    absl::StatusOr<std::unique_ptr<Output>> kept = Output::Create(Path("keep"));
    ASSERT_TRUE(fresh.ok() && kept.ok());
    ASSERT_TRUE((*fresh)->Write("partial").ok());
    ASSERT_TRUE((*kept)->Write("partial").ok());
  }  // destroyed uncommitted, as when a command fails
  EXPECT_EQ(Entries(), std::vector<std::string>{"keep"});
  EXPECT_EQ(Read(Path("keep")), "old");
}

TEST_F(OutputTest, ReplacingAFileKeepsItsMode) {
  WriteFile(Path("shared"), "old");
  ASSERT_EQ(chmod(Path("shared").c_str(), 0640), 0);
  absl::StatusOr<std::unique_ptr<Output>> output = Output::Create(Path("shared"));
  ASSERT_TRUE(output.ok()) << output.status();
  ASSERT_TRUE((*output)->Write("new").ok());
  ASSERT_TRUE((*output)->Commit().ok());
  EXPECT_EQ(Read(Path("shared")), "new");
  EXPECT_EQ(Mode(Path("shared")), 0640u);
}

TEST_F(OutputTest, ASymlinkStaysAndItsTargetIsReplaced) {
  WriteFile(Path("target"), "old");
  ASSERT_EQ(symlink("target", Path("link").c_str()), 0);
  absl::StatusOr<std::unique_ptr<Output>> output = Output::Create(Path("link"));
  ASSERT_TRUE(output.ok()) << output.status();
  ASSERT_TRUE((*output)->Write("new").ok());
  ASSERT_TRUE((*output)->Commit().ok());
  struct stat st;
  ASSERT_EQ(lstat(Path("link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(Read(Path("target")), "new");
}

TEST_F(OutputTest, ADeviceIsWrittenInPlace) {
  absl::StatusOr<std::unique_ptr<Output>> output = Output::Create("/dev/null");
  ASSERT_TRUE(output.ok()) << output.status();
  ASSERT_TRUE((*output)->Write("discarded").ok());
  EXPECT_TRUE((*output)->Commit().ok());
  EXPECT_TRUE(Entries().empty());
}

TEST_F(OutputTest, ADirectoryIsRefusedByName) {
  absl::StatusOr<std::unique_ptr<Output>> output = Output::Create(dir_);
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().message(), "cannot write " + dir_ + ": Is a directory");
}

TEST_F(OutputTest, AMissingDirectoryIsRefusedByName) {
  absl::StatusOr<std::unique_ptr<Output>> output = Output::Create(Path("no/such/file"));
  ASSERT_FALSE(output.ok());
  EXPECT_EQ(output.status().message(), "cannot create a temporary file beside " +
                                           Path("no/such/file") + ": No such file or directory");
}

}  // namespace
}  // namespace sealbox::client
