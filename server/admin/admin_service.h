// sealbox.v1.Admin over gRPC's callback API: the admin token check, then the
// keystore's operations.
#ifndef SEALBOX_SERVER_ADMIN_ADMIN_SERVICE_H_
#define SEALBOX_SERVER_ADMIN_ADMIN_SERVICE_H_

#include "sealbox/v1/admin.grpc.pb.h"
#include "server/audit/audit_log.h"
#include "server/auth/admission.h"
#include "server/auth/auth.h"
#include "server/custody/kek_rotation.h"
#include "server/keystore/keystore.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

class AdminService final : public v1::Admin::CallbackService {
 public:
  // `audit`: where each call's audit record goes; null when admin calls are not
  // audited.
  // `kek_rotation`: null when the KEK was given rather than sealed by an HSM.
  AdminService(Keystore* keystore, const Authenticator* authenticator, Metrics* metrics,
               AuditLog* audit, custody::KekRotation* kek_rotation = nullptr)
      : keystore_(keystore),
        authenticator_(authenticator),
        admission_(keystore, authenticator),
        metrics_(metrics),
        audit_(audit),
        kek_rotation_(kek_rotation) {}

  grpc::ServerUnaryReactor* CreateTenant(grpc::CallbackServerContext* context,
                                         const v1::CreateTenantRequest* request,
                                         v1::Tenant* response) override;
  grpc::ServerUnaryReactor* DeleteTenant(grpc::CallbackServerContext* context,
                                         const v1::DeleteTenantRequest* request,
                                         v1::DeleteTenantResponse* response) override;
  grpc::ServerUnaryReactor* ListTenants(grpc::CallbackServerContext* context,
                                        const v1::ListTenantsRequest* request,
                                        v1::ListTenantsResponse* response) override;
  grpc::ServerUnaryReactor* SetRotationPeriod(grpc::CallbackServerContext* context,
                                              const v1::SetRotationPeriodRequest* request,
                                              v1::Key* response) override;
  grpc::ServerUnaryReactor* IssueAdminToken(grpc::CallbackServerContext* context,
                                            const v1::IssueAdminTokenRequest* request,
                                            v1::IssueTokenResponse* response) override;
  grpc::ServerUnaryReactor* RevokeAdminToken(grpc::CallbackServerContext* context,
                                             const v1::RevokeAdminTokenRequest* request,
                                             v1::RevokeTokenResponse* response) override;
  grpc::ServerUnaryReactor* ListAdminTokens(grpc::CallbackServerContext* context,
                                            const v1::ListAdminTokensRequest* request,
                                            v1::ListAdminTokensResponse* response) override;
  grpc::ServerUnaryReactor* IssueToken(grpc::CallbackServerContext* context,
                                       const v1::IssueTokenRequest* request,
                                       v1::IssueTokenResponse* response) override;
  grpc::ServerUnaryReactor* RevokeToken(grpc::CallbackServerContext* context,
                                        const v1::RevokeTokenRequest* request,
                                        v1::RevokeTokenResponse* response) override;
  grpc::ServerUnaryReactor* CreateKey(grpc::CallbackServerContext* context,
                                      const v1::CreateKeyRequest* request,
                                      v1::Key* response) override;
  grpc::ServerUnaryReactor* ImportKey(grpc::CallbackServerContext* context,
                                      const v1::ImportKeyRequest* request,
                                      v1::Key* response) override;
  grpc::ServerUnaryReactor* RotateKey(grpc::CallbackServerContext* context,
                                      const v1::KeyRef* request, v1::Key* response) override;
  grpc::ServerUnaryReactor* GetKey(grpc::CallbackServerContext* context, const v1::KeyRef* request,
                                   v1::Key* response) override;
  grpc::ServerUnaryReactor* ListKeys(grpc::CallbackServerContext* context,
                                     const v1::ListKeysRequest* request,
                                     v1::ListKeysResponse* response) override;
  grpc::ServerUnaryReactor* SetMinDecryptionVersion(
      grpc::CallbackServerContext* context, const v1::SetMinDecryptionVersionRequest* request,
      v1::Key* response) override;
  grpc::ServerUnaryReactor* DisableKey(grpc::CallbackServerContext* context,
                                       const v1::KeyRef* request, v1::Key* response) override;
  grpc::ServerUnaryReactor* EnableKey(grpc::CallbackServerContext* context,
                                      const v1::KeyRef* request, v1::Key* response) override;
  grpc::ServerUnaryReactor* DisableKeyVersion(grpc::CallbackServerContext* context,
                                              const v1::KeyVersionRef* request,
                                              v1::Key* response) override;
  grpc::ServerUnaryReactor* EnableKeyVersion(grpc::CallbackServerContext* context,
                                             const v1::KeyVersionRef* request,
                                             v1::Key* response) override;
  grpc::ServerUnaryReactor* TrimKey(grpc::CallbackServerContext* context,
                                    const v1::TrimKeyRequest* request, v1::Key* response) override;
  grpc::ServerUnaryReactor* DestroyKeyVersion(grpc::CallbackServerContext* context,
                                              const v1::KeyVersionRef* request,
                                              v1::Key* response) override;
  grpc::ServerUnaryReactor* GetImportParameters(grpc::CallbackServerContext* context,
                                                const v1::GetImportParametersRequest* request,
                                                v1::ImportParameters* response) override;
  grpc::ServerUnaryReactor* ImportWrappedKey(grpc::CallbackServerContext* context,
                                             const v1::ImportWrappedKeyRequest* request,
                                             v1::Key* response) override;
  grpc::ServerUnaryReactor* ExportKey(grpc::CallbackServerContext* context,
                                      const v1::ExportKeyRequest* request,
                                      v1::ExportKeyResponse* response) override;
  grpc::ServerUnaryReactor* RotateKek(grpc::CallbackServerContext* context,
                                      const v1::RotateKekRequest* request,
                                      v1::KekStatus* response) override;
  grpc::ServerUnaryReactor* GetKekStatus(grpc::CallbackServerContext* context,
                                         const v1::GetKekStatusRequest* request,
                                         v1::KekStatus* response) override;

 private:
  // Authenticates the caller (a read-only admin token only for methods that change
  // nothing), runs `operation(caller)` to fill `response`, counts, logs and audits
  // the call, and finishes it.
  template <typename Operation>
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* context, const char* method,
                                const google::protobuf::Message& request,
                                const google::protobuf::Message& response, Operation operation);

  Keystore* keystore_;
  const Authenticator* authenticator_;
  const Admission admission_;
  Metrics* metrics_;
  AuditLog* audit_;
  custody::KekRotation* kek_rotation_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_ADMIN_ADMIN_SERVICE_H_
