#include "server/audit/audit_log.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/log.h"

namespace sealbox::server {
namespace {

constexpr int kOpenFlags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC;

// Who called, with what, is for the operators alone: the file is the owner's.
constexpr mode_t kFileMode = 0600;

std::string RandomPrefix() {
  uint64_t bits = 0;
  if (getrandom(&bits, sizeof(bits), 0) != sizeof(bits)) {
    bits = static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) ^
           (static_cast<uint64_t>(getpid()) << 32);
  }
  return absl::StrCat(absl::Hex(bits, absl::kZeroPad16));
}

}  // namespace

absl::StatusOr<AuditLevel> ParseAuditLevel(absl::string_view text) {
  if (text == "off") return AuditLevel::kOff;
  if (text == "admin") return AuditLevel::kAdmin;
  if (text == "all") return AuditLevel::kAll;
  return absl::InvalidArgumentError(
      absl::StrCat("--audit is off, admin or all, not \"", text, "\""));
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(AuditLogOptions options,
                                                         Metrics* metrics) {
  int fd = STDERR_FILENO;
  if (options.path != "-") {
    fd = open(options.path.c_str(), kOpenFlags, kFileMode);
    if (fd < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot open --audit-log ", options.path, ": ", std::strerror(errno)));
    }
  }
  return std::unique_ptr<AuditLog>(new AuditLog(std::move(options), fd, metrics));
}

AuditLog::AuditLog(AuditLogOptions options, int fd, Metrics* metrics)
    : options_(std::move(options)), metrics_(metrics), id_prefix_(RandomPrefix()), fd_(fd) {
  writer_ = std::thread([this] { WriteLoop(); });
}

AuditLog::~AuditLog() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
  if (fd_ != STDERR_FILENO) close(fd_);
}

std::string AuditLog::NextRequestId() {
  const uint64_t sequence = next_sequence_.fetch_add(1, std::memory_order_relaxed);
  return absl::StrCat(id_prefix_, "-", absl::Hex(sequence, absl::kZeroPad12));
}

void AuditLog::Record(AuditRecord record) {
  {
    absl::MutexLock lock(&mu_);
    if (pending_.size() < options_.max_pending) {
      pending_.push_back(std::move(record));
      return;
    }
  }
  metrics_->CountAuditLinesDropped("queue_full", 1);
}

void AuditLog::Reopen() {
  absl::MutexLock lock(&mu_);
  reopen_ = true;
}

bool AuditLog::ShouldWrite() const {
  return stopping_ || reopen_ || pending_.size() >= kFlushLines;
}

void AuditLog::WriteLoop() {
  std::vector<AuditRecord> batch;
  std::string text;
  for (bool last = false; !last;) {
    bool reopen = false;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(this, &AuditLog::ShouldWrite), kFlushInterval);
      batch.swap(pending_);
      reopen = std::exchange(reopen_, false);
      last = stopping_;
    }
    // Lines queued before the signal may land in the new file: logrotate's
    // rename-then-signal loses nothing either way.
    if (reopen) ReopenNow();
    if (batch.empty()) continue;
    text.clear();
    for (const AuditRecord& record : batch) AppendAuditLine(record, text);
    WriteLines(text, batch.size());
    batch.clear();
  }
}

void AuditLog::WriteLines(const std::string& text, size_t lines) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd_, text.data() + done, text.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // A full disk, say: these lines are lost (a partial line may be left), and
    // requests go on. Said once per failing spell, not once per write.
    if (!failing_) {
      Log("audit_write_failed", "error")
          .Add("path", options_.path)
          .Add("error", n < 0 ? std::strerror(errno) : "wrote nothing");
    }
    failing_ = true;
    metrics_->CountAuditLinesDropped("write_failed", lines);
    return;
  }
  if (failing_) Log("audit_write_recovered").Add("path", options_.path);
  failing_ = false;
  metrics_->CountAuditLinesWritten(lines);
}

void AuditLog::ReopenNow() {
  if (options_.path == "-") return;
  const int fd = open(options_.path.c_str(), kOpenFlags, kFileMode);
  if (fd < 0) {
    // Keep writing where we were: better the old file than nothing.
    Log("audit_reopen_failed", "error")
        .Add("path", options_.path)
        .Add("error", std::strerror(errno));
    return;
  }
  close(fd_);
  fd_ = fd;
  Log("audit_log_reopened").Add("path", options_.path);
}

}  // namespace sealbox::server
