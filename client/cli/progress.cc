#include "client/cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_format.h"

namespace sealbox::client {
namespace {

// Below this a transfer is over before a bar would be read.
constexpr uint64_t kLargeBytes = 8 << 20;
constexpr auto kRedrawEvery = std::chrono::milliseconds(200);
constexpr int kBarWidth = 24;

std::string Mebibytes(uint64_t bytes) {
  return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

Progress::Progress(std::string verb, std::optional<uint64_t> total_bytes, bool enabled)
    : verb_(std::move(verb)),
      total_(total_bytes),
      enabled_(enabled && isatty(STDERR_FILENO) == 1 &&
               (!total_bytes || *total_bytes >= kLargeBytes)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void Progress::Advance(uint64_t bytes) {
  done_ += bytes;
  if (!enabled_ || (!total_ && done_ < kLargeBytes)) return;
  auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  Draw();
}

void Progress::Draw() {
  double seconds = std::chrono::duration<double>(last_draw_ - start_).count();
  std::string rate = seconds > 0 ? Mebibytes(static_cast<uint64_t>(done_ / seconds)) + "/s" : "";
  std::string line;
  if (total_ && *total_ > 0) {
    double fraction = std::min(1.0, static_cast<double>(done_) / *total_);
    int filled = static_cast<int>(fraction * kBarWidth);
    line = absl::StrFormat("%s [%s%s] %3d%%  %s / %s  %s", verb_, std::string(filled, '#'),
                           std::string(kBarWidth - filled, '.'), static_cast<int>(fraction * 100),
                           Mebibytes(done_), Mebibytes(*total_), rate);
  } else {
    line = absl::StrFormat("%s  %s  %s", verb_, Mebibytes(done_), rate);
  }
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace sealbox::client
