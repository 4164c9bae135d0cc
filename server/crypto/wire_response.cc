#include "server/crypto/wire_response.h"

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
template <typename Bytes>
struct OwnedOutput {
  Bytes bytes;
  bool secret;
};

template <typename Bytes>
void ReleaseOutput(void* owned) {
  auto* output = static_cast<OwnedOutput<Bytes>*>(owned);
  if (output->secret) crypto::SecureWipe(output->bytes.data(), output->bytes.size());
  delete output;
}

template <typename Bytes>
grpc::ByteBuffer AroundBytes(uint32_t field, Bytes bytes, bool secret,
                             const google::protobuf::MessageLite& rest) {
  std::vector<grpc::Slice> slices;
  slices.reserve(3);
  if (!bytes.empty()) {  // proto3 leaves an empty field out
    uint8_t head[15];
    size_t head_size = PutVarint(uint64_t{field} << 3 | kLengthDelimited, head);
    head_size += PutVarint(bytes.size(), head + head_size);
    slices.emplace_back(head, head_size);  // copied: a few bytes
    auto* owned = new OwnedOutput<Bytes>{std::move(bytes), secret};
    slices.emplace_back(owned->bytes.data(), owned->bytes.size(), &ReleaseOutput<Bytes>,
                        owned);
  }
  const std::string tail = rest.SerializeAsString();
  if (!tail.empty()) slices.emplace_back(tail.data(), tail.size());
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// Strings shorter than this may live inside the string object (libstdc++ keeps up to
// 15 bytes there, libc++ 22); longer ones are always on the heap.
constexpr size_t kMaybeInline = 64;

}  // namespace

grpc::ByteBuffer ResponseAroundBytes(uint32_t field, std::string bytes, bool secret,
                                     const google::protobuf::MessageLite& rest) {
  return AroundBytes(field, std::move(bytes), secret, rest);
}

grpc::ByteBuffer ResponseAroundBytes(uint32_t field, crypto::OutputBytes bytes, bool secret,
                                     const google::protobuf::MessageLite& rest) {
  return AroundBytes(field, std::move(bytes), secret, rest);
}

std::string TakeOutput(std::string& from, bool secret) {
  std::string taken;
  if (secret && from.size() < kMaybeInline) {
    taken = from;
    crypto::SecureWipe(from.data(), from.size());
  } else {
    taken = std::move(from);
  }
  from.clear();  // a moved-from string's state is unspecified
  return taken;
}

}  // namespace sealbox::server
