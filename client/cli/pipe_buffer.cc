#include "client/cli/pipe_buffer.h"

#include <fcntl.h>
#include <sys/stat.h>

namespace sealbox::client {

void EnlargePipeBuffer(int fd) {
  constexpr int kPipeBytes = 1 << 20;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  if (fcntl(fd, F_GETPIPE_SZ) >= kPipeBytes) return;
  (void)fcntl(fd, F_SETPIPE_SZ, kPipeBytes);
}

}  // namespace sealbox::client
