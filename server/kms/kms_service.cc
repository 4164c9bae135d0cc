#include "server/kms/kms_service.h"

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/engine/open_outcome.h"
#include "server/keystore/names.h"
#include "server/kms/key_id.h"
#include "server/rpc/bytes.h"
#include "server/rpc/call_scope.h"
#include "server/rpc/parse_request.h"
#include "server/rpc/wire_response.h"

namespace sealbox::server {
namespace {

constexpr char kService[] = "v2.KeyManagementService";

// One call on the socket: its scope, and what its audit record says of it. Calls on
// the socket are the bound tenant's; the socket's file permissions said who may
// make them.
class KmsCall {
 public:
  // `metric`: the method as sealbox_rpcs_total names it ("KmsEncrypt"); `method`:
  // as the API does ("Encrypt").
  KmsCall(grpc::CallbackServerContext* context, Metrics& metrics, AuditLog* audit,
          const char* metric, const char* method, const KmsKey& key)
      : scope_(*context, metrics, audit, {kService, method, metric}) {
    AuditRecord* record = scope_.audit();
    if (record == nullptr) return;
    record->credential = "kms_socket";
    record->tenant = key.tenant;
    record->key = key.key;
  }

  // The request, parsed; its uid (kube-apiserver's, to match its own logs) goes in
  // the audit record.
  template <typename Request>
  absl::Status Parse(const grpc::ByteBuffer& wire, Request& request) {
    absl::Status parsed = ParseRequest(wire, request);
    AuditRecord* record = scope_.audit();
    if (record != nullptr) record->request_bytes = static_cast<int64_t>(wire.Length());
    if constexpr (!std::is_same_v<Request, v2::StatusRequest>) {
      if (record != nullptr && parsed.ok()) record->kms_uid = request.uid();
    }
    return parsed;
  }

  grpc::ServerUnaryReactor* Done(const absl::Status& status, uint32_t version,
                                 const grpc::ByteBuffer& response) {
    if (AuditRecord* record = scope_.audit()) {
      record->key_version = version;
      record->response_bytes = static_cast<int64_t>(response.Length());
    }
    return scope_.Finish(status);
  }

 private:
  CallScope scope_;
};

}  // namespace

KmsService::KmsService(Keystore& keystore, DataPlaneEngine& engine, KmsKey key, Metrics& metrics,
                       AuditLog* audit)
    : keystore_(keystore),
      engine_(engine),
      key_(key),
      metrics_(metrics),
      audit_(audit),
      health_(keystore, engine, std::move(key)) {}

grpc::ServerUnaryReactor* KmsService::Status(grpc::CallbackServerContext* context,
                                             const grpc::ByteBuffer* wire_request,
                                             grpc::ByteBuffer* wire_response) {
  KmsCall call(context, metrics_, audit_, "KmsStatus", "Status", key_);
  v2::StatusRequest request;
  absl::Status status = call.Parse(*wire_request, request);
  if (status.ok()) {
    KmsHealth::Answer answer = health_.Check();
    v2::StatusResponse response;
    response.set_version("v2");
    response.set_healthz(std::move(answer.healthz));
    response.set_key_id(std::move(answer.key_id));
    // An unhealthy answer is still an answer: kube-apiserver reads healthz.
    *wire_response = SerializedResponse(response);
  }
  return call.Done(status, 0, *wire_response);
}

grpc::ServerUnaryReactor* KmsService::Encrypt(grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* wire_request,
                                              grpc::ByteBuffer* wire_response) {
  KmsCall call(context, metrics_, audit_, "KmsEncrypt", "Encrypt", key_);
  v2::EncryptRequest request;
  v2::EncryptResponse response;
  crypto::OutputBytes ciphertext;
  uint32_t version = 0;
  absl::Status status = call.Parse(*wire_request, request);
  if (status.ok()) status = DoEncrypt(request, response, ciphertext, version);
  if (status.ok()) {
    *wire_response =
        ResponseAroundBytes(/*field=*/1, std::move(ciphertext), /*secret=*/false, response);
  }
  return call.Done(status, version, *wire_response);
}

grpc::ServerUnaryReactor* KmsService::Decrypt(grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* wire_request,
                                              grpc::ByteBuffer* wire_response) {
  KmsCall call(context, metrics_, audit_, "KmsDecrypt", "Decrypt", key_);
  v2::DecryptRequest request;
  crypto::OutputBytes plaintext;
  uint32_t version = 0;
  absl::Status status = call.Parse(*wire_request, request);
  if (status.ok()) status = DoDecrypt(request, plaintext, version);
  if (status.ok()) {
    *wire_response = ResponseAroundBytes(/*field=*/1, std::move(plaintext), /*secret=*/true,
                                         v2::DecryptResponse());
  }
  return call.Done(status, version, *wire_response);
}

absl::Status KmsService::DoEncrypt(const v2::EncryptRequest& request, v2::EncryptResponse& response,
                                   crypto::OutputBytes& ciphertext, uint32_t& version) {
  if (request.plaintext().empty() || request.plaintext().size() > kMaxKmsPlaintextBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the plaintext is ", request.plaintext().size(),
                                                   " bytes; 1 to ", kMaxKmsPlaintextBytes,
                                                   " may be sealed (kube-apiserver sends 32)"));
  }
  if (absl::Status serving = keystore_.Serving(); !serving.ok()) return serving;
  CallSnapshot view(keystore_.snapshot(), &keystore_);
  absl::StatusOr<uint32_t> sealed =
      engine_.Seal(CallKey{view, key_.tenant, key_.key}, AsBytes(request.plaintext()),
                   AsBytes(kKmsAssociatedData), ciphertext);
  if (!sealed.ok()) return sealed.status();
  version = *sealed;
  // The version that sealed names the key_id: in the snapshot the call sealed with,
  // or a newer one.
  for (const std::shared_ptr<const Snapshot>& snapshot : {view.shared(), keystore_.snapshot()}) {
    const KeyEntry* key = snapshot->FindKey(key_.tenant, key_.key);
    if (key == nullptr) continue;
    auto entry = key->versions.find(version);
    if (entry == key->versions.end()) continue;
    absl::StatusOr<std::string> key_id = KmsKeyId(*key, entry->second);
    if (!key_id.ok()) return key_id.status();
    response.set_key_id(*std::move(key_id));
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrCat("version ", version, " of ",
                                             KeyRef(key_.tenant, key_.key),
                                             " changed while it sealed; try again"));
}

absl::Status KmsService::DoDecrypt(const v2::DecryptRequest& request,
                                   crypto::OutputBytes& plaintext, uint32_t& version) {
  if (request.ciphertext().empty() || request.ciphertext().size() > kMaxKmsCiphertextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ciphertext is ", request.ciphertext().size(),
                     " bytes; Encrypt makes 1 to ", kMaxKmsCiphertextBytes));
  }
  if (absl::Status serving = keystore_.Serving(); !serving.ok()) return serving;
  CallSnapshot view(keystore_.snapshot(), &keystore_);
  absl::StatusOr<uint32_t> opened =
      engine_.Open(CallKey{view, key_.tenant, key_.key}, AsBytes(request.ciphertext()),
                   AsBytes(kKmsAssociatedData), plaintext);
  CountOpenOutcome(opened.status(), key_.tenant, key_.key, metrics_);
  if (opened.ok()) {
    version = *opened;
    return absl::OkStatus();
  }
  // A ciphertext of another key fails like garbage; its key_id can say why.
  absl::StatusOr<KmsKeyIdParts> named = ParseKmsKeyId(request.key_id());
  if (named.ok() && (named->tenant != key_.tenant || named->key != key_.key)) {
    absl::Status explained(opened.status().code(),
                           absl::StrCat(opened.status().message(), ": its key_id names ",
                                        KeyRef(named->tenant, named->key), ", this socket serves ",
                                        KeyRef(key_.tenant, key_.key)));
    // The same reason in the details (a decryption failure's, say).
    opened.status().ForEachPayload([&](absl::string_view type, const absl::Cord& payload) {
      explained.SetPayload(type, payload);
    });
    return explained;
  }
  return opened.status();
}

}  // namespace sealbox::server
