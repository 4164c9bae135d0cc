#include "server/bench/unary_clients.h"

#include "absl/status/status.h"
#include "grpcpp/client_context.h"
#include "sealbox/bench/echo.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"
#include "server/bench/load_common.h"

namespace sealbox::load {

UnaryCall NewEchoClient(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        const std::string& data) {
  auto stub = std::shared_ptr<bench::Echo::Stub>(bench::Echo::NewStub(channel));
  auto request = std::make_shared<bench::EchoMessage>();
  request->set_data(data);
  return [stub, request, bearer = "Bearer " + token] {
    grpc::ClientContext context;
    context.AddMetadata("authorization", bearer);
    bench::EchoMessage response;
    return stub->Echo(&context, *request, &response);
  };
}

UnaryCall NewSealClient(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        const std::string& plaintext) {
  auto stub = std::shared_ptr<v1::Crypto::Stub>(v1::Crypto::NewStub(channel));
  auto request = std::make_shared<v1::SealRequest>();
  request->set_key(kKey);
  request->set_plaintext(plaintext);
  return [stub, request, bearer = "Bearer " + token] {
    grpc::ClientContext context;
    context.AddMetadata("authorization", bearer);
    v1::SealResponse response;
    return stub->Seal(&context, *request, &response);
  };
}

UnaryCall NewOpenClient(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                        const std::string& ciphertext) {
  auto stub = std::shared_ptr<v1::Crypto::Stub>(v1::Crypto::NewStub(channel));
  auto request = std::make_shared<v1::OpenRequest>();
  request->set_key(kKey);
  request->set_ciphertext(ciphertext);
  return [stub, request, bearer = "Bearer " + token] {
    grpc::ClientContext context;
    context.AddMetadata("authorization", bearer);
    v1::OpenResponse response;
    return stub->Open(&context, *request, &response);
  };
}

UnaryCall NewSealBatchClient(const std::shared_ptr<grpc::Channel>& channel,
                             const std::string& token, const std::string& plaintext, int items) {
  auto stub = std::shared_ptr<v1::Crypto::Stub>(v1::Crypto::NewStub(channel));
  auto request = std::make_shared<v1::SealBatchRequest>();
  for (int i = 0; i < items; ++i) {
    v1::SealRequest* item = request->add_items();
    item->set_key(kKey);
    item->set_plaintext(plaintext);
  }
  return [stub, request, items, bearer = "Bearer " + token] {
    grpc::ClientContext context;
    context.AddMetadata("authorization", bearer);
    v1::SealBatchResponse response;
    grpc::Status status = stub->SealBatch(&context, *request, &response);
    if (!status.ok()) return status;
    for (const v1::SealBatchResult& result : response.results()) {
      if (!result.has_sealed()) {
        return grpc::Status(grpc::StatusCode::INTERNAL,
                            "a batch item failed: " + result.error().message());
      }
    }
    if (response.results_size() != items) {
      return grpc::Status(grpc::StatusCode::INTERNAL, "a batch answer is short");
    }
    return grpc::Status::OK;
  };
}

absl::StatusOr<std::string> SealOnce(const std::shared_ptr<grpc::Channel>& channel,
                                     const std::string& token, const std::string& plaintext) {
  auto crypto = v1::Crypto::NewStub(channel);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + token);
  v1::SealRequest request;
  request.set_key(kKey);
  request.set_plaintext(plaintext);
  v1::SealResponse response;
  grpc::Status status = crypto->Seal(&context, request, &response);
  if (!status.ok()) return absl::InternalError(status.error_message());
  return response.ciphertext();
}

}  // namespace sealbox::load
