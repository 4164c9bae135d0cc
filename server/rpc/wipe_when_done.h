// A unary call's reactor that wipes the response's plaintext fields once gRPC is
// done with the call (Finish has serialized the response by then): for every call
// whose answer is a plaintext (Open, OpenBatch, GenerateDataKey, KMS Decrypt).
#ifndef SEALBOX_SERVER_RPC_WIPE_WHEN_DONE_H_
#define SEALBOX_SERVER_RPC_WIPE_WHEN_DONE_H_

#include <string>
#include <utility>
#include <vector>

#include "crypto/secret/secure_wipe.h"
#include "grpcpp/support/server_callback.h"

namespace sealbox::server {

class WipeWhenDone final : public grpc::ServerUnaryReactor {
 public:
  // The fields must outlive the call (they are the response's own).
  explicit WipeWhenDone(std::vector<std::string*> plaintexts)
      : plaintexts_(std::move(plaintexts)) {}

  void OnDone() override {
    for (std::string* plaintext : plaintexts_) {
      crypto::SecureWipe(plaintext->data(), plaintext->size());
    }
    delete this;
  }

 private:
  const std::vector<std::string*> plaintexts_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_RPC_WIPE_WHEN_DONE_H_
