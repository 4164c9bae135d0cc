#include "server/rpc/wire_response.h"

#include <string>
#include <utility>
#include <vector>

#include "crypto/secret/secure_wipe.h"
#include "grpcpp/support/slice.h"

namespace sealbox::server {
namespace {

constexpr uint32_t kLengthDelimited = 2;  // protobuf's wire type for bytes

size_t PutVarint(uint64_t value, uint8_t* out) {
  size_t n = 0;
  while (value >= 0x80) {
    out[n++] = static_cast<uint8_t>(value | 0x80);
    value >>= 7;
  }
  out[n++] = static_cast<uint8_t>(value);
  return n;
}

// A response's output, owned by the slice gRPC sends until gRPC releases it.
struct OwnedOutput {
  crypto::OutputBytes bytes;
  bool secret;
};

void ReleaseOutput(void* owned) {
  auto* output = static_cast<OwnedOutput*>(owned);
  if (output->secret) crypto::SecureWipe(output->bytes.data(), output->bytes.size());
  delete output;
}

}  // namespace

grpc::ByteBuffer ResponseAroundBytes(uint32_t field, crypto::OutputBytes bytes, bool secret,
                                     const google::protobuf::MessageLite& rest) {
  std::vector<grpc::Slice> slices;
  slices.reserve(3);
  if (!bytes.empty()) {  // proto3 leaves an empty field out
    uint8_t head[15];
    size_t head_size = PutVarint(uint64_t{field} << 3 | kLengthDelimited, head);
    head_size += PutVarint(bytes.size(), head + head_size);
    slices.emplace_back(head, head_size);  // copied: a few bytes
    auto* owned = new OwnedOutput{std::move(bytes), secret};
    slices.emplace_back(owned->bytes.data(), owned->bytes.size(), &ReleaseOutput, owned);
  }
  const std::string tail = rest.SerializeAsString();
  if (!tail.empty()) slices.emplace_back(tail.data(), tail.size());
  return grpc::ByteBuffer(slices.data(), slices.size());
}

grpc::ByteBuffer SerializedResponse(const google::protobuf::MessageLite& response) {
  const std::string bytes = response.SerializeAsString();
  grpc::Slice slice(bytes.data(), bytes.size());
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace sealbox::server
