// What SealStream's and OpenStream's messages mean, for StreamCall (stream_call.h).
#ifndef SEALBOX_SERVER_DATAPLANE_STREAM_HANDLERS_H_
#define SEALBOX_SERVER_DATAPLANE_STREAM_HANDLERS_H_

#include <memory>

#include "sealbox/v1/data.pb.h"
#include "server/dataplane/stream_call.h"
#include "server/engine/data_plane_engine.h"
#include "server/metrics/metrics.h"

namespace sealbox::server {

// Seals the plaintext chunks under the key's primary version: the stream header at
// once, then each segment as it fills, the last one at the half-close.
std::unique_ptr<StreamHandler> NewSealStreamHandler(DataPlaneEngine& engine, Metrics& metrics);

// Opens a stream ciphertext: plaintext leaves only segment by segment, each after
// its tag verified. A failed open counts against the caller's key.
std::unique_ptr<StreamHandler> NewOpenStreamHandler(DataPlaneEngine& engine, Metrics& metrics);

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_DATAPLANE_STREAM_HANDLERS_H_
