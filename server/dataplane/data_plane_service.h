// sealbox.v1.Crypto over gRPC's callback API: admission, limits, metrics and the
// conversion to grpc::Status. The work itself is DataPlaneEngine's; the streams'
// protocol is StreamCall's (stream_call.h), their messages' meaning stream_handlers'.
#ifndef SEALBOX_SERVER_DATAPLANE_DATA_PLANE_SERVICE_H_
#define SEALBOX_SERVER_DATAPLANE_DATA_PLANE_SERVICE_H_

#include <cstddef>
#include <string>

#include "absl/functional/function_ref.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/audit/audit_log.h"
#include "server/auth/admission.h"
#include "server/auth/auth.h"
#include "server/dataplane/data_plane_limits.h"
#include "server/dataplane/stream_call.h"
#include "server/dataplane/unary_requests.h"
#include "server/engine/data_plane_engine.h"
#include "server/keystore/keystore.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// All on the callback API. Seal, Open and Rewrap take their requests and give their
// responses in the wire form (their output goes to gRPC uncopied: wire_response.h),
// as do the streams (stream_wire.h); the other calls are typed. A method added to the
// proto is added here too.
using CryptoCallbackService =
    v1::Crypto::WithRawCallbackMethod_Seal<v1::Crypto::WithRawCallbackMethod_Open<
        v1::Crypto::WithRawCallbackMethod_SealStream<v1::Crypto::WithRawCallbackMethod_OpenStream<
            v1::Crypto::WithRawCallbackMethod_Rewrap<v1::Crypto::WithCallbackMethod_SealBatch<
                v1::Crypto::WithCallbackMethod_OpenBatch<v1::Crypto::WithCallbackMethod_RewrapBatch<
                    v1::Crypto::WithCallbackMethod_GenerateDataKey<
                        v1::Crypto::WithCallbackMethod_RenewToken<v1::Crypto::Service>>>>>>>>>>;

// Items a batch call may carry, at most.
inline constexpr int kMaxBatchItems = 1000;

class DataPlaneService final : public CryptoCallbackService {
 public:
  // `engine`: the server's (the KMS socket shares it, and so its per-key
  // decryption-failure limit). `audit`: where each call's audit record goes; null
  // when data-plane calls are not audited.
  DataPlaneService(Keystore* keystore, DataPlaneEngine& engine, const Authenticator* authenticator,
                   DataPlaneLimits limits, Metrics* metrics, AuditLog* audit);

  grpc::ServerUnaryReactor* Seal(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Open(grpc::CallbackServerContext* context,
                                 const grpc::ByteBuffer* request,
                                 grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Rewrap(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* SealBatch(grpc::CallbackServerContext* context,
                                      const v1::SealBatchRequest* request,
                                      v1::SealBatchResponse* response) override;
  grpc::ServerUnaryReactor* OpenBatch(grpc::CallbackServerContext* context,
                                      const v1::OpenBatchRequest* request,
                                      v1::OpenBatchResponse* response) override;
  grpc::ServerUnaryReactor* RewrapBatch(grpc::CallbackServerContext* context,
                                        const v1::RewrapBatchRequest* request,
                                        v1::RewrapBatchResponse* response) override;
  grpc::ServerUnaryReactor* GenerateDataKey(grpc::CallbackServerContext* context,
                                            const v1::GenerateDataKeyRequest* request,
                                            v1::GenerateDataKeyResponse* response) override;
  grpc::ServerUnaryReactor* RenewToken(grpc::CallbackServerContext* context,
                                       const v1::RenewTokenRequest* request,
                                       v1::RenewTokenResponse* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* SealStream(
      grpc::CallbackServerContext* context) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* OpenStream(
      grpc::CallbackServerContext* context) override;

 private:
  template <typename Request, typename Response>
  using UnaryRequestsFunction =
      absl::FunctionRef<absl::Status(Caller&, const Request&, Response&, crypto::OutputBytes&)>;

  // Seal, Open and Rewrap: `work` (a call of requests_'s Seal, Open or Rewrap) turns
  // the parsed request into a response and an output, which is sent uncopied as the
  // response's field 1 (and wiped after if `secret`).
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* OutputFirstCall(grpc::CallbackServerContext* context,
                                            const char* method,
                                            const grpc::ByteBuffer& wire_request,
                                            grpc::ByteBuffer& wire_response,
                                            UnaryRequestsFunction<Request, Response> work,
                                            bool secret);

  Keystore* keystore_;
  const Admission admission_;
  const DataPlaneLimits limits_;
  Metrics* metrics_;
  AuditLog* audit_;
  DataPlaneEngine& engine_;
  UnaryRequests requests_;
  StreamSlots streams_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_DATA_PLANE_SERVICE_H_
