// The .proto files behind the server's services, looked up the ways reflection asks.
#ifndef SEALBOX_SERVER_REFLECTION_DESCRIPTOR_INDEX_H_
#define SEALBOX_SERVER_REFLECTION_DESCRIPTOR_INDEX_H_

#include <memory>
#include <string>
#include <vector>

#include <map>
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"

namespace sealbox::server {

class DescriptorIndex {
 public:
  // From a serialized FileDescriptorSet whose files come after their imports.
  static absl::StatusOr<std::unique_ptr<DescriptorIndex>> FromSet(absl::string_view serialized_set);

  // Each lookup answers the name of the file that holds the answer, followed by the
  // names of every file it imports, directly or not, each once.
  absl::StatusOr<std::vector<std::string>> File(absl::string_view file_name) const;
  absl::StatusOr<std::vector<std::string>> FileContainingSymbol(absl::string_view symbol) const;
  absl::StatusOr<std::vector<std::string>> FileContainingExtension(absl::string_view message_type,
                                                                   int number) const;
  absl::StatusOr<std::vector<int>> ExtensionNumbers(absl::string_view message_type) const;

  // The FileDescriptorProto of a file named by a lookup, serialized as it came from
  // protoc (comments included).
  const std::string& SerializedFile(const std::string& file_name) const {
    return serialized_.at(file_name);
  }

  // Whether a service of this full name is described.
  bool HasService(absl::string_view name) const;

 private:
  DescriptorIndex() = default;
  std::vector<std::string> WithImports(const google::protobuf::FileDescriptor* file) const;

  google::protobuf::DescriptorPool pool_;
  std::map<std::string, std::string> serialized_;
};

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_REFLECTION_DESCRIPTOR_INDEX_H_
