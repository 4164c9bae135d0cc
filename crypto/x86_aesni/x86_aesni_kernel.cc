// The x86_aesni kernel: AES-NI + PCLMULQDQ with SSE encodings, for every CPU with
// AES-NI (Westmere, and Atom-class cores without AVX). The loops are
// aesni_loops.inc.
#include <immintrin.h>

#include "crypto/kernel/kernel.h"
#include "crypto/x86_aesni/x86_aesni.h"
#include "crypto/x86_common/clmul.h"
#include "crypto/x86_common/x86_schedule.h"

namespace sealbox::crypto::kernel {
namespace {

#define SEALBOX_AESNI_LOOPS_TARGET SEALBOX_X86_AESNI
#include "crypto/x86_aesni/aesni_loops.inc"
#undef SEALBOX_AESNI_LOOPS_TARGET

}  // namespace

const Kernel kX86AesniKernel = {
    /*name=*/"x86_aesni",
    /*constant_time=*/true,
    /*expand_key=*/x86::ExpandKey,
    /*encrypt_block=*/x86::EncryptBlock,
    /*ghash=*/x86::Ghash,
    /*seal_blocks=*/SealBlocks,
    /*open_blocks=*/OpenBlocks,
    /*schedule_bytes=*/x86::kScheduleBytes,
};

}  // namespace sealbox::crypto::kernel
