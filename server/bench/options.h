// The load generator's settings. load_generator_main.cc reads them from its flags
// once and hands them down, so that every other part is a plain function of its
// inputs and none of them depends on absl flags.
#ifndef SEALBOX_SERVER_BENCH_OPTIONS_H_
#define SEALBOX_SERVER_BENCH_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace sealbox::load {

// One field per flag, of the same name unless noted; the flags' help says more.
struct Options {
  std::string server;
  std::string admin_token_file;
  int server_pid = 0;  // 0: the server's CPU time and memory are not reported
  double seconds = 0;
  int rounds = 1;  // --rounds, at least 1
  double warmup_seconds = 0;
  int64_t max_requests = 0;
  std::vector<int64_t> concurrencies;  // --concurrency
  std::vector<int64_t> unary_sizes;    // --unary_bytes
  int batch_items = 0;                 // 0: no batch rows
  int64_t batch_item_bytes = 0;
  std::string audit_server;  // empty: no audit rows
  int audit_server_pid = 0;
  uint64_t stream_bytes = 0;
  int stream_rounds = 0;
  std::vector<int64_t> stream_message_sizes;  // --stream_message_bytes
};

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_OPTIONS_H_
