// The audit log: one JSON line per request (audit_record.h), to a file or stderr.
//
// Requests never wait for it. Record() queues the record under a short lock; a
// writer thread formats what has queued and writes it in one write(2) every
// kFlushInterval, or sooner once kFlushLines are waiting. When the writer falls
// behind (more than max_pending records queued) or a write fails (a full disk),
// lines are dropped and counted in sealbox_audit_lines_dropped_total; the request
// ids' sequence numbers show where. Reopen() (SIGHUP) makes the writer open the
// path afresh before its next write, for logrotate's rename-then-signal.
#ifndef SEALBOX_SERVER_AUDIT_AUDIT_LOG_H_
#define SEALBOX_SERVER_AUDIT_AUDIT_LOG_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/audit/audit_record.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// Which requests are audited (--audit).
enum class AuditLevel { kOff, kAdmin, kAll };
absl::StatusOr<AuditLevel> ParseAuditLevel(absl::string_view text);

struct AuditLogOptions {
  std::string path = "-";  // "-": standard error
  size_t max_pending = 100000;
};

class AuditLog {
 public:
  static constexpr absl::Duration kFlushInterval = absl::Milliseconds(100);
  static constexpr size_t kFlushLines = 1024;

  // Opens (creates, mode 0600, appending) the file. Errors name the path and why.
  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(AuditLogOptions options, Metrics* metrics);
  // Writes what is queued, then closes.
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // A new request id: a random per-process prefix and a sequence number in hex,
  // "3f09c2d17a5b4e01-00000000002a": unique across replicas and restarts, ordered
  // within one process.
  std::string NextRequestId();

  // Queues the record; never blocks on I/O.
  void Record(AuditRecord record);

  // The next write goes to the path opened afresh (standard error: nothing to do).
  void Reopen();

 private:
  AuditLog(AuditLogOptions options, int fd, Metrics* metrics);
  bool ShouldWrite() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WriteLoop();
  void ReopenNow();
  // Writes `lines` lines in `text`, or counts them dropped.
  void WriteLines(const std::string& text, size_t lines);

  const AuditLogOptions options_;
  Metrics* const metrics_;
  const std::string id_prefix_;
  std::atomic<uint64_t> next_sequence_{0};
  int fd_;                // the writer thread's (and the destructor's, once it has stopped)
  bool failing_ = false;  // the last write failed (writer thread only)
  absl::Mutex mu_;
  std::vector<AuditRecord> pending_ ABSL_GUARDED_BY(mu_);
  bool reopen_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread writer_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_AUDIT_AUDIT_LOG_H_
