// A one-line progress display on stderr for long transfers. It appears only when
// stderr is a terminal and the input is large (or of unknown size and has grown
// large), so pipes, logs and small files never see it.
#ifndef SEALBOX_CLIENT_CLI_PROGRESS_H_
#define SEALBOX_CLIENT_CLI_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace sealbox::client {

class Progress {
 public:
  // `verb`: "sealing", "opening". `total_bytes`: the input size, if known.
  // `enabled`: false for --no-progress.
  Progress(std::string verb, std::optional<uint64_t> total_bytes, bool enabled);
  // Clears the line.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Another `bytes` of input were sent.
  void Advance(uint64_t bytes);

 private:
  void Draw();

  std::string verb_;
  std::optional<uint64_t> total_;
  bool enabled_;
  bool drawn_ = false;
  uint64_t done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_PROGRESS_H_
