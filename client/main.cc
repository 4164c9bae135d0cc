// sealbox: the command-line client of the sealbox service. `sealbox --help`.
#include <malloc.h>

#include <string>
#include <vector>

#include "client/cli/cli.h"

int main(int argc, char** argv) {
  // A stream moves 1 MiB messages through a few threads. With glibc's defaults each
  // such buffer comes from a fresh mmap (a page fault per 4 KiB touched) and goes
  // back to the kernel when freed, and each thread gets its own arena: measured, a
  // third of the CLI's CPU per MiB. Keep freed memory for reuse instead; the CLI's
  // peak stays a few MiB above its largest messages.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_ARENA_MAX, 1);
  return sealbox::client::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
