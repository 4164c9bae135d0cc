// The load generator's setup through the admin plane: the admin token from its
// file, then a fresh tenant with one key (kKey) and a data-plane token of its own,
// so that a run touches nothing else on the server it measures.
#ifndef SEALBOX_SERVER_BENCH_TENANT_H_
#define SEALBOX_SERVER_BENCH_TENANT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/channel.h"

namespace sealbox::load {

// The token in the file at `path`, surrounding whitespace dropped.
absl::StatusOr<std::string> ReadToken(const std::string& path);

// Creates tenant "bench-<pid>-<n>" with key kKey (AES-256-GCM, the default) and
// returns a token for it.
absl::StatusOr<std::string> CreateTenant(const std::shared_ptr<grpc::Channel>& channel,
                                         const std::string& admin_token);

}  // namespace sealbox::load

#endif  // SEALBOX_SERVER_BENCH_TENANT_H_
