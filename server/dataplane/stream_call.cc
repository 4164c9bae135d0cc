#include "server/dataplane/stream_call.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "crypto/secret/secure_wipe.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/dataplane/request_checks.h"
#include "server/dataplane/stream_wire.h"
#include "server/grpc_status.h"
#include "server/log.h"

namespace sealbox::server {

StreamCall* StreamCall::Start(grpc::CallbackServerContext* context, const char* method,
                              const Admission& admission, StreamSlots& slots, Metrics& metrics,
                              AuditLog* audit, std::unique_ptr<StreamHandler> handler) {
  auto* call =
      new StreamCall(context, method, admission, slots, metrics, audit, std::move(handler));
  call->Begin();
  return call;
}

StreamCall::StreamCall(grpc::CallbackServerContext* context, const char* method,
                       const Admission& admission, StreamSlots& slots, Metrics& metrics,
                       AuditLog* audit, std::unique_ptr<StreamHandler> handler)
    : context_(context),
      method_(method),
      admission_(admission),
      slots_(slots),
      metrics_(metrics),
      handler_(std::move(handler)),
      scope_(*context, metrics, audit, {v1::Crypto::service_full_name(), method}) {}

StreamCall::~StreamCall() { WipeOutput(); }

// Once the whole object is built, so that no reaction reaches a half-made one.
void StreamCall::Begin() {
  metrics_.StreamStarted();
  absl::MutexLock lock(&mu_);
  scope_.KeepPeer();
  if (slots_.open.fetch_add(1) >= slots_.max_open) {
    return Fail(absl::ResourceExhaustedError("too many concurrent streams"));
  }
  watch_id_ = slots_.watchdog.Watch(context_);
  Read();
}

void StreamCall::OnReadDone(bool ok) {
  absl::MutexLock lock(&mu_);
  if (finished_ || !failure_.ok()) return;
  if (ok) slots_.watchdog.Touch(watch_id_);
  if (!CanProcess(ok)) {  // output is still waiting to go out: this message waits
    parked_ = true;
    parked_ok_ = ok;
    return;
  }
  Process(ok);
}

void StreamCall::OnWriteDone(bool ok) {
  absl::MutexLock lock(&mu_);
  writing_ = false;
  response_.Clear();  // gRPC releases (and for plaintext, wipes) the output
  if (finished_) return;
  if (!failure_.ok()) return Fail(failure_);  // whether or not the client still reads
  if (!ok) return Fail(absl::CancelledError("client stopped reading"));
  slots_.watchdog.Touch(watch_id_);
  if (sent_ < out_.size()) {
    Send();  // output made while this write went out, or the rest of a large one
  } else {
    WipeOutput();
    out_.clear();
    sent_ = 0;
    if (finishing_) return FinishOk();
  }
  if (parked_ && CanProcess(parked_ok_)) {
    parked_ = false;
    Process(parked_ok_);
  }
  // Otherwise the next message is still being read; OnReadDone takes it.
}

void StreamCall::OnDone() {
  { absl::MutexLock lock(&mu_); }  // a reaction still returning lets go of the object
  delete this;
}

// The message in request_ (or the end of the client's half, `ok` false), when
// CanProcess says it may be.
void StreamCall::Process(bool ok) {
  if (!ok) {  // the client half-closed, or went away
    // A cancelled call is not a truncated stream: nothing to finish or count.
    if (context_->IsCancelled()) return Fail(absl::CancelledError("client cancelled"));
    if (!begun_) {
      return Fail(absl::InvalidArgumentError("the stream ended before its start message"));
    }
    if (absl::Status s = admission_.StillServing(); !s.ok()) return Fail(s);
    if (absl::Status s = handler_->End(out_); !s.ok()) return Fail(s);
    finishing_ = true;
    if (out_.empty()) return FinishOk();
    return Send();
  }
  if (AuditRecord* record = scope_.audit()) {
    record->request_bytes += static_cast<int64_t>(request_.Length());
  }
  absl::StatusOr<StreamRequestView> message = ReadStreamRequest(request_);
  if (!message.ok()) return Fail(message.status());
  absl::Status status;
  if (!begun_) {
    status = FirstMessage(message->start ? &*message->start : nullptr);
  } else if (message->start) {
    status = absl::InvalidArgumentError("`start` may only be the first message");
  } else if (status = admission_.StillServing(); !status.ok()) {
    // Stale since the stream began: it ends as a new call would be refused.
  } else {
    size_t size = 0;
    for (absl::Span<const uint8_t> piece : message->pieces) size += piece.size();
    // Room for what this message completes (a tag per segment of 4 KiB or more), so
    // the output is not moved as it grows.
    out_.reserve(out_.size() + size + size / 256 + 64);
    for (absl::Span<const uint8_t> piece : message->pieces) {
      status = handler_->Consume(piece, out_);
      if (!status.ok()) break;
    }
  }
  if (!status.ok()) {
    if (!writing_) return Fail(status);
    // Counted now, so that a client that goes away cannot escape the decryption
    // failure limit; the call ends once the write in flight is done (Finish is not
    // called with a write outstanding).
    handler_->Failed(status);
    failure_ = status;
    return;
  }
  if (!out_.empty() && !writing_) Send();  // else OnWriteDone sends it
  Read();  // the handler is done with the message: it may take the next
}

// A message read (`ok`) may be processed while an answer is being written, as long
// as no output is waiting: the cipher then runs while the transport sends. The
// half-close waits for every write, since it may finish the call.
bool StreamCall::CanProcess(bool ok) const { return out_.empty() && (ok || !writing_); }

absl::Status StreamCall::FirstMessage(const v1::StreamStart* start) {
  if (start == nullptr) {
    return absl::InvalidArgumentError("the first message must be `start`");
  }
  if (AuditRecord* record = scope_.audit()) record->key = start->key();
  absl::StatusOr<Caller> caller = admission_.Authenticate(*context_);
  if (!caller.ok()) return caller.status();
  if (AuditRecord* record = scope_.audit()) AuditCaller(*caller, *record);
  if (absl::Status s =
          CheckRequest(*caller, handler_->operation(), start->key(), start->associated_data(),
                       /*size=*/0, /*limit=*/0);
      !s.ok()) {
    return s;
  }
  begun_ = true;
  return handler_->Begin(*std::move(caller), *start, out_);
}

void StreamCall::Read() { StartRead(&request_); }

// Sends the next response; OnWriteDone sends the rest. Output that fits one response
// (the usual case) goes to gRPC as it is, not copied: its buffer changes owner and
// out_ is left empty.
void StreamCall::Send() {
  crypto::OutputBytes chunk;
  if (sent_ == 0 && out_.size() <= kMaxResponseChunk) {
    chunk.swap(out_);
  } else {
    const size_t n = std::min(kMaxResponseChunk, out_.size() - sent_);
    chunk.assign(out_.begin() + sent_, out_.begin() + sent_ + n);
    sent_ += n;
  }
  handler_->Sending(chunk.size());
  response_ = StreamResponse(std::move(chunk), handler_->key_version(), handler_->OutputIsSecret());
  if (AuditRecord* record = scope_.audit()) {
    record->response_bytes += static_cast<int64_t>(response_.Length());
  }
  writing_ = true;
  StartWrite(&response_);
}

// Ciphertext needs no wiping.
void StreamCall::WipeOutput() {
  if (handler_->OutputIsSecret()) crypto::SecureWipe(out_.data(), out_.size());
}

// Called with no write outstanding; a read may be (gRPC ends it, not ok).
void StreamCall::FinishOk() { End(absl::OkStatus()); }

void StreamCall::Fail(const absl::Status& status) {
  if (failure_.ok()) handler_->Failed(status);  // else counted when it was met
  End(status);
}

// Everything the call's end changes happens before the client hears of it, as for a
// unary call: whatever the client does next sees this call counted, audited and its
// slot free (a client that keeps --max-streams streams going is never refused a new
// one for an old one whose status it already has). What the call still holds until
// gRPC is done with it (OnDone) is small: its output was sent, no write is out.
void StreamCall::End(const absl::Status& status) {
  finished_ = true;
  absl::Status outcome = status;
  if (slots_.watchdog.Forget(watch_id_)) {  // it cancelled the call: why it ended
    outcome = absl::DeadlineExceededError(absl::StrCat("no progress for ",
                                                       absl::FormatDuration(slots_.watchdog.idle()),
                                                       " (--stream-idle-seconds)"));
    metrics_.CountStreamIdleTimeout();
    Log("stream_idle_timeout", "warning").Add("method", method_).Add("peer", scope_.KeepPeer());
  }
  if (AuditRecord* record = scope_.audit()) record->key_version = handler_->key_version();
  scope_.End(outcome);
  slots_.open.fetch_sub(1);
  metrics_.StreamEnded();  // last: "0 active" says every ended stream is counted
  Finish(ToGrpcStatus(status));
}

}  // namespace sealbox::server
