#include "server/admin/admin_service.h"

#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "server/admin/admin_protos.h"
#include "server/log.h"
#include "server/rpc/call_scope.h"

namespace sealbox::server {
namespace {

// How long an admin call waits for a store it cannot reach before it fails: an etcd
// election, or a replica's heartbeat that was only slow, passes within it.
constexpr absl::Duration kWaitForStore = absl::Seconds(2);

// Puts an operation's value into the response, or passes its error on.
template <typename T, typename Response>
absl::Status Into(const absl::StatusOr<T>& result, Response* response) {
  if (!result.ok()) return result.status();
  *response = ToProto(*result);
  return absl::OkStatus();
}

// What an admin request acts on, for its audit record: the fields every request
// names alike ("tenant", or "name" for a tenant's own calls; "key"; "version";
// "token_id"), read through reflection so that a new method needs nothing here.
// Never a field that could hold a secret (ImportKey's material, a token).
void AuditTarget(const google::protobuf::Message& request, absl::string_view method,
                 AuditRecord& record) {
  const google::protobuf::Descriptor* descriptor = request.GetDescriptor();
  const google::protobuf::Reflection* reflection = request.GetReflection();
  auto text = [&](const char* name) -> std::string {
    const google::protobuf::FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (field == nullptr || field->is_repeated() ||
        field->type() != google::protobuf::FieldDescriptor::TYPE_STRING) {
      return "";
    }
    return reflection->GetString(request, field);
  };
  record.tenant = absl::EndsWith(method, "Tenant") ? text("name") : text("tenant");
  record.key = text("key");
  record.target_token_id = text("token_id");
  if (const google::protobuf::FieldDescriptor* version = descriptor->FindFieldByName("version");
      version != nullptr && !version->is_repeated() &&
      version->type() == google::protobuf::FieldDescriptor::TYPE_UINT32) {
    record.key_version = reflection->GetUInt32(request, version);
  }
  record.request_bytes = static_cast<int64_t>(request.ByteSizeLong());
}

absl::Status NoRootKey() {
  return absl::FailedPreconditionError(
      "this server's KEK is not sealed by an HSM (--hsm-module): a --kek-file KEK changes "
      "with --previous-kek-file and a restart (docs/OPERATIONS.md)");
}

void ToProto(const custody::KekStatus& status, v1::KekStatus* out) {
  out->set_root_key(status.root_key);
  out->set_sealed_at(status.sealed_at);
  out->set_fingerprint(status.fingerprint);
  out->mutable_create_time()->set_seconds(absl::ToUnixSeconds(status.created));
  out->set_previous_keks(status.previous_keks);
  out->set_rewrapping(status.rewrapping);
  out->set_records_rewrapped(static_cast<int64_t>(status.records_rewrapped));
  if (status.next_rotation != absl::InfiniteFuture()) {
    out->mutable_next_rotation_time()->set_seconds(absl::ToUnixSeconds(status.next_rotation));
  }
  out->set_last_error(status.last_error);
}

}  // namespace

template <typename Operation>
grpc::ServerUnaryReactor* AdminService::Run(grpc::CallbackServerContext* context,
                                            const char* method,
                                            const google::protobuf::Message& request,
                                            const google::protobuf::Message& response,
                                            Operation operation) {
  CallScope scope(*context, *metrics_, audit_, {v1::Admin::service_full_name(), method});
  AuditRecord* record = scope.audit();
  if (record != nullptr) AuditTarget(request, method, *record);
  absl::StatusOr<Principal> caller = admission_.Admin(*context);
  absl::Status status = caller.status();
  if (status.ok()) status = AdminMayCall(*caller, method);
  // Admin calls change the store or report on it: none while it cannot be reached
  // (after a moment's wait).
  if (status.ok()) status = keystore_->WaitUntilWritable(kWaitForStore);
  if (status.ok()) status = operation(*caller);
  // Without the audit log, the log is the trail of admin changes and attempts;
  // requests may hold key material, so only the method, the admin token's id and
  // the outcome are logged. With it, the audit line says all that and more.
  if (record == nullptr) {
    Log("admin_call", status.ok() ? "info" : "warning")
        .Add("method", method)
        .Add("admin_token_id", caller.ok() ? caller->token_id() : "")
        .Add("code", absl::StatusCodeToString(status.code()))
        .Add("peer", context->peer());
  } else {
    record->response_bytes = static_cast<int64_t>(response.ByteSizeLong());
    if (caller.ok()) {
      record->credential = "admin_token";
      record->token_id = caller->token_id();
    }
  }
  return scope.Finish(status);
}

grpc::ServerUnaryReactor* AdminService::CreateTenant(grpc::CallbackServerContext* context,
                                                     const v1::CreateTenantRequest* request,
                                                     v1::Tenant* response) {
  return Run(context, "CreateTenant", *request, *response, [&](const Principal&) {
    return Into(keystore_->tenants().CreateTenant(request->name()), response);
  });
}

grpc::ServerUnaryReactor* AdminService::DeleteTenant(grpc::CallbackServerContext* context,
                                                     const v1::DeleteTenantRequest* request,
                                                     v1::DeleteTenantResponse* response) {
  return Run(context, "DeleteTenant", *request, *response,
             [&](const Principal&) { return keystore_->tenants().DeleteTenant(request->name()); });
}

grpc::ServerUnaryReactor* AdminService::ListTenants(grpc::CallbackServerContext* context,
                                                    const v1::ListTenantsRequest* request,
                                                    v1::ListTenantsResponse* response) {
  return Run(context, "ListTenants", *request, *response, [&](const Principal&) -> absl::Status {
    absl::StatusOr<std::vector<TenantInfo>> tenants = keystore_->tenants().ListTenants();
    if (!tenants.ok()) return tenants.status();
    for (const TenantInfo& tenant : *tenants) *response->add_tenants() = ToProto(tenant);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* AdminService::IssueToken(grpc::CallbackServerContext* context,
                                                   const v1::IssueTokenRequest* request,
                                                   v1::IssueTokenResponse* response) {
  return Run(context, "IssueToken", *request, *response, [&](const Principal&) {
    return Into(keystore_->tokens().IssueToken(request->tenant(), FromProto(*request)), response);
  });
}

grpc::ServerUnaryReactor* AdminService::RevokeToken(grpc::CallbackServerContext* context,
                                                    const v1::RevokeTokenRequest* request,
                                                    v1::RevokeTokenResponse* response) {
  return Run(context, "RevokeToken", *request, *response, [&](const Principal&) {
    return keystore_->tokens().RevokeToken(request->tenant(), request->token_id());
  });
}

grpc::ServerUnaryReactor* AdminService::CreateKey(grpc::CallbackServerContext* context,
                                                  const v1::CreateKeyRequest* request,
                                                  v1::Key* response) {
  return Run(context, "CreateKey", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().CreateKey(request->tenant(), request->key(),
                                            FromProto(request->algorithm()), request->exportable()),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::ImportKey(grpc::CallbackServerContext* context,
                                                  const v1::ImportKeyRequest* request,
                                                  v1::Key* response) {
  return Run(context, "ImportKey", *request, *response, [&](const Principal&) {
    const std::string& material = request->material();
    return Into(keystore_->keys().ImportKey(
                    request->tenant(), request->key(),
                    absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(material.data()),
                                              material.size())),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::RotateKey(grpc::CallbackServerContext* context,
                                                  const v1::KeyRef* request, v1::Key* response) {
  return Run(context, "RotateKey", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().RotateKey(request->tenant(), request->key()), response);
  });
}

grpc::ServerUnaryReactor* AdminService::GetKey(grpc::CallbackServerContext* context,
                                               const v1::KeyRef* request, v1::Key* response) {
  return Run(context, "GetKey", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().GetKey(request->tenant(), request->key()), response);
  });
}

grpc::ServerUnaryReactor* AdminService::ListKeys(grpc::CallbackServerContext* context,
                                                 const v1::ListKeysRequest* request,
                                                 v1::ListKeysResponse* response) {
  return Run(context, "ListKeys", *request, *response, [&](const Principal&) -> absl::Status {
    absl::StatusOr<std::vector<KeyInfo>> keys = keystore_->keys().ListKeys(request->tenant());
    if (!keys.ok()) return keys.status();
    for (const KeyInfo& key : *keys) *response->add_keys() = ToProto(key);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* AdminService::SetMinDecryptionVersion(
    grpc::CallbackServerContext* context, const v1::SetMinDecryptionVersionRequest* request,
    v1::Key* response) {
  return Run(context, "SetMinDecryptionVersion", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().SetMinDecryptionVersion(request->tenant(), request->key(),
                                                          request->min_decryption_version()),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::DisableKey(grpc::CallbackServerContext* context,
                                                   const v1::KeyRef* request, v1::Key* response) {
  return Run(context, "DisableKey", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().SetKeyEnabled(request->tenant(), request->key(), false),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::EnableKey(grpc::CallbackServerContext* context,
                                                  const v1::KeyRef* request, v1::Key* response) {
  return Run(context, "EnableKey", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().SetKeyEnabled(request->tenant(), request->key(), true), response);
  });
}

grpc::ServerUnaryReactor* AdminService::DisableKeyVersion(grpc::CallbackServerContext* context,
                                                          const v1::KeyVersionRef* request,
                                                          v1::Key* response) {
  return Run(context, "DisableKeyVersion", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().SetVersionState(request->tenant(), request->key(),
                                                  request->version(), VersionState::kDisabled),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::EnableKeyVersion(grpc::CallbackServerContext* context,
                                                         const v1::KeyVersionRef* request,
                                                         v1::Key* response) {
  return Run(context, "EnableKeyVersion", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().SetVersionState(request->tenant(), request->key(),
                                                  request->version(), VersionState::kEnabled),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::TrimKey(grpc::CallbackServerContext* context,
                                                const v1::TrimKeyRequest* request,
                                                v1::Key* response) {
  return Run(context, "TrimKey", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().TrimKey(request->tenant(), request->key(),
                                          request->min_available_version()),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::DestroyKeyVersion(grpc::CallbackServerContext* context,
                                                          const v1::KeyVersionRef* request,
                                                          v1::Key* response) {
  return Run(context, "DestroyKeyVersion", *request, *response, [&](const Principal&) {
    return Into(
        keystore_->keys().DestroyVersion(request->tenant(), request->key(), request->version()),
        response);
  });
}

grpc::ServerUnaryReactor* AdminService::SetRotationPeriod(
    grpc::CallbackServerContext* context, const v1::SetRotationPeriodRequest* request,
    v1::Key* response) {
  return Run(context, "SetRotationPeriod", *request, *response, [&](const Principal&) {
    return Into(keystore_->keys().SetRotationPeriod(request->tenant(), request->key(),
                                                    FromProto(request->rotation_period())),
                response);
  });
}

grpc::ServerUnaryReactor* AdminService::IssueAdminToken(grpc::CallbackServerContext* context,
                                                        const v1::IssueAdminTokenRequest* request,
                                                        v1::IssueTokenResponse* response) {
  return Run(context, "IssueAdminToken", *request, *response, [&](const Principal&) {
    TokenRequest token{request->description(), {}, FromProto(request->ttl()), {}};
    return Into(keystore_->tokens().IssueAdminToken(token, request->read_only()), response);
  });
}

grpc::ServerUnaryReactor* AdminService::RevokeAdminToken(grpc::CallbackServerContext* context,
                                                         const v1::RevokeAdminTokenRequest* request,
                                                         v1::RevokeTokenResponse* response) {
  return Run(context, "RevokeAdminToken", *request, *response, [&](const Principal&) {
    if (request->token_id() != "bootstrap") {
      return keystore_->tokens().RevokeAdminToken(request->token_id());
    }
    const std::string sha256 = authenticator_->BootstrapAdminSha256();
    if (sha256.empty()) {
      return absl::FailedPreconditionError(
          "this server was started without a bootstrap admin token");
    }
    return keystore_->tokens().RetireBootstrapAdminToken(sha256);
  });
}

grpc::ServerUnaryReactor* AdminService::ListAdminTokens(grpc::CallbackServerContext* context,
                                                        const v1::ListAdminTokensRequest* request,
                                                        v1::ListAdminTokensResponse* response) {
  return Run(context, "ListAdminTokens", *request, *response, [&](const Principal&) {
    *response = ToProto(keystore_->tokens().ListAdminTokens());
    const std::string sha256 = authenticator_->BootstrapAdminSha256();
    if (!sha256.empty()) {
      absl::StatusOr<std::shared_ptr<const TokenGrant>> grant =
          keystore_->snapshot()->TokenForSha256(sha256);
      response->set_bootstrap_retired(grant.ok() && (*grant)->retired);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* AdminService::RotateKek(grpc::CallbackServerContext* context,
                                                  const v1::RotateKekRequest* request,
                                                  v1::KekStatus* response) {
  return Run(context, "RotateKek", *request, *response, [&](const Principal&) -> absl::Status {
    if (kek_rotation_ == nullptr) return NoRootKey();
    absl::StatusOr<custody::KekStatus> status = kek_rotation_->Start();
    if (!status.ok()) return status.status();
    ToProto(*status, response);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* AdminService::GetKekStatus(grpc::CallbackServerContext* context,
                                                     const v1::GetKekStatusRequest* request,
                                                     v1::KekStatus* response) {
  return Run(context, "GetKekStatus", *request, *response, [&](const Principal&) -> absl::Status {
    if (kek_rotation_ == nullptr) return NoRootKey();
    absl::StatusOr<custody::KekStatus> status = kek_rotation_->Status();
    if (!status.ok()) return status.status();
    ToProto(*status, response);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* AdminService::GetImportParameters(
    grpc::CallbackServerContext* context, const v1::GetImportParametersRequest* request,
    v1::ImportParameters* response) {
  return Run(
      context, "GetImportParameters", *request, *response, [&](const Principal&) -> absl::Status {
        const absl::Duration ttl =
            absl::Seconds(request->ttl().seconds()) + absl::Nanoseconds(request->ttl().nanos());
        absl::StatusOr<ImportParameters> params =
            keystore_->transfers().GetImportParameters(request->tenant(), ttl);
        if (!params.ok()) return params.status();
        response->set_import_key_id(params->import_key_id);
        response->set_public_key_pem(params->public_key_pem);
        response->set_public_key_der(params->public_key_der);
        response->set_wrapping_algorithm("RSA_AES_KEY_WRAP_SHA_256");
        response->mutable_create_time()->set_seconds(absl::ToUnixSeconds(params->create_time));
        response->mutable_expire_time()->set_seconds(absl::ToUnixSeconds(params->expire_time));
        metrics_->CountCustodyEvent("import_parameters_issued");
        return absl::OkStatus();
      });
}

grpc::ServerUnaryReactor* AdminService::ImportWrappedKey(grpc::CallbackServerContext* context,
                                                         const v1::ImportWrappedKeyRequest* request,
                                                         v1::Key* response) {
  return Run(context, "ImportWrappedKey", *request, *response, [&](const Principal&) {
    KeyAdmin::ImportOptions options;
    options.exportable = request->exportable();
    options.version = request->version();
    absl::Status status = Into(keystore_->transfers().ImportWrappedKey(
                                   request->tenant(), request->key(), request->import_key_id(),
                                   request->wrapped_material(), options),
                               response);
    metrics_->CountCustodyEvent(status.ok() ? "key_imported_wrapped" : "wrapped_import_refused");
    return status;
  });
}

grpc::ServerUnaryReactor* AdminService::ExportKey(grpc::CallbackServerContext* context,
                                                  const v1::ExportKeyRequest* request,
                                                  v1::ExportKeyResponse* response) {
  return Run(context, "ExportKey", *request, *response, [&](const Principal&) -> absl::Status {
    absl::StatusOr<ExportedKey> exported =
        keystore_->transfers().ExportKey(request->tenant(), request->key(), request->public_key());
    metrics_->CountCustodyEvent(exported.ok() ? "key_exported" : "export_refused");
    if (!exported.ok()) return exported.status();
    *response->mutable_key() = ToProto(exported->key);
    response->set_import_key_id(request->import_key_id());
    for (const ExportedVersion& version : exported->versions) {
      v1::WrappedKeyVersion* out = response->add_versions();
      out->set_version(version.version);
      out->set_wrapped_material(version.wrapped);
    }
    return absl::OkStatus();
  });
}

}  // namespace sealbox::server
