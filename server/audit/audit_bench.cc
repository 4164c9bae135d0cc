// What auditing costs, piece by piece: formatting a line (the writer thread's work)
// and Record() (the request's). `bazel run -c opt //server/audit:audit_bench`.
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "server/audit/audit_log.h"
#include "server/audit/audit_testing.h"

namespace sealbox::server {
namespace {

void BM_AppendAuditLine(benchmark::State& state) {
  const AuditRecord record = ExampleSealRecord();
  std::string out;
  for (auto _ : state) {
    out.clear();
    AppendAuditLine(record, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_AppendAuditLine);

void BM_NextRequestId(benchmark::State& state) {
  Metrics metrics;
  std::unique_ptr<AuditLog> log = *AuditLog::Open({.path = "/dev/null"}, &metrics);
  for (auto _ : state) benchmark::DoNotOptimize(log->NextRequestId());
}
BENCHMARK(BM_NextRequestId);

// A request's share: build the record, queue it (the writer, on /dev/null, runs
// beside on another thread).
void BM_RecordToDevNull(benchmark::State& state) {
  static Metrics* metrics = new Metrics;
  static AuditLog* log = AuditLog::Open({.path = "/dev/null"}, metrics)->release();
  for (auto _ : state) {
    AuditRecord record = ExampleSealRecord();
    record.request_id = log->NextRequestId();
    log->Record(std::move(record));
  }
}
BENCHMARK(BM_RecordToDevNull)->Threads(1)->Threads(4);

}  // namespace
}  // namespace sealbox::server

BENCHMARK_MAIN();
