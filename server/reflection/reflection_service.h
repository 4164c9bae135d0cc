// gRPC server reflection, so grpcurl, Postman and Kreya need no .proto files.
//
// Both protocol versions are served, v1 (grpcurl 1.8.8 and later) and v1alpha
// (older clients), from descriptors that keep the .proto comments: `grpcurl
// describe` shows what a call expects. Replaces gRPC's own reflection plugin, which
// in Debian's gRPC 1.51 serves v1alpha only, without comments, and cannot describe
// the built-in health service it lists.
#ifndef SEALBOX_SERVER_REFLECTION_REFLECTION_SERVICE_H_
#define SEALBOX_SERVER_REFLECTION_REFLECTION_SERVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/impl/codegen/service_type.h"
#include "server/reflection/descriptor_index.h"

namespace sealbox::server {

class Reflection {
 public:
  // `services`: the full names of the services the server registers; reflection
  // adds its own two. Fails unless every one of them is described, so that
  // everything reflection lists resolves.
  static absl::StatusOr<std::unique_ptr<Reflection>> Create(std::vector<std::string> services);
  ~Reflection();

  // grpc.reflection.v1.ServerReflection and grpc.reflection.v1alpha.ServerReflection,
  // to register with the server builder; owned by this object.
  std::vector<grpc::Service*> services() const;

  const std::vector<std::string>& service_names() const { return names_; }

 private:
  Reflection() = default;

  std::unique_ptr<DescriptorIndex> index_;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<grpc::Service>> services_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_REFLECTION_REFLECTION_SERVICE_H_
