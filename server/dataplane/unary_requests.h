// Seal, Open and Rewrap of one request for an authenticated caller: the request's
// own checks (key name, sizes, checksums), the engine's work, the response's fields
// and the metrics. A unary call is one request; a batch call runs one per item.
#ifndef SEALBOX_SERVER_DATAPLANE_UNARY_REQUESTS_H_
#define SEALBOX_SERVER_DATAPLANE_UNARY_REQUESTS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "crypto/format/output_bytes.h"
#include "crypto/format/unary.h"
#include "sealbox/v1/data.pb.h"
#include "server/auth/admission.h"
#include "server/engine/data_plane_engine.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

class UnaryRequests {
 public:
  // `max_plaintext_bytes` is --max-unary-bytes.
  UnaryRequests(DataPlaneEngine& engine, Metrics& metrics, size_t max_plaintext_bytes)
      : engine_(engine), metrics_(metrics), max_plaintext_bytes_(max_plaintext_bytes) {}

  // Seal, Open and Rewrap write their one large output (a ciphertext or a plaintext)
  // into their last argument, not into the response, which gets its checksum:
  // crypto::OutputBytes for a unary call (sent as it is, never zero-filled first),
  // or the response's own field for a batch item (std::string).
  template <typename Output>
  absl::Status Seal(Caller& caller, const v1::SealRequest& request, v1::SealResponse& response,
                    Output& ciphertext);
  // The caller wipes `plaintext` once it is sent (a failure leaves it wiped and empty).
  template <typename Output>
  absl::Status Open(Caller& caller, const v1::OpenRequest& request, v1::OpenResponse& response,
                    Output& plaintext);
  template <typename Output>
  absl::Status Rewrap(Caller& caller, const v1::RewrapRequest& request,
                      v1::RewrapResponse& response, Output& ciphertext);
  // Makes the data key in response.plaintext() (cleared unless asked for): the
  // caller wipes that field once the call is done, whatever its outcome.
  absl::Status GenerateDataKey(Caller& caller, const v1::GenerateDataKeyRequest& request,
                               v1::GenerateDataKeyResponse& response);

  size_t max_plaintext_bytes() const { return max_plaintext_bytes_; }
  size_t max_ciphertext_bytes() const { return max_plaintext_bytes_ + crypto::kUnaryOverheadBytes; }

 private:
  DataPlaneEngine& engine_;
  Metrics& metrics_;
  const size_t max_plaintext_bytes_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_UNARY_REQUESTS_H_
