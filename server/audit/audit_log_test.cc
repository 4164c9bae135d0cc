#include "server/audit/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/audit/audit_testing.h"

namespace sealbox::server {
namespace {

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/", name);
}

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return absl::StrSplit(text.str(), '\n', absl::SkipEmpty());
}

// A counter's value in the Prometheus text, or -1 when the series is missing.
double Counter(const Metrics& metrics, const std::string& series) {
  std::smatch match;
  const std::string text = metrics.Render();
  const std::regex pattern("\n" + std::regex_replace(series, std::regex(R"([{}"])"), R"(\$&)") +
                           " ([0-9.e+]+)");
  return std::regex_search(text, match, pattern) ? std::stod(match[1]) : -1;
}

// Polls `condition` for up to 10 s (the writer flushes every 100 ms).
template <typename Condition>
bool Eventually(Condition condition) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

// The example record with request id "r<i>", to tell lines apart.
AuditRecord SealRecord(int i) {
  AuditRecord record = ExampleSealRecord();
  record.request_id = absl::StrCat("r", i);
  return record;
}

TEST(AuditRecordTest, IsOneLineOfJsonWithFixedFields) {
  AuditRecord record = SealRecord(7);
  record.client_request_id = "abc \"quoted\"";
  std::string line;
  AppendAuditLine(record, line);
  EXPECT_EQ(
      line,
      "{\"time\":\"2025-12-05T14:00:00.123456Z\",\"request_id\":\"r7\","
      "\"service\":\"sealbox.v1.Crypto\",\"method\":\"Seal\",\"code\":\"OK\","
      "\"latency_us\":52,\"peer\":\"ipv4:127.0.0.1:41234\",\"credential\":\"token\","
      "\"token_id\":\"9c1d0e5a7b3f2e11\",\"tenant\":\"acme\",\"key\":\"orders\",\"key_version\":3,"
      "\"request_bytes\":1035,\"response_bytes\":1085,"
      "\"client_request_id\":\"abc \\\"quoted\\\"\"}\n");
}

TEST(AuditRecordTest, TimesAreUtcWithSixDigitsOfMicroseconds) {
  for (const auto& [micros, text] : std::vector<std::pair<int64_t, std::string>>{
           {0, "1970-01-01T00:00:00.000000Z"},
           {1764943200000005, "2025-12-05T14:00:00.000005Z"},
           {1764943200999999, "2025-12-05T14:00:00.999999Z"},
           {1764943201000000, "2025-12-05T14:00:01.000000Z"},
           {-1, "1969-12-31T23:59:59.999999Z"}}) {
    AuditRecord record = SealRecord(1);
    record.time = absl::FromUnixMicros(micros);
    std::string line;
    AppendAuditLine(record, line);
    const std::string expected = "{\"time\":\"" + text + "\",";
    EXPECT_EQ(line.substr(0, expected.size()), expected) << micros;
  }
}

TEST(AuditRecordTest, BatchesListTheirKeys) {
  AuditRecord record = SealRecord(1);
  record.method = "SealBatch";
  record.key.clear();
  record.key_version = 0;
  record.items = 3;
  record.failed_items = 1;
  record.keys = {"a", "b"};
  record.code = absl::StatusCode::kOk;
  std::string line;
  AppendAuditLine(record, line);
  EXPECT_NE(line.find("\"items\":3,\"failed_items\":1,\"keys\":[\"a\",\"b\"]}"), std::string::npos)
      << line;
  record.keys_truncated = true;
  line.clear();
  AppendAuditLine(record, line);
  EXPECT_NE(line.find("\"keys\":[\"a\",\"b\"],\"keys_truncated\":true"), std::string::npos) << line;
}

TEST(AuditLevelTest, ParsesTheThreeLevels) {
  EXPECT_EQ(*ParseAuditLevel("off"), AuditLevel::kOff);
  EXPECT_EQ(*ParseAuditLevel("admin"), AuditLevel::kAdmin);
  EXPECT_EQ(*ParseAuditLevel("all"), AuditLevel::kAll);
  EXPECT_EQ(ParseAuditLevel("everything").status().message(),
            "--audit is off, admin or all, not \"everything\"");
}

TEST(AuditLogTest, WritesEveryRecordAsALineToAPrivateFile) {
  const std::string path = TempPath("audit-lines.log");
  Metrics metrics;
  std::vector<std::string> ids;
  {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open({.path = path}, &metrics);
    ASSERT_TRUE(log.ok()) << log.status();
    for (int i = 0; i < 2500; ++i) {
      AuditRecord record = SealRecord(i);
      record.request_id = (*log)->NextRequestId();
      ids.push_back(record.request_id);
      (*log)->Record(std::move(record));
    }
  }  // the destructor writes what is left
  const std::vector<std::string> lines = Lines(path);
  ASSERT_EQ(lines.size(), 2500u);
  for (size_t i = 0; i < lines.size(); ++i) {
    ASSERT_NE(lines[i].find("\"request_id\":\"" + ids[i] + "\""), std::string::npos);
  }
  // One prefix, sequence numbers in order.
  EXPECT_TRUE(std::regex_match(ids[0], std::regex("[0-9a-f]{16}-0{12}"))) << ids[0];
  EXPECT_EQ(ids[42].substr(0, 17), ids[0].substr(0, 17));
  EXPECT_EQ(ids[42].substr(17), "00000000002a");
  EXPECT_EQ(Counter(metrics, "sealbox_audit_lines_written_total"), 2500);
  struct stat info;
  ASSERT_EQ(stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
}

TEST(AuditLogTest, AnUnwritablePathIsRefusedAtStart) {
  Metrics metrics;
  absl::StatusOr<std::unique_ptr<AuditLog>> log =
      AuditLog::Open({.path = "/nonexistent-dir/audit.log"}, &metrics);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(),
            "cannot open --audit-log /nonexistent-dir/audit.log: No such file or directory");
}

TEST(AuditLogTest, ReopenFollowsLogrotatesRename) {
  const std::string path = TempPath("audit-rotated.log");
  const std::string rotated = path + ".1";
  Metrics metrics;
  absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open({.path = path}, &metrics);
  ASSERT_TRUE(log.ok()) << log.status();
  (*log)->Record(SealRecord(1));
  ASSERT_TRUE(Eventually([&] { return Lines(path).size() == 1; }));
  ASSERT_EQ(std::rename(path.c_str(), rotated.c_str()), 0);
  (*log)->Reopen();
  ASSERT_TRUE(Eventually([&] { return access(path.c_str(), F_OK) == 0; }));
  (*log)->Record(SealRecord(2));
  log->reset();
  ASSERT_EQ(Lines(rotated).size(), 1u);
  EXPECT_NE(Lines(rotated)[0].find("\"request_id\":\"r1\""), std::string::npos);
  ASSERT_EQ(Lines(path).size(), 1u);
  EXPECT_NE(Lines(path)[0].find("\"request_id\":\"r2\""), std::string::npos);
}

// /dev/full fails every write with ENOSPC, as a full disk does.
TEST(AuditLogTest, AFullDiskDropsLinesAndCountsThem) {
  Metrics metrics;
  absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::Open({.path = "/dev/full"}, &metrics);
  ASSERT_TRUE(log.ok()) << log.status();
  for (int i = 0; i < 10; ++i) (*log)->Record(SealRecord(i));
  EXPECT_TRUE(Eventually([&] {
    return Counter(metrics, "sealbox_audit_lines_dropped_total{reason=\"write_failed\"}") == 10;
  }));
  EXPECT_EQ(Counter(metrics, "sealbox_audit_lines_written_total"), 0);
}

// A writer stuck in write(2) (a pipe nobody reads) never holds a request up: past
// max_pending, records are dropped and counted.
TEST(AuditLogTest, AStuckWriterDropsRatherThanBlocks) {
  const std::string fifo = TempPath("audit.fifo");
  unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  Metrics metrics;
  absl::StatusOr<std::unique_ptr<AuditLog>> log =
      AuditLog::Open({.path = fifo, .max_pending = 100}, &metrics);
  ASSERT_TRUE(log.ok()) << log.status();
  // About 300 bytes a line: the pipe's 64 KiB fill and the writer blocks.
  const absl::Time start = absl::Now();
  for (int i = 0; i < 5000; ++i) {
    (*log)->Record(SealRecord(i));
    if (i % 500 == 0) absl::SleepFor(absl::Milliseconds(150));  // let it flush and stick
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(Eventually([&] {
    return Counter(metrics, "sealbox_audit_lines_dropped_total{reason=\"queue_full\"}") > 0;
  }));
  // Drain the pipe so the writer can finish.
  std::thread drain([reader] {
    char buffer[65536];
    int flags = fcntl(reader, F_GETFL);
    fcntl(reader, F_SETFL, flags & ~O_NONBLOCK);
    while (read(reader, buffer, sizeof(buffer)) > 0) {
    }
  });
  log->reset();  // closes the pipe's only writer: the drain reads to its end
  drain.join();
  close(reader);
}

}  // namespace
}  // namespace sealbox::server
