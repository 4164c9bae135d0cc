// AArch64 calling-convention checker (AAPCS64): see abi_check.h.
//
// A function must preserve x19-x29, the low 64 bits of v8-v15 (d8-d15) and sp.
// The trampoline loads a distinct canary into each of them, calls the function,
// and sets one bit per register that differs afterwards:
//   bits 0-10  x19-x29
//   bits 11-18 d8-d15
//   bit  19    sp (restored before anything else, so the report still arrives)

        .text

// Canaries: any values a function is unlikely to leave by chance.
        .section .rodata
        .p2align 3
canaries:
        .quad 0x5ea1b0c5a1c00019, 0x5ea1b0c5a1c00020, 0x5ea1b0c5a1c00021
        .quad 0x5ea1b0c5a1c00022, 0x5ea1b0c5a1c00023, 0x5ea1b0c5a1c00024
        .quad 0x5ea1b0c5a1c00025, 0x5ea1b0c5a1c00026, 0x5ea1b0c5a1c00027
        .quad 0x5ea1b0c5a1c00028, 0x5ea1b0c5a1c00029
        .quad 0x5ea1b0c5d0c00008, 0x5ea1b0c5d0c00009, 0x5ea1b0c5d0c00010
        .quad 0x5ea1b0c5d0c00011, 0x5ea1b0c5d0c00012, 0x5ea1b0c5d0c00013
        .quad 0x5ea1b0c5d0c00014, 0x5ea1b0c5d0c00015

// The stack pointer before the call, kept in memory: every register the callee
// must preserve is under test, so none can be trusted to hold it.
        .bss
        .p2align 3
saved_sp:
        .skip 8

        .text

// Scratch registers (caller-saved, ours to use around the call).
fn          .req x16
args        .req x17
table       .req x9
expected    .req x10
actual      .req x11
differs     .req w12
mask        .req w13

// Sets bit `bit` of mask if general register `reg` differs from canaries[index].
.macro check_x reg, index, bit
        ldr     expected, [table, #8 * \index]
        cmp     \reg, expected
        cset    differs, ne
        orr     mask, mask, differs, lsl #\bit
.endm

// Same for the low 64 bits of vector register `reg` (written dN).
.macro check_d reg, index, bit
        fmov    actual, \reg
        ldr     expected, [table, #8 * \index]
        cmp     actual, expected
        cset    differs, ne
        orr     mask, mask, differs, lsl #\bit
.endm

// uint32_t sealbox_abi_call(void (*fn)(void), const uint64_t args[6]);
        .globl  sealbox_abi_call
        .type   sealbox_abi_call, %function
        .p2align 2
sealbox_abi_call:
        // Save our caller's callee-saved registers: we are about to overwrite them.
        stp     x29, x30, [sp, #-160]!
        mov     x29, sp
        stp     x19, x20, [sp, #16]
        stp     x21, x22, [sp, #32]
        stp     x23, x24, [sp, #48]
        stp     x25, x26, [sp, #64]
        stp     x27, x28, [sp, #80]
        stp     d8, d9, [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]

        adrp    table, saved_sp
        mov     actual, sp
        str     actual, [table, :lo12:saved_sp]

        mov     fn, x0
        mov     args, x1

        adrp    table, canaries
        add     table, table, :lo12:canaries
        ldp     x19, x20, [table, #0]
        ldp     x21, x22, [table, #16]
        ldp     x23, x24, [table, #32]
        ldp     x25, x26, [table, #48]
        ldp     x27, x28, [table, #64]
        ldr     x29, [table, #80]
        ldp     d8, d9, [table, #88]
        ldp     d10, d11, [table, #104]
        ldp     d12, d13, [table, #120]
        ldp     d14, d15, [table, #136]

        ldp     x0, x1, [args, #0]
        ldp     x2, x3, [args, #16]
        ldp     x4, x5, [args, #32]
        blr     fn

        // sp first: our saved registers are addressed through it.
        adrp    table, saved_sp
        ldr     expected, [table, :lo12:saved_sp]
        mov     actual, sp
        cmp     actual, expected
        cset    differs, ne
        lsl     mask, differs, #19
        mov     sp, expected

        adrp    table, canaries
        add     table, table, :lo12:canaries
        check_x x19, 0, 0
        check_x x20, 1, 1
        check_x x21, 2, 2
        check_x x22, 3, 3
        check_x x23, 4, 4
        check_x x24, 5, 5
        check_x x25, 6, 6
        check_x x26, 7, 7
        check_x x27, 8, 8
        check_x x28, 9, 9
        check_x x29, 10, 10
        check_d d8, 11, 11
        check_d d9, 12, 12
        check_d d10, 13, 13
        check_d d11, 14, 14
        check_d d12, 15, 15
        check_d d13, 16, 16
        check_d d14, 17, 17
        check_d d15, 18, 18
        mov     w0, mask

        ldp     x19, x20, [sp, #16]
        ldp     x21, x22, [sp, #32]
        ldp     x23, x24, [sp, #48]
        ldp     x25, x26, [sp, #64]
        ldp     x27, x28, [sp, #80]
        ldp     d8, d9, [sp, #96]
        ldp     d10, d11, [sp, #112]
        ldp     d12, d13, [sp, #128]
        ldp     d14, d15, [sp, #144]
        ldp     x29, x30, [sp], #160
        ret
        .size   sealbox_abi_call, . - sealbox_abi_call

        .unreq  fn
        .unreq  args
        .unreq  table
        .unreq  expected
        .unreq  actual
        .unreq  differs
        .unreq  mask

        .section .note.GNU-stack, "", %progbits
