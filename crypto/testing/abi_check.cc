#include "crypto/testing/abi_check.h"

#include <iterator>

namespace sealbox::crypto::test {
namespace {

// Bit i of the trampoline's mask names kRegisters[i]; the order is the one the
// trampoline for this architecture tests them in.
#if defined(__aarch64__)
constexpr const char* kRegisters[] = {
    "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",
    "x29", "d8",  "d9",  "d10", "d11", "d12", "d13", "d14", "d15", "sp",
};
#elif defined(__x86_64__)
constexpr const char* kRegisters[] = {"rbx", "rbp", "r12", "r13", "r14", "r15", "rsp"};
#else
#error "no ABI trampoline for this architecture (crypto/testing/abi_trampoline_*.S)"
#endif

}  // namespace

int AbiRegisterCount() { return static_cast<int>(std::size(kRegisters)); }

const char* AbiRegisterName(int bit) { return kRegisters[bit]; }

std::string ClobberedRegisters(uint32_t mask) {
  std::string names;
  auto add = [&names](const char* name) {
    if (!names.empty()) names += ' ';
    names += name;
  };
  for (int bit = 0; bit < AbiRegisterCount(); ++bit) {
    if ((mask >> bit) & 1) add(kRegisters[bit]);
  }
  // A bit past the known registers would mean the trampoline and this list differ.
  if (mask >> AbiRegisterCount()) add("(unknown bits)");
  return names;
}

}  // namespace sealbox::crypto::test
