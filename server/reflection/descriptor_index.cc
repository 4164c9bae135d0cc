#include "server/reflection/descriptor_index.h"

#include <set>
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.pb.h"

namespace sealbox::server {
namespace {

namespace pb = google::protobuf;

// Names come from callers; quote them escaped and cut short.
std::string Quoted(absl::string_view name) {
  return absl::StrCat("\"", absl::CHexEscape(name.substr(0, 200)), "\"");
}

}  // namespace

absl::StatusOr<std::unique_ptr<DescriptorIndex>> DescriptorIndex::FromSet(
    absl::string_view serialized_set) {
  pb::FileDescriptorSet set;
  if (!set.ParseFromArray(serialized_set.data(), static_cast<int>(serialized_set.size()))) {
    return absl::InternalError("the built-in descriptor set does not parse");
  }
  std::unique_ptr<DescriptorIndex> index(new DescriptorIndex);
  for (const pb::FileDescriptorProto& file : set.file()) {
    if (index->pool_.BuildFile(file) == nullptr) {
      return absl::InternalError(
          absl::StrCat("the built-in descriptor of ", file.name(), " does not build"));
    }
    index->serialized_[file.name()] = file.SerializeAsString();
  }
  return index;
}

std::vector<std::string> DescriptorIndex::WithImports(const pb::FileDescriptor* file) const {
  std::vector<std::string> names;
  std::set<const pb::FileDescriptor*> seen = {file};
  std::vector<const pb::FileDescriptor*> todo = {file};
  while (!todo.empty()) {
    const pb::FileDescriptor* next = todo.back();
    todo.pop_back();
    names.push_back(next->name());
    for (int i = 0; i < next->dependency_count(); ++i) {
      if (seen.insert(next->dependency(i)).second) todo.push_back(next->dependency(i));
    }
  }
  return names;
}

absl::StatusOr<std::vector<std::string>> DescriptorIndex::File(absl::string_view file_name) const {
  const pb::FileDescriptor* file = pool_.FindFileByName(std::string(file_name));
  if (file == nullptr)
    return absl::NotFoundError(absl::StrCat("file ", Quoted(file_name), " not found"));
  return WithImports(file);
}

absl::StatusOr<std::vector<std::string>> DescriptorIndex::FileContainingSymbol(
    absl::string_view symbol) const {
  const pb::FileDescriptor* file = pool_.FindFileContainingSymbol(std::string(symbol));
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat("symbol ", Quoted(symbol), " not found"));
  }
  return WithImports(file);
}

absl::StatusOr<std::vector<std::string>> DescriptorIndex::FileContainingExtension(
    absl::string_view message_type, int number) const {
  const pb::Descriptor* type = pool_.FindMessageTypeByName(std::string(message_type));
  const pb::FieldDescriptor* extension =
      type == nullptr ? nullptr : pool_.FindExtensionByNumber(type, number);
  if (extension == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("extension ", number, " of ", Quoted(message_type), " not found"));
  }
  return WithImports(extension->file());
}

absl::StatusOr<std::vector<int>> DescriptorIndex::ExtensionNumbers(
    absl::string_view message_type) const {
  const pb::Descriptor* type = pool_.FindMessageTypeByName(std::string(message_type));
  if (type == nullptr) {
    return absl::NotFoundError(absl::StrCat("message type ", Quoted(message_type), " not found"));
  }
  std::vector<const pb::FieldDescriptor*> extensions;
  pool_.FindAllExtensions(type, &extensions);
  std::vector<int> numbers;
  for (const pb::FieldDescriptor* extension : extensions) numbers.push_back(extension->number());
  return numbers;
}

bool DescriptorIndex::HasService(absl::string_view name) const {
  return pool_.FindServiceByName(std::string(name)) != nullptr;
}

}  // namespace sealbox::server
