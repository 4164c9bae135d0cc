#include "server/dataplane/unary_requests.h"

#include <openssl/rand.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/crc32c/crc32c.h"
#include "crypto/format/output_bytes.h"
#include "crypto/secret/secure_wipe.h"
#include "server/dataplane/checksums.h"
#include "server/dataplane/request_checks.h"
#include "server/engine/open_outcome.h"
#include "server/rpc/bytes.h"

namespace sealbox::server {
namespace {

// The checksum of a request's associated data, when it gave one.
template <typename Request>
absl::Status CheckAssociatedDataCrc32c(const Request& request) {
  return CheckCrc32c(request.has_associated_data_crc32c(), request.associated_data_crc32c().value(),
                     request.associated_data(), "associated_data_crc32c");
}

// Open's and Rewrap's checks before any work (the two requests have the same shape).
template <typename Request>
absl::Status CheckCiphertextRequest(const Caller& caller, Operation operation,
                                    const Request& request, size_t max_ciphertext_bytes) {
  if (absl::Status s = CheckRequest(caller, operation, request.key(), request.associated_data(),
                                    request.ciphertext().size(), max_ciphertext_bytes);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckCrc32c(request.has_ciphertext_crc32c(), request.ciphertext_crc32c().value(),
                      request.ciphertext(), "ciphertext_crc32c");
      !s.ok()) {
    return s;
  }
  return CheckAssociatedDataCrc32c(request);
}

}  // namespace

template <typename Output>
absl::Status UnaryRequests::Seal(Caller& caller, const v1::SealRequest& request,
                                 v1::SealResponse& response, Output& ciphertext) {
  if (absl::Status s =
          CheckRequest(caller, Operation::kSeal, request.key(), request.associated_data(),
                       request.plaintext().size(), max_plaintext_bytes_);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckCrc32c(request.has_plaintext_crc32c(), request.plaintext_crc32c().value(),
                      request.plaintext(), "plaintext_crc32c");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckAssociatedDataCrc32c(request); !s.ok()) return s;
  absl::StatusOr<uint32_t> version =
      engine_.Seal(CallKey{caller.snapshot, caller.tenant, request.key()},
                   AsBytes(request.plaintext()), AsBytes(request.associated_data()), ciphertext);
  if (!version.ok()) return version.status();
  metrics_.AddBytesSealed(request.plaintext().size());
  response.set_key_version(*version);
  response.set_ciphertext_crc32c(crypto::Crc32c(ciphertext));
  response.set_verified_plaintext_crc32c(request.has_plaintext_crc32c());
  response.set_verified_associated_data_crc32c(request.has_associated_data_crc32c());
  return absl::OkStatus();
}

template <typename Output>
absl::Status UnaryRequests::Open(Caller& caller, const v1::OpenRequest& request,
                                 v1::OpenResponse& response, Output& plaintext) {
  if (absl::Status s =
          CheckCiphertextRequest(caller, Operation::kOpen, request, max_ciphertext_bytes());
      !s.ok()) {
    return s;
  }
  absl::StatusOr<uint32_t> version =
      engine_.Open(CallKey{caller.snapshot, caller.tenant, request.key()},
                   AsBytes(request.ciphertext()), AsBytes(request.associated_data()), plaintext);
  CountOpenOutcome(version.status(), caller.tenant, request.key(), metrics_);
  if (!version.ok()) return version.status();
  metrics_.AddBytesOpened(plaintext.size());
  response.set_key_version(*version);
  response.set_plaintext_crc32c(crypto::Crc32c(plaintext));
  response.set_verified_ciphertext_crc32c(request.has_ciphertext_crc32c());
  response.set_verified_associated_data_crc32c(request.has_associated_data_crc32c());
  return absl::OkStatus();
}

template <typename Output>
absl::Status UnaryRequests::Rewrap(Caller& caller, const v1::RewrapRequest& request,
                                   v1::RewrapResponse& response, Output& ciphertext) {
  if (absl::Status s =
          CheckCiphertextRequest(caller, Operation::kRewrap, request, max_ciphertext_bytes());
      !s.ok()) {
    return s;
  }
  absl::StatusOr<Rewrapped> rewrapped =
      engine_.Rewrap(CallKey{caller.snapshot, caller.tenant, request.key()},
                     AsBytes(request.ciphertext()), AsBytes(request.associated_data()), ciphertext);
  CountOpenOutcome(rewrapped.status(), caller.tenant, request.key(), metrics_);
  if (!rewrapped.ok()) return rewrapped.status();
  response.set_key_version(rewrapped->key_version);
  response.set_previous_key_version(rewrapped->previous_key_version);
  response.set_ciphertext_crc32c(crypto::Crc32c(ciphertext));
  response.set_verified_ciphertext_crc32c(request.has_ciphertext_crc32c());
  response.set_verified_associated_data_crc32c(request.has_associated_data_crc32c());
  return absl::OkStatus();
}

// A unary call's output, and a batch item's (its response's own field).
template absl::Status UnaryRequests::Seal(Caller&, const v1::SealRequest&, v1::SealResponse&,
                                          crypto::OutputBytes&);
template absl::Status UnaryRequests::Seal(Caller&, const v1::SealRequest&, v1::SealResponse&,
                                          std::string&);
template absl::Status UnaryRequests::Open(Caller&, const v1::OpenRequest&, v1::OpenResponse&,
                                          crypto::OutputBytes&);
template absl::Status UnaryRequests::Open(Caller&, const v1::OpenRequest&, v1::OpenResponse&,
                                          std::string&);
template absl::Status UnaryRequests::Rewrap(Caller&, const v1::RewrapRequest&, v1::RewrapResponse&,
                                            crypto::OutputBytes&);
template absl::Status UnaryRequests::Rewrap(Caller&, const v1::RewrapRequest&, v1::RewrapResponse&,
                                            std::string&);

absl::Status UnaryRequests::GenerateDataKey(Caller& caller,
                                            const v1::GenerateDataKeyRequest& request,
                                            v1::GenerateDataKeyResponse& response) {
  if (absl::Status s = CheckRequest(caller, Operation::kGenerateDataKey, request.key(),
                                    request.associated_data(),
                                    /*size=*/0, /*limit=*/0);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckAssociatedDataCrc32c(request); !s.ok()) return s;
  const uint32_t bytes = request.data_key_bytes() == 0 ? 32 : request.data_key_bytes();
  if (bytes != 16 && bytes != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("data_key_bytes must be 16 or 32 (0 means 32), not ", bytes));
  }
  std::string* data_key = response.mutable_plaintext();
  data_key->resize(bytes);
  if (RAND_bytes(reinterpret_cast<uint8_t*>(data_key->data()), bytes) != 1) {
    return absl::InternalError("the random generator failed");
  }
  absl::StatusOr<uint32_t> version =
      engine_.Seal(CallKey{caller.snapshot, caller.tenant, request.key()}, AsBytes(*data_key),
                   AsBytes(request.associated_data()), *response.mutable_ciphertext());
  if (!version.ok()) return version.status();
  response.set_key_version(*version);
  response.set_ciphertext_crc32c(crypto::Crc32c(response.ciphertext()));
  response.set_verified_associated_data_crc32c(request.has_associated_data_crc32c());
  if (request.include_plaintext()) {
    response.set_plaintext_crc32c(crypto::Crc32c(*data_key));
  } else {
    crypto::SecureWipe(data_key->data(), data_key->size());
    data_key->clear();
  }
  return absl::OkStatus();
}

}  // namespace sealbox::server
