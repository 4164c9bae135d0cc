#include "server/rpc/call_scope.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "server/grpc_status.h"
#include "server/log.h"
#include "server/rpc/wipe_when_done.h"

namespace sealbox::server {
namespace {

// A caller's own request id is kept to this length: it is the caller's text.
constexpr size_t kMaxClientRequestId = 128;

}  // namespace

CallScope::CallScope(grpc::CallbackServerContext& context, Metrics& metrics, AuditLog* audit,
                     CallName name)
    : context_(context),
      metrics_(metrics),
      audit_(audit),
      metric_(name.metric != nullptr ? name.metric : name.method),
      started_(absl::Now()) {
  if (audit_ == nullptr) return;
  AuditRecord& record = record_.emplace();
  record.time = started_;
  record.service = name.service;
  record.method = name.method;
  record.request_id = audit_->NextRequestId();
  context_.AddTrailingMetadata(kRequestIdMetadata, record.request_id);
  const auto& metadata = context_.client_metadata();
  if (auto it = metadata.find("x-request-id"); it != metadata.end()) {
    record.client_request_id.assign(it->second.data(),
                                    std::min(it->second.size(), kMaxClientRequestId));
  }
  record.peer = KeepPeer();  // read once: gRPC builds it anew on every ask
}

const std::string& CallScope::KeepPeer() {
  if (!peer_.has_value()) peer_ = context_.peer();
  return *peer_;
}

std::string CallScope::Peer() { return peer_.has_value() ? *peer_ : context_.peer(); }

void CallScope::End(const absl::Status& status) {
  if (ended_) return;
  ended_ = true;
  metrics_.RecordOutcome(metric_, status, started_);
  if (absl::IsUnauthenticated(status)) {
    Log("auth_failed", "warning").Add("method", metric_).Add("peer", Peer());
  }
  if (record_.has_value()) {
    record_->code = status.code();
    record_->latency = absl::Now() - record_->time;
    audit_->Record(*std::move(record_));
    record_.reset();
  }
}

grpc::ServerUnaryReactor* CallScope::Finish(const absl::Status& status,
                                            std::vector<std::string*> plaintexts) {
  if (record_.has_value() && !status.ok()) record_->response_bytes = 0;
  End(status);
  grpc::ServerUnaryReactor* reactor =
      plaintexts.empty() ? context_.DefaultReactor() : new WipeWhenDone(std::move(plaintexts));
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace sealbox::server
