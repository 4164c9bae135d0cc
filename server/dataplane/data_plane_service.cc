#include "server/dataplane/data_plane_service.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "crypto/decryption_failure.h"
#include "crypto/format/output_bytes.h"
#include "crypto/format/unary.h"
#include "crypto/secret/secure_wipe.h"
#include "server/dataplane/stream_handlers.h"
#include "server/grpc_status.h"
#include "server/rpc/bytes.h"
#include "server/rpc/call_scope.h"
#include "server/rpc/parse_request.h"
#include "server/rpc/wire_response.h"

namespace sealbox::server {
namespace {

// What a call adds to its audit record at the end (nothing, by default).
struct NoDetail {
  void operator()(AuditRecord&) const {}
};

// A unary call's key, version and sizes.
template <typename Request, typename Response>
auto UnaryDetail(const Request& request, const Response& response) {
  return [&request, &response](AuditRecord& record) {
    record.key = request.key();
    record.key_version = response.key_version();
    record.request_bytes = static_cast<int64_t>(request.ByteSizeLong());
    record.response_bytes = static_cast<int64_t>(response.ByteSizeLong());
  };
}

// The same for a call in its wire form: the sizes are the messages' own.
template <typename Request, typename Response>
auto WireDetail(const Request& request, const Response& response,
                const grpc::ByteBuffer& wire_request, const grpc::ByteBuffer& wire_response) {
  return [&](AuditRecord& record) {
    record.key = request.key();
    record.key_version = response.key_version();
    record.request_bytes = static_cast<int64_t>(wire_request.Length());
    record.response_bytes = static_cast<int64_t>(wire_response.Length());
  };
}

// A batch call's items, failures, the keys it named and sizes.
template <typename Request, typename Response>
auto BatchDetail(const Request& request, const Response& response) {
  return [&request, &response](AuditRecord& record) {
    record.items = request.items_size();
    for (const auto& item : request.items()) {
      if (std::find(record.keys.begin(), record.keys.end(), item.key()) != record.keys.end()) {
        continue;
      }
      if (record.keys.size() == kMaxAuditedKeys) {
        record.keys_truncated = true;
        break;
      }
      record.keys.push_back(item.key());
    }
    for (const auto& result : response.results()) {
      if (result.has_error()) ++record.failed_items;
    }
    record.request_bytes = static_cast<int64_t>(request.ByteSizeLong());
    record.response_bytes = static_cast<int64_t>(response.ByteSizeLong());
  };
}

// A unary call on this plane: its scope (server/rpc/call_scope.h), the caller in
// its audit record, and the call's own detail at the end.
class UnaryCall {
 public:
  UnaryCall(grpc::CallbackServerContext* context, Metrics* metrics, AuditLog* audit,
            const char* method)
      : scope_(*context, *metrics, audit, {v1::Crypto::service_full_name(), method}),
        context_(*context) {}

  absl::StatusOr<Caller> Authenticate(const Admission& admission) {
    absl::StatusOr<Caller> caller = admission.Authenticate(context_);
    if (scope_.audit() != nullptr && caller.ok()) AuditCaller(*caller, *scope_.audit());
    return caller;
  }

  // `plaintexts` are fields of the response that hold plaintext: wiped at the end.
  // `detail` adds the call's own fields to its audit record.
  template <typename Detail = NoDetail>
  grpc::ServerUnaryReactor* Done(const absl::Status& status,
                                 std::vector<std::string*> plaintexts = {}, Detail detail = {}) {
    if (AuditRecord* record = scope_.audit()) detail(*record);
    return scope_.Finish(status, std::move(plaintexts));
  }

 private:
  CallScope scope_;
  const grpc::CallbackServerContext& context_;
};

// The plaintext an item carries: a batch's items together carry at most
// --max-unary-bytes of it (a ciphertext less the unary format's overhead).
size_t PayloadBytes(const v1::SealRequest& item) { return item.plaintext().size(); }

// The ciphertext an item names a key version in (none for Seal).
absl::Span<const uint8_t> CiphertextOf(const v1::SealRequest&) { return {}; }
template <typename CiphertextItem>
absl::Span<const uint8_t> CiphertextOf(const CiphertextItem& item) {
  return AsBytes(item.ciphertext());
}
template <typename CiphertextItem>
size_t PayloadBytes(const CiphertextItem& item) {
  return crypto::OpenedBytes(CiphertextOf(item));
}

// A batch call for an authenticated `caller`: the batch as a whole is checked (1 to
// kMaxBatchItems items, their payloads together within `limit`), then `work`
// (UnaryRequests's Seal, Open or Rewrap) runs on every item into its own result; an
// item's failure becomes that result's error and never touches the others.
template <typename Items, typename Results, typename Work>
absl::Status ServeBatch(absl::StatusOr<Caller> caller, const Items& items, size_t limit,
                        Results& results, Metrics& metrics, Work work) {
  if (!caller.ok()) return caller.status();
  if (items.empty() || items.size() > kMaxBatchItems) {
    return absl::InvalidArgumentError(absl::StrCat("a batch carries 1 to ", kMaxBatchItems,
                                                   " items; this one has ", items.size()));
  }
  size_t total = 0;
  for (const auto& item : items) total += PayloadBytes(item);
  if (total > limit) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the batch's items carry ", total, " bytes, over the limit of ", limit,
                     " (--max-unary-bytes); split it into smaller batches"));
  }
  // A key or version this replica has not seen yet (made through another replica a
  // moment ago?) is waited for once for the whole batch (CallSnapshot): a batch
  // naming a thousand unknown keys waits once, not a thousand times.
  results.Reserve(items.size());
  for (const auto& item : items) {
    auto* result = results.Add();
    if (absl::Status s = work(*caller, item, *result); !s.ok()) {
      // The call itself ends OK, so its items' failed decryptions are counted here
      // (a unary call's by its outcome).
      if (crypto::IsDecryptionFailure(s)) metrics.CountDecryptionFailure();
      *result->mutable_error() = ToItemError(s);  // replaces any partial result
    }
  }
  return absl::OkStatus();
}

}  // namespace

DataPlaneService::DataPlaneService(Keystore* keystore, DataPlaneEngine& engine,
                                   const Authenticator* authenticator, DataPlaneLimits limits,
                                   Metrics* metrics, AuditLog* audit)
    : keystore_(keystore),
      admission_(keystore, authenticator),
      limits_(limits),
      metrics_(metrics),
      audit_(audit),
      engine_(engine),
      requests_(engine_, *metrics, limits.max_unary_bytes),
      streams_(limits.max_concurrent_streams, limits.stream_idle_timeout) {}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* DataPlaneService::OutputFirstCall(
    grpc::CallbackServerContext* context, const char* method, const grpc::ByteBuffer& wire_request,
    grpc::ByteBuffer& wire_response, UnaryRequestsFunction<Request, Response> work, bool secret) {
  UnaryCall call(context, metrics_, audit_, method);
  Request request;
  Response response;
  crypto::OutputBytes output;
  // Parsed first, as gRPC does for a typed call, so a refusal's audit line has the key.
  absl::Status status = ParseRequest(wire_request, request);
  if (status.ok()) {
    absl::StatusOr<Caller> caller = call.Authenticate(admission_);
    status = caller.ok() ? work(*caller, request, response, output) : caller.status();
  }
  if (status.ok()) {
    wire_response = ResponseAroundBytes(/*field=*/1, std::move(output), secret, response);
  } else if (secret) {
    crypto::SecureWipe(output.data(), output.size());  // a failure's partial output
  }
  return call.Done(status, {}, WireDetail(request, response, wire_request, wire_response));
}

grpc::ServerUnaryReactor* DataPlaneService::Seal(grpc::CallbackServerContext* context,
                                                 const grpc::ByteBuffer* request,
                                                 grpc::ByteBuffer* response) {
  auto seal = [this](Caller& caller, const v1::SealRequest& request, v1::SealResponse& response,
                     crypto::OutputBytes& ciphertext) {
    return requests_.Seal(caller, request, response, ciphertext);
  };
  return OutputFirstCall<v1::SealRequest, v1::SealResponse>(context, "Seal", *request, *response,
                                                            seal, /*secret=*/false);
}

grpc::ServerUnaryReactor* DataPlaneService::Open(grpc::CallbackServerContext* context,
                                                 const grpc::ByteBuffer* request,
                                                 grpc::ByteBuffer* response) {
  auto open = [this](Caller& caller, const v1::OpenRequest& request, v1::OpenResponse& response,
                     crypto::OutputBytes& plaintext) {
    return requests_.Open(caller, request, response, plaintext);
  };
  return OutputFirstCall<v1::OpenRequest, v1::OpenResponse>(context, "Open", *request, *response,
                                                            open, /*secret=*/true);
}

grpc::ServerUnaryReactor* DataPlaneService::Rewrap(grpc::CallbackServerContext* context,
                                                   const grpc::ByteBuffer* request,
                                                   grpc::ByteBuffer* response) {
  auto rewrap = [this](Caller& caller, const v1::RewrapRequest& request,
                       v1::RewrapResponse& response, crypto::OutputBytes& ciphertext) {
    return requests_.Rewrap(caller, request, response, ciphertext);
  };
  return OutputFirstCall<v1::RewrapRequest, v1::RewrapResponse>(context, "Rewrap", *request,
                                                                *response, rewrap,
                                                                /*secret=*/false);
}

grpc::ServerUnaryReactor* DataPlaneService::SealBatch(grpc::CallbackServerContext* context,
                                                      const v1::SealBatchRequest* request,
                                                      v1::SealBatchResponse* response) {
  UnaryCall call(context, metrics_, audit_, "SealBatch");
  absl::Status status =
      ServeBatch(call.Authenticate(admission_), request->items(), requests_.max_plaintext_bytes(),
                 *response->mutable_results(), *metrics_,
                 [&](Caller& caller, const v1::SealRequest& item, v1::SealBatchResult& result) {
                   v1::SealResponse& sealed = *result.mutable_sealed();
                   return requests_.Seal(caller, item, sealed, *sealed.mutable_ciphertext());
                 });
  return call.Done(status, {}, BatchDetail(*request, *response));
}

grpc::ServerUnaryReactor* DataPlaneService::OpenBatch(grpc::CallbackServerContext* context,
                                                      const v1::OpenBatchRequest* request,
                                                      v1::OpenBatchResponse* response) {
  UnaryCall call(context, metrics_, audit_, "OpenBatch");
  absl::Status status =
      ServeBatch(call.Authenticate(admission_), request->items(), requests_.max_plaintext_bytes(),
                 *response->mutable_results(), *metrics_,
                 [&](Caller& caller, const v1::OpenRequest& item, v1::OpenBatchResult& result) {
                   v1::OpenResponse& opened = *result.mutable_opened();
                   return requests_.Open(caller, item, opened, *opened.mutable_plaintext());
                 });
  std::vector<std::string*> plaintexts;
  for (v1::OpenBatchResult& result : *response->mutable_results()) {
    if (result.has_opened()) plaintexts.push_back(result.mutable_opened()->mutable_plaintext());
  }
  return call.Done(status, std::move(plaintexts), BatchDetail(*request, *response));
}

grpc::ServerUnaryReactor* DataPlaneService::RewrapBatch(grpc::CallbackServerContext* context,
                                                        const v1::RewrapBatchRequest* request,
                                                        v1::RewrapBatchResponse* response) {
  UnaryCall call(context, metrics_, audit_, "RewrapBatch");
  absl::Status status = ServeBatch(
      call.Authenticate(admission_), request->items(), requests_.max_plaintext_bytes(),
      *response->mutable_results(), *metrics_,
      [&](Caller& caller, const v1::RewrapRequest& item, v1::RewrapBatchResult& result) {
        v1::RewrapResponse& rewrapped = *result.mutable_rewrapped();
        return requests_.Rewrap(caller, item, rewrapped, *rewrapped.mutable_ciphertext());
      });
  return call.Done(status, {}, BatchDetail(*request, *response));
}

grpc::ServerUnaryReactor* DataPlaneService::GenerateDataKey(
    grpc::CallbackServerContext* context, const v1::GenerateDataKeyRequest* request,
    v1::GenerateDataKeyResponse* response) {
  UnaryCall call(context, metrics_, audit_, "GenerateDataKey");
  // The key is made in the response's own field, and wiped there at the end whether
  // or not it is sent.
  std::string* data_key = response->mutable_plaintext();
  absl::StatusOr<Caller> caller = call.Authenticate(admission_);
  const absl::Status status =
      caller.ok() ? requests_.GenerateDataKey(*caller, *request, *response) : caller.status();
  return call.Done(status, {data_key}, UnaryDetail(*request, *response));
}

grpc::ServerUnaryReactor* DataPlaneService::RenewToken(grpc::CallbackServerContext* context,
                                                       const v1::RenewTokenRequest* request,
                                                       v1::RenewTokenResponse* response) {
  UnaryCall call(context, metrics_, audit_, "RenewToken");
  absl::StatusOr<Caller> caller = call.Authenticate(admission_);
  if (!caller.ok()) return call.Done(caller.status());
  if (caller->grant == nullptr) {
    return call.Done(absl::FailedPreconditionError(
        "only a bearer token can be renewed; this call came with a client certificate"));
  }
  // A keystore write, like an admin call: rare, and bounded by the store's timeout.
  absl::StatusOr<IssuedToken> renewed = keystore_->tokens().RenewToken(
      caller->tenant, caller->grant->id,
      absl::Seconds(request->ttl().seconds()) + absl::Nanoseconds(request->ttl().nanos()));
  if (!renewed.ok()) return call.Done(renewed.status());
  response->set_token(renewed->token);
  response->set_token_id(renewed->info.id);
  response->mutable_expire_time()->set_seconds(absl::ToUnixSeconds(renewed->info.expire_time));
  return call.Done(absl::OkStatus(), {response->mutable_token()},
                   [&](AuditRecord& record) { record.target_token_id = renewed->info.id; });
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* DataPlaneService::SealStream(
    grpc::CallbackServerContext* context) {
  return StreamCall::Start(context, "SealStream", admission_, streams_, *metrics_, audit_,
                           NewSealStreamHandler(engine_, *metrics_));
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* DataPlaneService::OpenStream(
    grpc::CallbackServerContext* context) {
  return StreamCall::Start(context, "OpenStream", admission_, streams_, *metrics_, audit_,
                           NewOpenStreamHandler(engine_, *metrics_));
}

}  // namespace sealbox::server
