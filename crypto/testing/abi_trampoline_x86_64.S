// x86-64 calling-convention checker (System V ABI): see abi_check.h.
//
// A function must preserve rbx, rbp, r12-r15 and rsp (all vector registers are
// caller-saved on Linux). The trampoline loads a distinct canary into each of
// them, calls the function, and sets one bit per register that differs afterwards:
//   bits 0-5  rbx, rbp, r12, r13, r14, r15
//   bit  6    rsp (restored before anything else, so the report still arrives)

        .section .rodata
        .p2align 3
// Canaries: any values a function is unlikely to leave by chance.
canaries:
        .quad 0x5ea1b0c5a1c000b0, 0x5ea1b0c5a1c000b9, 0x5ea1b0c5a1c00012
        .quad 0x5ea1b0c5a1c00013, 0x5ea1b0c5a1c00014, 0x5ea1b0c5a1c00015

// The stack pointer before the call, kept in memory: every register the callee
// must preserve is under test, so none can be trusted to hold it.
        .bss
        .p2align 3
saved_rsp:
        .skip 8

        .text

// Scratch registers (caller-saved, ours to use around the call).
#define fn %rax
#define args %r11
#define mask %eax
#define differs %edx
#define differs_byte %dl

// Sets bit `bit` of mask if register `reg` differs from canaries[index].
.macro check reg, index, bit
        xor     differs, differs
        cmp     canaries + 8 * \index(%rip), \reg
        setne   differs_byte
        shl     $\bit, differs
        or      differs, mask
.endm

// uint32_t sealbox_abi_call(void (*fn)(void), const uint64_t args[6]);
        .globl  sealbox_abi_call
        .type   sealbox_abi_call, @function
        .p2align 4
sealbox_abi_call:
        // Save our caller's callee-saved registers: we are about to overwrite them.
        push    %rbx
        push    %rbp
        push    %r12
        push    %r13
        push    %r14
        push    %r15
        sub     $8, %rsp                // 16-byte stack alignment at the call
        mov     %rsp, saved_rsp(%rip)

        mov     %rdi, fn
        mov     %rsi, args

        mov     canaries + 0(%rip), %rbx
        mov     canaries + 8(%rip), %rbp
        mov     canaries + 16(%rip), %r12
        mov     canaries + 24(%rip), %r13
        mov     canaries + 32(%rip), %r14
        mov     canaries + 40(%rip), %r15

        mov     0(args), %rdi
        mov     8(args), %rsi
        mov     16(args), %rdx
        mov     24(args), %rcx
        mov     32(args), %r8
        mov     40(args), %r9
        call    *fn

        // rsp first: our saved registers are addressed through it.
        xor     mask, mask
        cmp     saved_rsp(%rip), %rsp
        setne   %al
        shl     $6, mask
        mov     saved_rsp(%rip), %rsp

        check   %rbx, 0, 0
        check   %rbp, 1, 1
        check   %r12, 2, 2
        check   %r13, 3, 3
        check   %r14, 4, 4
        check   %r15, 5, 5
        // mask is %eax: the return value.

        add     $8, %rsp
        pop     %r15
        pop     %r14
        pop     %r13
        pop     %r12
        pop     %rbp
        pop     %rbx
        ret
        .size   sealbox_abi_call, . - sealbox_abi_call

        .section .note.GNU-stack, "", @progbits
