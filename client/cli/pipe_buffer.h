// Larger kernel buffers for the pipes the CLI reads and writes.
#ifndef SEALBOX_CLIENT_CLI_PIPE_BUFFER_H_
#define SEALBOX_CLIENT_CLI_PIPE_BUFFER_H_

namespace sealbox::client {

// If `fd` is a pipe, asks the kernel for a 1 MiB buffer (the unprivileged maximum
// by default): with the 64 KiB default, a stream's 1 MiB messages cost 16 wake-ups
// of the process at the other end each way. Best effort: a refusal changes nothing.
void EnlargePipeBuffer(int fd);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_PIPE_BUFFER_H_
