#ifndef SEALBOX_SERVER_RPC_FLAT_BYTE_BUFFER_H_
#define SEALBOX_SERVER_RPC_FLAT_BYTE_BUFFER_H_

// For tests: a gRPC ByteBuffer's slices as one string, to compare with what
// protobuf would have written.

#include <string>
#include <vector>

#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"

namespace sealbox::server {

inline std::string FlatByteBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string flat;
  for (const grpc::Slice& slice : slices) {
    flat.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return flat;
}

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_RPC_FLAT_BYTE_BUFFER_H_
