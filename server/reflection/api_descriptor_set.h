// The descriptors of every service the server can serve, with their comments.
#ifndef SEALBOX_SERVER_REFLECTION_API_DESCRIPTOR_SET_H_
#define SEALBOX_SERVER_REFLECTION_API_DESCRIPTOR_SET_H_

#include "absl/strings/string_view.h"

namespace sealbox::server {

// A serialized google.protobuf.FileDescriptorSet, made by protoc at build time from
// proto/ with --include_imports and --include_source_info: each file after the
// files it imports, with the source comments reflection clients show. The linked
// C++ descriptors cannot serve here: they carry no comments, and the built-in
// health service has none at all.
absl::string_view ApiDescriptorSet();

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_REFLECTION_API_DESCRIPTOR_SET_H_
