// Runs one bidirectional streaming call (SealStream, OpenStream):
//
//   this thread:    start | chunk | chunk | ... | half-close
//   reader thread:  each response's bytes, written to the output as they arrive
//
// Both directions run at once, so memory stays at a few chunks whatever the
// input's size, and gRPC flow control paces the reading of the input.
#ifndef SEALBOX_CLIENT_CLI_STREAM_PUMP_H_
#define SEALBOX_CLIENT_CLI_STREAM_PUMP_H_

#include <algorithm>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "client/cli/input.h"
#include "client/cli/output.h"
#include "client/cli/progress.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/sync_stream.h"

namespace sealbox::client {

// Bytes per request message: the largest of the sizes the server handles best
// (64 KiB - 1 MiB), as fewer messages cost less CPU per MiB at both ends.
inline constexpr size_t kStreamChunkBytes = 1024 * 1024;

struct StreamResult {
  grpc::Status status;        // the call's own
  absl::Status input_error;   // reading the input failed; the call was cancelled
  absl::Status output_error;  // writing the output failed; the call was cancelled
};

// Sends `start`, then `already_read` (bytes taken from the input to look at it),
// then the rest of `input`. `chunk_of(request)` is the request's mutable chunk
// field; `bytes_of(response)` the response's chunk.
template <typename Request, typename Response, typename ChunkOf, typename BytesOf>
StreamResult PumpStream(grpc::ClientContext& context,
                        grpc::ClientReaderWriterInterface<Request, Response>& stream,
                        const Request& start, const std::string& already_read, Input& input,
                        Output& output, Progress& progress, ChunkOf chunk_of, BytesOf bytes_of) {
  StreamResult result;
  std::thread reader([&] {
    Response response;
    // Read to the end even after a failed write, so that Finish may be called.
    while (stream.Read(&response)) {
      if (!result.output_error.ok()) continue;
      absl::Status written = output.Write(bytes_of(response));
      if (!written.ok()) {
        result.output_error = written;
        context.TryCancel();
      }
    }
  });

  bool open = stream.Write(start);
  Request request;
  for (size_t offset = 0; open && offset < already_read.size();) {
    size_t n = std::min(kStreamChunkBytes, already_read.size() - offset);
    chunk_of(request)->assign(already_read, offset, n);
    open = stream.Write(request);
    progress.Advance(n);
    offset += n;
  }
  bool input_ended = false;
  while (open) {
    // Write copies the message out, so one chunk buffer serves the whole stream.
    std::string* chunk = chunk_of(request);
    absl::Status read = input.ReadChunk(kStreamChunkBytes, *chunk);
    if (!read.ok()) {
      result.input_error = read;
      context.TryCancel();
      break;
    }
    if (chunk->empty()) {
      input_ended = true;
      break;
    }
    open = stream.Write(request);
    progress.Advance(chunk->size());
  }
  // Half-close only after the whole input: the server then seals the last segment.
  if (input_ended) stream.WritesDone();
  reader.join();
  result.status = stream.Finish();
  return result;
}

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_STREAM_PUMP_H_
