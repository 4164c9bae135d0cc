// v2.KeyManagementService, the Kubernetes KMS v2 plugin API, for the one key a KMS
// socket is bound to (--kms-key): kube-apiserver has the seeds of its data keys
// sealed here (Encrypt), opened here (Decrypt), and asks whether it can (Status).
//
// Served only on a unix socket, whose file mode and owner are its access control
// (kube-apiserver sends no credentials): every call is the bound key's tenant's.
// Encrypt seals under the key's primary version in sealbox's unary format
// (docs/FORMAT.md), with the associated data "kubernetes kms v2"; Decrypt opens any
// version the key still allows, whatever key_id the request names (the ciphertext
// names its version). Both go through the data plane's engine, so its per-key
// decryption-failure limit, its metrics and its audit log apply as to Open.
#ifndef SEALBOX_SERVER_KMS_KMS_SERVICE_H_
#define SEALBOX_SERVER_KMS_KMS_SERVICE_H_

#include <cstddef>

#include "crypto/format/output_bytes.h"
#include "crypto/format/unary.h"
#include "k8s/kms/v2/kms.grpc.pb.h"
#include "server/audit/audit_log.h"
#include "server/engine/data_plane_engine.h"
#include "server/keystore/keystore.h"
#include "server/kms/kms_health.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// The associated data of every KMS ciphertext: a seed cannot be opened by a
// data-plane Open that does not name it, nor a data-plane ciphertext passed off as
// a seed.
inline constexpr char kKmsAssociatedData[] = "kubernetes kms v2";

// kube-apiserver refuses a ciphertext over 1 kB; a plaintext that would make one is
// refused before it is sealed.
inline constexpr size_t kMaxKmsCiphertextBytes = 1024;
inline constexpr size_t kMaxKmsPlaintextBytes =
    kMaxKmsCiphertextBytes - crypto::kUnaryOverheadBytes;

// Every method takes and gives its messages in the wire form: a malformed request is
// answered INVALID_ARGUMENT like on the data plane (server/rpc/parse_request.h), and
// Decrypt's plaintext goes to gRPC uncopied and is wiped when sent
// (server/rpc/wire_response.h). A method added to the proto is added here too.
using KmsCallbackService = v2::KeyManagementService::WithRawCallbackMethod_Status<
    v2::KeyManagementService::WithRawCallbackMethod_Encrypt<
        v2::KeyManagementService::WithRawCallbackMethod_Decrypt<
            v2::KeyManagementService::Service>>>;

class KmsService final : public KmsCallbackService {
 public:
  // `audit`: null when calls are not audited.
  KmsService(Keystore& keystore, DataPlaneEngine& engine, KmsKey key, Metrics& metrics,
             AuditLog* audit);

  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Encrypt(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Decrypt(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override;

 private:
  // Seal into `ciphertext` and name the version in `response`'s key_id.
  absl::Status DoEncrypt(const v2::EncryptRequest& request, v2::EncryptResponse& response,
                         crypto::OutputBytes& ciphertext, uint32_t& version);
  absl::Status DoDecrypt(const v2::DecryptRequest& request, crypto::OutputBytes& plaintext,
                         uint32_t& version);

  Keystore& keystore_;
  DataPlaneEngine& engine_;
  const KmsKey key_;
  Metrics& metrics_;
  AuditLog* audit_;
  KmsHealth health_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KMS_KMS_SERVICE_H_
