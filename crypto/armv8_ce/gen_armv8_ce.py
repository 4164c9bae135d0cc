#!/usr/bin/env python3
"""Writes armv8_ce.S, the AArch64 Crypto Extensions AES-GCM kernel.

    python3 crypto/armv8_ce/gen_armv8_ce.py > crypto/armv8_ce/armv8_ce.S

The main loops are straight-line code with the AES rounds and GHASH interleaved;
there are twelve of them (seal/open x AES-128/192/256 x plain/EOR3), which this
script writes from one description. The .S it prints is the checked-in source the
build uses: edit this script, not the .S.

Design:
- Main loop: sixteen blocks per iteration, as two groups of eight (eight AES
  states in registers), every round key in a register, and the GHASH of sixteen
  blocks aggregated with H^16..H^1 and reduced once. Sealing hashes the previous
  iteration's sixteen ciphertext blocks (read back from `out`), so GHASH never
  waits for this iteration's AES; opening hashes the blocks it decrypts.
- Counter blocks: in the main loop, loaded whole from a 256-byte buffer on the
  stack that holds the caller's counter block sixteen times, whose low words
  (byte-swapped in a general register) each iteration writes for the next one: no
  vector operation per block, and a store an iteration before its load. Elsewhere
  loaded from the caller's counter buffer with the low word inserted by
  `mov v.s[3], w`. The counter blocks are public; nothing secret touches the stack.
- Stores: two blocks per STP.
- GHASH: Karatsuba, with each power's high^low half precomputed; two blocks at a
  time, LD2 splitting their 64-bit halves while loading. The 256-bit sum is
  reduced with two PMULLs by the reflected polynomial constant.
- The EOR3 kernel is the plain one with three-way XORs (accumulation, reduction,
  keystream ^ last round key ^ text) done by EOR3, and TBL in place of LD2 to
  gather GHASH halves (see GATHER).
- Tails: eight, then four blocks (the same pieces, not pipelined), then one at a
  time. Everything is branch-free on data; branches depend on lengths and the key
  size only.

Why (llvm-mca on the main loops): sixteen blocks per reduction beat eight and
four on both the Cortex-A57 and the Neoverse N2 model, and every loop runs at its
resource bound there (A57: AESE, AESMC and PMULL all on its one W pipe; N2: the
count of V0+V1 operations), so what is left to save is operations. The Neoverse V1
model sends every vector operation to any of four pipes, so there the bound is the
count of all of them, lane inserts and store data included: hence the counter
buffer on the stack and the paired stores (docs/PERFORMANCE.md has the figures).
"""

import sys

# ---------------------------------------------------------------------------
# Schedule layout (KeySchedule::bytes) and constants.
# ---------------------------------------------------------------------------
ROUNDS_OFFSET = 240  # uint32: 10, 12 or 14
HTAB_OFFSET = 256  # GHASH key table, addressed through `htab`
NPAIRS = 8  # powers H^16..H^1 in pairs
# htab + 48*p (p = 0..7): the powers H^(16-2p), H^(15-2p): high halves, low halves,
#   and high^low (Karatsuba middle) of the two, one vector each.
# htab + 384: H^1 (high half, low half); htab + 400: H^1 high^low, both lanes.
SINGLE_H = 48 * NPAIRS
SINGLE_HM = SINGLE_H + 16

# The seal/open stack frame: d8-d15 (AAPCS64), then the main loop's sixteen counter
# blocks (public: the caller's counter block with each low word filled in).
FRAME = 64 + 16 * 16
CTR_BUF = 64

# .rodata, addressed through `cst`.
CST_REVERSE = 0  # TBL index: the 16 bytes reversed
CST_POLY = 16  # the reduction constant, both lanes
CST_GATHER_HI = 32  # TBL indexes of the "tbl" gather (below)
CST_GATHER_LO = 48

# How GHASH splits two blocks into high halves, low halves and middles:
#   "ld2": LD2 separates the 64-bit halves while loading, REV64 orders the bytes;
#          single-cycle operations on the Cortex-A57 model, where LD2 is a load.
#   "tbl": two TBLs gather and byte-order at once: two operations fewer per pair,
#          which on Neoverse N2 makes AES-128 EOR3 0.893 instead of 0.928 cpb, but
#          a TBL costs five pipe cycles on the A57 model (1.427 instead of 1.391).
# The plain kernel is what SHA3-less cores (A57/A72 class) run, so it uses "ld2";
# every core with SHA3 (Neoverse N2/V1/V2 class) has a single-cycle TBL, so the
# EOR3 kernel uses "tbl".
GATHER = {"plain": "ld2", "eor3": "tbl"}

# Where the GHASH pieces go among each half's AES pieces (first, last, as
# fractions). Every loop already runs at its resource bound in both llvm-mca
# models, so this is not critical; it spreads the work evenly.
SPREAD = (0.1, 0.9)


# ---------------------------------------------------------------------------
# Output.
# ---------------------------------------------------------------------------

class Asm:
    def __init__(self):
        self.lines = []

    def raw(self, s=""):
        self.lines.append(s)

    def op(self, s):
        self.lines.append("\t" + s)

    def ops(self, units):
        """Emits a list of units (lists of instructions and // comments)."""
        for u in units:
            for s in u:
                self.lines.append("\t" + s)

    def comment(self, s):
        for line in s.strip("\n").split("\n"):
            self.lines.append(("// " + line).rstrip())

    def label(self, name):
        self.lines.append(name + ":")

    def text(self):
        return "\n".join(self.lines) + "\n"


def U(*instrs):
    """A unit: instructions ("op args") that stay together when interleaving."""
    out = []
    for s in instrs:
        if s.startswith("//"):
            out.append(s)
        else:
            op, _, args = s.partition(" ")
            out.append(op + ("\t" + args if args else ""))
    return out


def req(asm, mapping, forms=("v",)):
    """Defines NAME .req vN (and NAME_q, NAME_d for the q and d views)."""
    names = []
    for name, num in mapping:
        for form in forms:
            alias = name if form == "v" else "%s_%s" % (name, form)
            asm.raw("%s\t.req\t%s%d" % (alias, form, num))
            names.append(alias)
    return names


def req_gpr(asm, mapping):
    for name, reg in mapping:
        asm.raw("%s\t.req\t%s" % (name, reg))
    return [name for name, _ in mapping]


def unreq(asm, names):
    for n in names:
        asm.raw("\t.unreq\t%s" % n)


def ghash_regs(base):
    """The nine GHASH registers from v<base>: gA, gB consecutive for LD2/TBL."""
    names = ["gA", "gB", "gC", "hk", "pr0", "pr1", "acc_h", "acc_l", "acc_m"]
    return [(n, base + i) for i, n in enumerate(names)]


# ---------------------------------------------------------------------------
# GHASH.
#
# Representation. A block read as a 128-bit big-endian integer is GCM's
# polynomial with its bits reflected (the top bit is the x^0 coefficient). PMULL
# multiplies 64-bit halves of that integer, so a block enters as rev64(block):
# d0 = high half, d1 = low half ("rep" form). Carry-less products of reflected
# operands come out shifted by one bit; the key powers are stored as
# rep(H^i * x^-1), which cancels the shift. Between reductions the running hash is
# kept as the integer in natural lane order (d0 = low half, d1 = high half), which
# is just the block's 16 bytes reversed ("U" form).
#
# For a 256-bit sum hh*2^128 + mid*2^64 + ll (of high, middle and low products),
# reduction folds the low 128 bits into the high ones, 64 bits at a time, using
# x^128 = x^7 + x^2 + x + 1, which in reflected form means: for a 64-bit word z
# at bit 0, add z * 0xc2000000_00000000 at bit 64 and z itself at bit 128.
# ---------------------------------------------------------------------------

def ghash_pair_units(p, first, gather, variant, src_off):
    """Adds two blocks at gsrc (+src_off) times the powers of pair p into
    acc_h/acc_l/acc_m (or starts them, when `first`, after adding the running
    hash, in acc_m, into the first block)."""
    hi_pow, lo_pow = 2 * (NPAIRS - p), 2 * (NPAIRS - p) - 1
    if gather == "ld2":
        u = ["// GHASH: two blocks (for H^%d, H^%d): gA = high halves, gB = low" % (hi_pow, lo_pow),
             "ld2 {gA.2d, gB.2d}, [gsrc], #32",
             "rev64 gA.16b, gA.16b",
             "rev64 gB.16b, gB.16b"]
        if first:
            u += ["// add the running hash into the first block",
                  "mov pr0_d, acc_m.d[1]",
                  "eor gA.16b, gA.16b, pr0.16b",
                  "mov pr1_d, acc_m.d[0]",
                  "eor gB.16b, gB.16b, pr1.16b"]
        u += ["eor gC.16b, gA.16b, gB.16b"]
        hi, lo, mid = "gA", "gB", "gC"
    else:
        u = ["// GHASH: two blocks (for H^%d, H^%d): gC = high halves, gA = low" % (hi_pow, lo_pow),
             "ldp gA_q, gB_q, [gsrc, #%d]" % src_off]
        if first:
            u += ["// add the running hash into the first block",
                  "ldr pr0_q, [cst, #%d]" % CST_REVERSE,
                  "tbl pr1.16b, {acc_m.16b}, pr0.16b",
                  "eor gA.16b, gA.16b, pr1.16b"]
        u += ["ldr pr0_q, [cst, #%d]" % CST_GATHER_HI,
              "tbl gC.16b, {gA.16b, gB.16b}, pr0.16b",
              "ldr pr1_q, [cst, #%d]" % CST_GATHER_LO,
              "tbl gA.16b, {gA.16b, gB.16b}, pr1.16b",
              "eor gB.16b, gC.16b, gA.16b"]
        hi, lo, mid = "gC", "gA", "gB"
    units = [U(*u)]
    for j, (d, acc, what) in enumerate([(hi, "acc_h", "high"), (lo, "acc_l", "low"),
                                        (mid, "acc_m", "middle")]):
        u = ["// %s products" % what,
             "ldr hk_q, [htab, #%d]" % (48 * p + 16 * j),
             "pmull pr0.1q, %s.1d, hk.1d" % d,
             "pmull2 pr1.1q, %s.2d, hk.2d" % d]
        if first:
            u += ["eor %s.16b, pr0.16b, pr1.16b" % acc]
        elif variant == "eor3":
            u += ["eor3 %s.16b, %s.16b, pr0.16b, pr1.16b" % (acc, acc)]
        else:
            u += ["eor %s.16b, %s.16b, pr0.16b" % (acc, acc),
                  "eor %s.16b, %s.16b, pr1.16b" % (acc, acc)]
        units.append(U(*u))
    return units


def xor3(variant, dst, a, b, c):
    if variant == "eor3":
        return ["eor3 %s.16b, %s.16b, %s.16b, %s.16b" % (dst, a, b, c)]
    return ["eor %s.16b, %s.16b, %s.16b" % (dst, a, b),
            "eor %s.16b, %s.16b, %s.16b" % (dst, dst, c)]


def reduction_units(variant):
    """acc_h, acc_l, acc_m = sums of high, low, middle products -> acc_m = the
    reduced hash (U form)."""
    return [U("// GHASH reduction. First step: fold the low 64 bits (ll.d0)",
              "ldr hk_q, [cst, #%d]" % CST_POLY,
              "eor acc_h.16b, acc_h.16b, acc_l.16b",  # hh ^ ll
              "pmull pr0.1q, acc_l.1d, hk.1d",
              # Karatsuba: mid = pm ^ hh ^ ll; plus the first fold, then swapped
              # halves: its low half joins bits 64..127, its high half bits 128..191.
              *xor3(variant, "acc_m", "acc_m", "acc_h", "pr0"),
              "ext acc_m.16b, acc_m.16b, acc_m.16b, #8",
              "// second step: fold bits 64..127",
              "eor acc_l.16b, acc_l.16b, acc_m.16b",
              "pmull2 pr1.1q, acc_l.2d, hk.2d",
              *xor3(variant, "acc_m", "acc_m", "acc_h", "pr1"))]


def ghash_group_units(G, gather, variant):
    """GHASH of G (2..16, even) blocks at gsrc: times H^G..H^1, reduced."""
    units = []
    for p in range(G // 2):
        units += ghash_pair_units(p + NPAIRS - G // 2, p == 0, gather, variant, 32 * p)
    return units + reduction_units(variant)


def ghash_single_units(src, variant):
    """acc_m = (acc_m + the block at src) * H."""
    return [U("// GHASH of one block: (hash + block) * H",
              "ldr gA_q, [%s]" % src,
              "rev64 gA.16b, gA.16b",
              "ext pr0.16b, acc_m.16b, acc_m.16b, #8",
              "eor gA.16b, gA.16b, pr0.16b",
              "ext gB.16b, gA.16b, gA.16b, #8",
              "eor gB.16b, gB.16b, gA.16b",
              "ldr hk_q, [htab, #%d]" % SINGLE_H,
              "pmull acc_h.1q, gA.1d, hk.1d",
              "pmull2 acc_l.1q, gA.2d, hk.2d",
              "ldr hk_q, [htab, #%d]" % SINGLE_HM,
              "pmull acc_m.1q, gB.1d, hk.1d")] + reduction_units(variant)


# ---------------------------------------------------------------------------
# AES-CTR.
# ---------------------------------------------------------------------------

def counter_units(G):
    """blk0..blk(G-1) = counter blocks ctr .. ctr+G-1 (inc32); ctr += G."""
    units = []
    for i in range(G):
        u = ["// counter blocks: the caller's block, low word replaced"] if i == 0 else []
        u += ["rev ctr_be, ctr"] if i == 0 else ["add ctr_be, ctr, #%d" % i,
                                                 "rev ctr_be, ctr_be"]
        u += ["ldr blk%d_q, [ctr_p]" % i, "mov blk%d.s[3], ctr_be" % i]
        if i == G - 1:
            u += ["add ctr, ctr, #%d" % G]
        units.append(U(*u))
    return units


def loop_counter_units(base):
    """Main loop: blk0..blk7 = the counter blocks base..base+7 of this iteration,
    loaded whole from the stack buffer; the buffer's low words are then set for the
    next iteration (ctr + 16 + i), an iteration before they are loaded again, so the
    loads never wait on those stores. No vector operation per block (a lane insert
    is one on every model). ctr += 8."""
    units = []
    for i in range(8):
        slot = CTR_BUF + 16 * (base + i)
        u = ["// counter blocks from the stack; their low words for the next iteration"] \
            if i == 0 else []
        u += ["ldr blk%d_q, [sp, #%d]" % (i, slot),
              "add ctr_be, ctr, #%d" % (16 + i),
              "rev ctr_be, ctr_be",
              "str ctr_be, [sp, #%d]" % (slot + 12)]
        if i == 7:
            u += ["add ctr, ctr, #8"]
        units.append(U(*u))
    return units


def fill_counter_buffer(asm):
    """The stack buffer for the main loop's first iteration: the caller's counter
    block sixteen times, low words ctr .. ctr+15."""
    asm.comment("Counter blocks for the main loop's first iteration, on the stack.")
    asm.op("ldr	blk0_q, [ctr_p]")
    for i in range(16):
        slot = CTR_BUF + 16 * i
        asm.op("str	blk0_q, [sp, #%d]" % slot)
        asm.op("add	ctr_be, ctr, #%d" % i)
        asm.op("rev	ctr_be, ctr_be")
        asm.op("str	ctr_be, [sp, #%d]" % (slot + 12))


def round_units(G, nr):
    """The rounds, round by round across the blocks: AESE+AESMC pairs (fused on
    cores that fuse them), then the last AESE."""
    units = []
    for r in range(nr):
        for i in range(G):
            if r < nr - 1:
                units.append(U("aese blk%d.16b, rk%d.16b" % (i, r),
                               "aesmc blk%d.16b, blk%d.16b" % (i, i)))
            else:
                units.append(U("aese blk%d.16b, rk%d.16b" % (i, r)))
    return units


def final_units(G, nr, variant, base=0):
    """out = in ^ keystream, keystream = state ^ last round key; blocks stored in
    pairs (STP: one store-data operation for two blocks on the Neoverse V1 model)."""
    units = []
    for i in range(G):
        off = 16 * (base + i)
        u = ["ldr pt_q, [in_p, #%d]" % off]
        if variant == "eor3":
            u += ["eor3 blk%d.16b, blk%d.16b, pt.16b, rk%d.16b" % (i, i, nr)]
        else:
            u += ["eor pt.16b, pt.16b, rk%d.16b" % nr,
                  "eor blk%d.16b, blk%d.16b, pt.16b" % (i, i)]
        if G == 1:
            u += ["str blk%d_q, [out_p, #%d]" % (i, off)]
        elif i % 2:
            u += ["stp blk%d_q, blk%d_q, [out_p, #%d]" % (i - 1, i, off - 16)]
        units.append(U(*u))
    return units


def aes_group_units(G, nr, variant, base=0):
    return counter_units(G) + round_units(G, nr) + final_units(G, nr, variant, base)


def spread(slots, extra, frac=SPREAD):
    """Places the units `extra` among `slots`, evenly from the slot at fraction
    frac[0] to the one at frac[1], keeping both lists' order."""
    n = len(extra)
    first = int(round(frac[0] * (len(slots) - 1)))
    last = int(round(frac[1] * (len(slots) - 1)))
    at = {}
    for j in range(n):
        pos = first + ((last - first) * j) // (n - 1) if n > 1 else first
        at.setdefault(pos, []).append(extra[j])
    out = []
    for i, s in enumerate(slots):
        out.append(s)
        out += at.get(i, [])
    return out


def crypt_group_units(G, nr, variant, gather):
    """G (4 or 8) blocks of counters, rounds, final XORs and stores, with the
    GHASH of the G blocks at gsrc woven into the counters and rounds (so all of
    its loads come before the stores: in == out is fine)."""
    slots = spread(counter_units(G) + round_units(G, nr), ghash_group_units(G, gather, variant))
    return slots + final_units(G, nr, variant)


def crypt_loop_units(nr, variant, gather):
    """The main-loop body: two groups of eight blocks, with the GHASH of sixteen
    blocks at gsrc woven in; the first eight blocks' GHASH in the first group, so
    that when opening in place they are read before that group's stores."""
    gh = ghash_group_units(16, gather, variant)
    half = 4 * (NPAIRS // 2)  # units of the first four pairs
    first = spread(loop_counter_units(0) + round_units(8, nr), gh[:half])
    second = spread(final_units(8, nr, variant) + loop_counter_units(8) + round_units(8, nr),
                    gh[half:])
    return first + second + final_units(8, nr, variant, base=8)


# ---------------------------------------------------------------------------
# Functions.
# ---------------------------------------------------------------------------

def func_begin(asm, name, proto):
    asm.raw("")
    asm.comment(proto)
    asm.raw("\t.globl\t%s" % name)
    asm.raw("\t.type\t%s, %%function" % name)
    asm.raw("\t.p2align\t6")
    asm.label(name)


def func_end(asm, name):
    asm.raw("\t.size\t%s, .-%s" % (name, name))


def load_cst(asm, reg="cst"):
    asm.op("adrp\t%s, .Lconsts" % reg)
    asm.op("add\t%s, %s, :lo12:.Lconsts" % (reg, reg))


def hash_to_u(asm):
    asm.op("ldr\tacc_m_q, [x_p]")
    asm.op("ldr\tpr0_q, [cst, #%d]" % CST_REVERSE)
    asm.op("tbl\tacc_m.16b, {acc_m.16b}, pr0.16b")


def u_to_hash(asm):
    asm.op("ldr\tpr0_q, [cst, #%d]" % CST_REVERSE)
    asm.op("tbl\tacc_m.16b, {acc_m.16b}, pr0.16b")
    asm.op("str\tacc_m_q, [x_p]")


def crypt_function(asm, variant, mode):
    gather = GATHER[variant]
    suffix = "_eor3" if variant == "eor3" else ""
    name = "sealbox_armv8_ce_%s_blocks%s" % (mode, suffix)
    what = ("Seal: out = in ^ AES(counter++), then GHASH of out" if mode == "seal"
            else "Open: GHASH of in, out = in ^ AES(counter++)")
    func_begin(asm, name,
               "void %s(const uint8_t* schedule, uint8_t counter[16],\n"
               "    uint8_t x[16], const uint8_t* in, uint8_t* out, size_t blocks);\n"
               "%s, over `blocks` whole blocks; in == out allowed."
               % (name, what))
    names = req_gpr(asm, [("ks", "x0"), ("ctr_p", "x1"), ("x_p", "x2"), ("in_p", "x3"),
                          ("out_p", "x4"), ("nblk", "x5"), ("ngrp", "x6"), ("nrest", "x7"),
                          ("ctr", "w8"), ("ctr_be", "w9"), ("gsrc", "x10"), ("htab", "x11"),
                          ("cst", "x12"), ("tmp", "x13"), ("nr_w", "w14")])
    names += req(asm, ghash_regs(8), forms=("v", "q", "d"))
    L = ".L%s%s" % (mode, suffix)
    asm.op("cbz\tnblk, %s_ret" % L)
    asm.comment("AAPCS64: the low halves of v8-v15 are callee-saved. Above them, the\n"
                "counter buffer (CTR_BUF).")
    asm.op("stp\td8, d9, [sp, #-%d]!" % FRAME)
    asm.op("stp\td10, d11, [sp, #16]")
    asm.op("stp\td12, d13, [sp, #32]")
    asm.op("stp\td14, d15, [sp, #48]")
    load_cst(asm)
    asm.op("add\thtab, ks, #%d" % HTAB_OFFSET)
    asm.op("ldr\tctr, [ctr_p, #12]")
    asm.op("rev\tctr, ctr")
    hash_to_u(asm)
    asm.op("lsr\tngrp, nblk, #4")
    asm.op("ldr\tnr_w, [ks, #%d]" % ROUNDS_OFFSET)
    asm.op("cmp\tnr_w, #12")
    asm.op("b.lt\t%s_128" % L)
    asm.op("b.eq\t%s_192" % L)
    for nr in (14, 12, 10):
        bits = {10: 128, 12: 192, 14: 256}[nr]
        crypt_path(asm, variant, gather, mode, nr, "%s_%d" % (L, bits),
                   "sealbox_armv8_ce_%s%d%s" % (mode, bits, suffix), L)
    asm.label("%s_done" % L)
    asm.op("rev\tctr_be, ctr")
    asm.op("str\tctr_be, [ctr_p, #12]")
    u_to_hash(asm)
    asm.op("ldp\td10, d11, [sp, #16]")
    asm.op("ldp\td12, d13, [sp, #32]")
    asm.op("ldp\td14, d15, [sp, #48]")
    asm.op("ldp\td8, d9, [sp], #%d" % FRAME)
    asm.label("%s_ret" % L)
    asm.op("ret")
    unreq(asm, names)
    func_end(asm, name)


def crypt_path(asm, variant, gather, mode, nr, L, loop_name, F):
    """One key size's part of a seal/open function: rk0..rk<nr> in the top
    registers, blk0..blk7 in v0-v7, GHASH in v8-v16."""
    bits = {10: 128, 12: 192, 14: 256}[nr]
    asm.raw("")
    asm.comment("---- AES-%d ----" % bits)
    asm.label(L)
    names = req(asm, [("rk%d" % i, 32 - (nr + 1) + i) for i in range(nr + 1)])
    names += req(asm, [("blk%d" % i, i) for i in range(8)], forms=("v", "q"))
    # The text block of the final XOR: a spare register, or for AES-256 (none
    # spare) hk, which GHASH holds only within one piece.
    names += req(asm, [("pt", 17 if nr < 14 else 11)], forms=("v", "q"))
    asm.op("mov\ttmp, ks")
    for i in range(0, nr + 1, 4):
        k = min(4, nr + 1 - i)
        asm.op("ld1\t{%s}, [tmp], #%d" % (", ".join("rk%d.16b" % (i + j) for j in range(k)), 16 * k))
    advance = ["add in_p, in_p, #256", "add out_p, out_p, #256"]
    if gather == "tbl":
        advance.append("add gsrc, gsrc, #256")  # LD2 advances it itself
    asm.op("cbz\tngrp, %s_tail8" % L)
    if mode == "seal":
        asm.comment("The first sixteen blocks: AES only; their GHASH is in the next iteration.")
        asm.ops(aes_group_units(8, nr, variant) + aes_group_units(8, nr, variant, base=8))
        asm.ops([U("add in_p, in_p, #256", "add out_p, out_p, #256",
                   "sub gsrc, out_p, #256", "subs ngrp, ngrp, #1")])
        asm.op("b.eq\t%s_last" % L)
        asm.comment("Main loop: AES of sixteen blocks, GHASH of the sixteen before them\n"
                    "(their ciphertext, read back from out).")
    else:
        asm.op("mov\tgsrc, in_p")
        asm.comment("Main loop: GHASH and AES of the same sixteen blocks.")
    fill_counter_buffer(asm)
    asm.raw("\t.p2align\t6")
    asm.label(loop_name + "_loop")
    asm.ops(crypt_loop_units(nr, variant, gather))
    asm.ops([U(*advance, "subs ngrp, ngrp, #1")])
    asm.op("b.ne\t%s_loop" % loop_name)
    asm.label(loop_name + "_loop_end")
    if mode == "seal":
        asm.label("%s_last" % L)
        asm.ops(ghash_group_units(16, gather, variant))
    for G, bit, next_label in ((8, 3, "tail4"), (4, 2, "tail1")):
        asm.label("%s_tail%d" % (L, G))
        asm.comment("%d blocks, if that many remain." % G)
        asm.op("tbz\tnblk, #%d, %s_%s" % (bit, L, next_label))
        if mode == "seal":
            asm.ops(aes_group_units(G, nr, variant))
            asm.op("mov\tgsrc, out_p")
            asm.ops(ghash_group_units(G, gather, variant))
        else:
            asm.op("mov\tgsrc, in_p")
            asm.ops(crypt_group_units(G, nr, variant, gather))
        asm.op("add\tin_p, in_p, #%d" % (16 * G))
        asm.op("add\tout_p, out_p, #%d" % (16 * G))
    asm.label("%s_tail1" % L)
    asm.comment("Then one block at a time.")
    asm.op("ands\tnrest, nblk, #3")
    asm.op("b.eq\t%s_done" % F)
    asm.label("%s_one" % L)
    if mode == "open":
        asm.ops(ghash_single_units("in_p", variant))
    asm.ops(aes_group_units(1, nr, variant))
    if mode == "seal":
        asm.ops(ghash_single_units("out_p", variant))
    asm.op("add\tin_p, in_p, #16")
    asm.op("add\tout_p, out_p, #16")
    asm.op("subs\tnrest, nrest, #1")
    asm.op("b.ne\t%s_one" % L)
    asm.op("b\t%s_done" % F)
    unreq(asm, names)


def ghash_function(asm, variant):
    gather = GATHER[variant]
    suffix = "_eor3" if variant == "eor3" else ""
    name = "sealbox_armv8_ce_ghash%s" % suffix
    func_begin(asm, name,
               "void %s(const uint8_t* schedule, uint8_t x[16],\n"
               "    const uint8_t* in, size_t blocks);\n"
               "x = (x ^ block) * H for each block; eight at a time with H^8..H^1." % name)
    names = req_gpr(asm, [("ks", "x0"), ("x_p", "x1"), ("gsrc", "x2"), ("nblk", "x3"),
                          ("ngrp", "x6"), ("nrest", "x7"), ("htab", "x11"), ("cst", "x12")])
    names += req(asm, ghash_regs(16), forms=("v", "q", "d"))  # v16-v24: nothing to save
    L = ".Lghash%s" % suffix
    asm.op("cbz\tnblk, %s_ret" % L)
    load_cst(asm)
    asm.op("add\thtab, ks, #%d" % HTAB_OFFSET)
    hash_to_u(asm)
    asm.op("lsr\tngrp, nblk, #3")
    asm.op("cbz\tngrp, %s_single" % L)
    asm.label("%s_loop" % L)
    asm.ops(ghash_group_units(8, gather, variant))
    if gather == "tbl":
        asm.op("add\tgsrc, gsrc, #128")
    asm.op("subs\tngrp, ngrp, #1")
    asm.op("b.ne\t%s_loop" % L)
    asm.label("%s_single" % L)
    asm.op("ands\tnrest, nblk, #7")
    asm.op("b.eq\t%s_store" % L)
    asm.label("%s_one" % L)
    asm.ops(ghash_single_units("gsrc", variant))
    asm.op("add\tgsrc, gsrc, #16")
    asm.op("subs\tnrest, nrest, #1")
    asm.op("b.ne\t%s_one" % L)
    asm.label("%s_store" % L)
    u_to_hash(asm)
    asm.label("%s_ret" % L)
    asm.op("ret")
    unreq(asm, names)
    func_end(asm, name)


def encrypt_block_function(asm):
    name = "sealbox_armv8_ce_encrypt_block"
    func_begin(asm, name,
               "void %s(const uint8_t* schedule, const uint8_t in[16],\n"
               "    uint8_t out[16]);\n"
               "out = AES_K(in)." % name)
    asm.raw("""ks	.req	x0
in_p	.req	x1
out_p	.req	x2
nr_w	.req	w3
state	.req	v0
state_q	.req	q0
rk	.req	v1
rk_q	.req	q1
	ldr	nr_w, [ks, #%d]
	ldr	state_q, [in_p]
	ldr	rk_q, [ks], #16
	sub	nr_w, nr_w, #1
1:	aese	state.16b, rk.16b
	aesmc	state.16b, state.16b
	ldr	rk_q, [ks], #16
	subs	nr_w, nr_w, #1
	b.ne	1b
	aese	state.16b, rk.16b
	ldr	rk_q, [ks]
	eor	state.16b, state.16b, rk.16b
	str	state_q, [out_p]
	movi	state.16b, #0
	movi	rk.16b, #0
	ret
	.unreq	ks
	.unreq	in_p
	.unreq	out_p
	.unreq	nr_w
	.unreq	state
	.unreq	state_q
	.unreq	rk
	.unreq	rk_q""" % ROUNDS_OFFSET)
    func_end(asm, name)


def multiply_units(a, out):
    """out = rep(a * H) for a in rep form, from v16 = rep(H * x^-1) and v31 = its
    high^low in both lanes; v30 = the reduction constant; v3-v6 scratch."""
    return [U("ext v6.16b, %s.16b, %s.16b, #8" % (a, a),
              "eor v6.16b, v6.16b, %s.16b" % a,
              "pmull v3.1q, %s.1d, v16.1d" % a,
              "pmull2 v4.1q, %s.2d, v16.2d" % a,
              "pmull v5.1q, v6.1d, v31.1d",
              "eor v3.16b, v3.16b, v4.16b",
              "pmull v6.1q, v4.1d, v30.1d",
              "eor v5.16b, v5.16b, v3.16b",
              "eor v5.16b, v5.16b, v6.16b",
              "ext v5.16b, v5.16b, v5.16b, #8",
              "eor v4.16b, v4.16b, v5.16b",
              "pmull2 v6.1q, v4.2d, v30.2d",
              "eor v5.16b, v5.16b, v3.16b",
              "eor v5.16b, v5.16b, v6.16b",
              "ext %s.16b, v5.16b, v5.16b, #8" % out)]


def expand_key_function(asm):
    name = "sealbox_armv8_ce_expand_key"
    func_begin(asm, name,
               "void %s(const uint8_t* key, size_t key_bytes,\n"
               "    uint8_t* schedule);\n"
               "AES key expansion (SubWord by AESE: no tables), then H = AES_K(0) and\n"
               "the GHASH key table of H^1..H^16. Constant time: branches and addresses\n"
               "depend on the key size only." % name)
    asm.raw("""key	.req	x0
kbytes	.req	x1
ks	.req	x2
nk	.req	x3
nwords	.req	x5
i	.req	x6
j	.req	x10
t	.req	w7
rcon	.req	w9
	lsr	nk, kbytes, #2
	add	w4, w3, #6		// rounds
	str	w4, [ks, #%d]
	add	w5, w4, #1
	lsl	w5, w5, #2		// words of round keys
	// The key itself is the first nk words.
	mov	i, #0
1:	ldr	t, [key, i, lsl #2]
	str	t, [ks, i, lsl #2]
	add	i, i, #1
	cmp	i, nk
	b.lo	1b
	movi	v1.16b, #0
	mov	rcon, #1
	mov	j, #0			// i mod nk
	// w[i] = w[i-nk] ^ f(w[i-1]), f per FIPS-197 5.2
2:	sub	x11, i, #1
	ldr	t, [ks, x11, lsl #2]
	cbnz	j, 3f
	ror	t, t, #8		// RotWord
	dup	v0.4s, t		// SubWord: equal columns make ShiftRows a no-op
	aese	v0.16b, v1.16b
	mov	t, v0.s[0]
	eor	t, t, rcon
	lsl	rcon, rcon, #1		// rcon *= x in GF(2^8)
	lsr	w12, rcon, #8
	mov	w13, #0x11b
	mul	w12, w12, w13
	eor	rcon, rcon, w12
	b	4f
3:	cmp	nk, #8			// AES-256: SubWord alone at i mod 8 == 4
	ccmp	j, #4, #0, eq
	b.ne	4f
	dup	v0.4s, t
	aese	v0.16b, v1.16b
	mov	t, v0.s[0]
4:	sub	x11, i, nk
	ldr	w12, [ks, x11, lsl #2]
	eor	t, t, w12
	str	t, [ks, i, lsl #2]
	add	j, j, #1
	cmp	j, nk
	csel	j, xzr, j, eq
	add	i, i, #1
	cmp	i, nwords
	b.lo	2b

	// H = AES_K(0^128).
	movi	v0.16b, #0
	mov	x11, ks
	ldr	q2, [x11], #16
	sub	w12, w4, #1
5:	aese	v0.16b, v2.16b
	aesmc	v0.16b, v0.16b
	ldr	q2, [x11], #16
	subs	w12, w12, #1
	b.ne	5b
	aese	v0.16b, v2.16b
	ldr	q2, [x11]
	eor	v0.16b, v0.16b, v2.16b

	// v16 = rep(H * x^-1): the reflected integer shifted left by one; if the
	// bit shifted out was set, add x^-1 = x^127 + x^6 + x + 1, in reflected form
	// 0xc2000000_00000000_00000000_00000001. Branch-free.
	rev64	v0.16b, v0.16b
	mov	x5, v0.d[0]		// high 64 bits
	mov	x6, v0.d[1]		// low 64 bits
	asr	x7, x5, #63
	extr	x5, x5, x6, #63
	lsl	x6, x6, #1
	mov	x8, #0xc200000000000000
	and	x8, x8, x7
	eor	x5, x5, x8
	and	x7, x7, #1
	eor	x6, x6, x7
	fmov	d16, x5
	mov	v16.d[1], x6
	ext	v31.16b, v16.16b, v16.16b, #8	// high^low of H, in both lanes
	eor	v31.16b, v31.16b, v16.16b""" % ROUNDS_OFFSET)
    load_cst(asm, "x12")
    asm.op("ldr\tq30, [x12, #%d]" % CST_POLY)
    asm.comment("The pair table, lowest powers first: for m = 1..8, v17 = rep(H^(2m-1) *\n"
                "x^-1) and v18 = rep(H^2m * x^-1) become pair 8-m: high halves, low halves,\n"
                "middles.")
    asm.op("add\tx11, ks, #%d" % (HTAB_OFFSET + 48 * (NPAIRS - 1)))
    asm.op("mov\tv17.16b, v16.16b")
    for m in range(1, NPAIRS + 1):
        if m > 1:
            asm.ops(multiply_units("v18", "v17"))
        asm.ops(multiply_units("v17", "v18"))
        asm.op("trn1\tv2.2d, v18.2d, v17.2d")
        asm.op("trn2\tv3.2d, v18.2d, v17.2d")
        asm.op("eor\tv4.16b, v2.16b, v3.16b")
        asm.op("st1\t{v2.16b, v3.16b, v4.16b}, [x11]")
        if m < NPAIRS:
            asm.op("sub\tx11, x11, #48")
    asm.op("add\tx11, ks, #%d" % (HTAB_OFFSET + SINGLE_H))
    asm.op("stp\tq16, q31, [x11]")
    asm.comment("Leave no key material in vector registers.")
    for r in (0, 1, 2, 3, 4, 5, 6, 16, 17, 18, 31):
        asm.op("movi\tv%d.16b, #0" % r)
    asm.op("ret")
    unreq(asm, ["key", "kbytes", "ks", "nk", "nwords", "i", "j", "t", "rcon"])
    func_end(asm, name)


HEADER = """\
// GENERATED by gen_armv8_ce.py; edit that and rerun:
//   python3 crypto/armv8_ce/gen_armv8_ce.py > crypto/armv8_ce/armv8_ce.S
//
// AES-GCM with the AArch64 Crypto Extensions (AESE/AESMC, PMULL). The "_eor3"
// entry points also use EOR3 (FEAT_SHA3): call them only where the CPU has it.
// The C view is in armv8_ce_kernel.cc; the design is in gen_armv8_ce.py.
//
// Schedule layout (KeySchedule::bytes, 672 of them: kScheduleBytes in the .cc):
//   0    round keys rk0..rk14, 16 bytes each (AES-128 uses rk0..rk10)
//   240  rounds (uint32: 10, 12, 14)
//   256  GHASH key table: for p = 0..7, 48 bytes for the powers H^(16-2p) and
//        H^(15-2p): their high halves, their low halves, their high^low
//   640  H: high half, low half; 656: its high^low in both lanes
// Every power is stored as rep(H^i * x^-1): rev64 of the block, i.e. the
// reflected polynomial's high 64 bits in lane 0; the x^-1 cancels the one-bit
// shift of reflected products.
//
// Main loops: sixteen blocks per iteration, straight-line, one per key size,
// direction and kernel, from sealbox_armv8_ce_{seal,open}{128,192,256}[_eor3]_loop
// to the matching _loop_end (the b.ne back is the last instruction).
"""


def main():
    asm = Asm()
    asm.raw(HEADER)
    asm.raw("\t.arch\tarmv8.2-a+crypto+sha3")
    asm.raw("\t.text")
    expand_key_function(asm)
    encrypt_block_function(asm)
    ghash_function(asm, "plain")
    ghash_function(asm, "eor3")
    for variant in ("plain", "eor3"):
        for mode in ("seal", "open"):
            crypt_function(asm, variant, mode)
    asm.raw("")
    asm.raw("\t.section\t.rodata")
    asm.raw("\t.p2align\t4")
    asm.label(".Lconsts")
    asm.comment("TBL index: the 16 bytes reversed (block <-> U form).")
    asm.op(".byte\t" + ", ".join(str(15 - i) for i in range(16)))
    asm.comment("x^-1 without its x^0 term, reflected: the reduction multiplier, per lane.")
    asm.op(".quad\t0xc200000000000000, 0xc200000000000000")
    if "tbl" in GATHER.values():
        asm.comment("TBL indexes over two blocks {a, b}: the high halves of a and b,\n"
                    "byte-reversed; then the low halves.")
        asm.op(".byte\t7, 6, 5, 4, 3, 2, 1, 0, 23, 22, 21, 20, 19, 18, 17, 16")
        asm.op(".byte\t15, 14, 13, 12, 11, 10, 9, 8, 31, 30, 29, 28, 27, 26, 25, 24")
    asm.raw("")
    asm.raw("\t.section\t.note.GNU-stack, \"\", %progbits")
    sys.stdout.write(asm.text())


if __name__ == "__main__":
    main()
