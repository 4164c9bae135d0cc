// Calling-convention check for hand-written kernels: calls a function through an
// assembly trampoline that fills every callee-saved register with a canary value
// first, and reports which of them (and the stack pointer) differ on return.
//
//   std::string clobbered = test::AbiCheckedCall(kernel->ghash, schedule, x, in, n);
//   EXPECT_EQ(clobbered, "") << "ghash broke the calling convention";
//
// Checked: AArch64 x19-x29, d8-d15 (the low 64 bits of v8-v15) and sp; x86-64
// rbx, rbp, r12-r15 and rsp. The trampoline keeps state in a static variable: one
// call at a time (tests are single-threaded).
#ifndef SEALBOX_CRYPTO_TESTING_ABI_CHECK_H_
#define SEALBOX_CRYPTO_TESTING_ABI_CHECK_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

extern "C" {
// In abi_trampoline_<arch>.S: calls fn(args[0], ..., args[5]) (integer registers
// only) with canaries in the callee-saved registers; returns a bit mask of those
// that changed, bit i meaning test::AbiRegisterName(i).
uint32_t sealbox_abi_call(void (*fn)(void), const uint64_t args[6]);
}

namespace sealbox::crypto::test {

// Number of registers the trampoline checks, and each one's name.
int AbiRegisterCount();
const char* AbiRegisterName(int bit);

// The names of the registers set in a trampoline mask, space separated ("" if none).
std::string ClobberedRegisters(uint32_t mask);

// A value as the integer register it is passed in. Kernel arguments are pointers,
// references (passed as pointers) and sizes: nothing goes in vector registers.
template <typename Param, typename Arg>
uint64_t AsRegister(Arg&& arg) {
  if constexpr (std::is_reference_v<Param>) {
    return reinterpret_cast<uintptr_t>(&arg);
  } else if constexpr (std::is_pointer_v<Param>) {
    return reinterpret_cast<uintptr_t>(static_cast<Param>(arg));
  } else {
    static_assert(std::is_integral_v<Param>, "only integer and pointer arguments");
    return static_cast<uint64_t>(static_cast<Param>(arg));
  }
}

// Calls fn(args...) through the trampoline; returns the clobbered registers'
// names, "" when it kept the calling convention.
template <typename... Params, typename... Args>
std::string AbiCheckedCall(void (*fn)(Params...), Args&&... args) {
  static_assert(sizeof...(Params) <= 6, "at most six register arguments");
  static_assert(sizeof...(Params) == sizeof...(Args), "one value per parameter");
  const uint64_t words[6] = {AsRegister<Params>(std::forward<Args>(args))...};
  return ClobberedRegisters(sealbox_abi_call(reinterpret_cast<void (*)(void)>(fn), words));
}

}  // namespace sealbox::crypto::test

#endif  // SEALBOX_CRYPTO_TESTING_ABI_CHECK_H_
