#include "server/bench/stream_reactors.h"

namespace sealbox::load {

grpc::Status Push::Run(bench::Echo::Stub& echo, bench::DiscardSummary& summary) {
  echo.async()->Discard(&context_, &summary, this);
  WriteNext();
  StartCall();
  done_.WaitForNotification();
  return status_;
}

void Push::WriteNext() {
  if (next_(message_)) {
    StartWrite(&message_);
  } else {
    StartWritesDone();
  }
}

}  // namespace sealbox::load
