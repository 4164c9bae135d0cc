#include "server/kms/kms_service.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/engine/open_outcome.h"
#include "server/keystore/names.h"
#include "server/kms/key_id.h"
#include "server/rpc/bytes.h"
#include "server/rpc/call_scope.h"

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
          const char* metric, const char* method, const KmsKey& key, const std::string& uid)
      : scope_(*context, metrics, audit, {kService, method, metric}) {
    AuditRecord* record = scope_.audit();
    if (record == nullptr) return;
    record->credential = "kms_socket";
    record->tenant = key.tenant;
    record->key = key.key;
    record->kms_uid = uid;
  }

  grpc::ServerUnaryReactor* Done(const absl::Status& status, uint32_t version,
                                 std::string* plaintext = nullptr) {
    if (AuditRecord* record = scope_.audit()) record->key_version = version;
    if (plaintext == nullptr) return scope_.Finish(status);
    return scope_.Finish(status, {plaintext});
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
                                             const v2::StatusRequest*,
                                             v2::StatusResponse* response) {
  KmsCall call(context, metrics_, audit_, "KmsStatus", "Status", key_, "");
  KmsHealth::Answer answer = health_.Check();
  response->set_version("v2");
  response->set_healthz(std::move(answer.healthz));
  response->set_key_id(std::move(answer.key_id));
  // An unhealthy answer is still an answer: kube-apiserver reads healthz.
  return call.Done(absl::OkStatus(), 0);
}

grpc::ServerUnaryReactor* KmsService::Encrypt(grpc::CallbackServerContext* context,
                                              const v2::EncryptRequest* request,
                                              v2::EncryptResponse* response) {
  KmsCall call(context, metrics_, audit_, "KmsEncrypt", "Encrypt", key_, request->uid());
  uint32_t version = 0;
  absl::Status status = DoEncrypt(*request, *response, version);
  return call.Done(status, version);
}

grpc::ServerUnaryReactor* KmsService::Decrypt(grpc::CallbackServerContext* context,
                                              const v2::DecryptRequest* request,
                                              v2::DecryptResponse* response) {
  KmsCall call(context, metrics_, audit_, "KmsDecrypt", "Decrypt", key_, request->uid());
  uint32_t version = 0;
  absl::Status status = DoDecrypt(*request, *response, version);
  return call.Done(status, version, response->mutable_plaintext());
}

absl::Status KmsService::DoEncrypt(const v2::EncryptRequest& request, v2::EncryptResponse& response,
                                   uint32_t& version) {
  if (request.plaintext().empty() || request.plaintext().size() > kMaxKmsPlaintextBytes) {
    return absl::InvalidArgumentError(absl::StrCat("the plaintext is ", request.plaintext().size(),
                                                   " bytes; 1 to ", kMaxKmsPlaintextBytes,
                                                   " may be sealed (kube-apiserver sends 32)"));
  }
  if (absl::Status serving = keystore_.Serving(); !serving.ok()) return serving;
  std::shared_ptr<const Snapshot> snapshot = keystore_.snapshot();
  absl::StatusOr<uint32_t> sealed =
      engine_.Seal(*snapshot, key_.tenant, key_.key, AsBytes(request.plaintext()),
                   AsBytes(kKmsAssociatedData), *response.mutable_ciphertext());
  if (!sealed.ok()) return sealed.status();
  version = *sealed;
  // The version that sealed names the key_id; after a catch-up it is in the newer
  // snapshot.
  for (const auto& view : {snapshot, keystore_.snapshot()}) {
    const KeyEntry* key = view->FindKey(key_.tenant, key_.key);
    if (key == nullptr) continue;
    auto entry = key->versions.find(version);
    if (entry == key->versions.end()) continue;
    absl::StatusOr<std::string> key_id = KmsKeyId(*key, entry->second);
    if (!key_id.ok()) return key_id.status();
    response.set_key_id(*std::move(key_id));
    return absl::OkStatus();
  }
  response.Clear();
  return absl::UnavailableError(absl::StrCat("version ", version, " of ",
                                             KeyRef(key_.tenant, key_.key),
                                             " changed while it sealed; try again"));
}

absl::Status KmsService::DoDecrypt(const v2::DecryptRequest& request, v2::DecryptResponse& response,
                                   uint32_t& version) {
  if (request.ciphertext().empty() || request.ciphertext().size() > kMaxKmsCiphertextBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the ciphertext is ", request.ciphertext().size(),
                     " bytes; Encrypt makes 1 to ", kMaxKmsCiphertextBytes));
  }
  if (absl::Status serving = keystore_.Serving(); !serving.ok()) return serving;
  std::shared_ptr<const Snapshot> snapshot = keystore_.snapshot();
  absl::StatusOr<uint32_t> opened =
      engine_.Open(*snapshot, key_.tenant, key_.key, AsBytes(request.ciphertext()),
                   AsBytes(kKmsAssociatedData), *response.mutable_plaintext());
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
