// The x86_aesni_avx kernel: the x86_aesni loops (aesni_loops.inc) with VEX
// encodings, for CPUs with AES-NI, PCLMULQDQ and AVX but no VAES (Sandy Bridge to
// Skylake/Cascade Lake, AMD Zen 1 and 2).
#include <immintrin.h>

#include "crypto/kernel/kernel.h"
#include "crypto/x86_aesni/x86_aesni.h"
#include "crypto/x86_common/clmul.h"
#include "crypto/x86_common/x86_schedule.h"

namespace sealbox::crypto::kernel {
namespace {

#define SEALBOX_AESNI_LOOPS_TARGET __attribute__((target("sse2,ssse3,aes,pclmul,avx")))
#include "crypto/x86_aesni/aesni_loops.inc"
#undef SEALBOX_AESNI_LOOPS_TARGET

}  // namespace

const Kernel kX86AesniAvxKernel = {
    /*name=*/"x86_aesni_avx",
    /*constant_time=*/true,
    /*expand_key=*/x86::ExpandKey,
    /*encrypt_block=*/x86::EncryptBlock,
    /*ghash=*/x86::Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
    /*schedule_bytes=*/x86::kScheduleBytes,
};

}  // namespace sealbox::crypto::kernel
