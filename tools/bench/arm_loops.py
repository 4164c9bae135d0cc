#!/usr/bin/env python3
"""Predicted cycles per byte of AArch64 AES-GCM main loops, by llvm-mca.

QEMU is not a timing model, so this script measures the hot loops statically: it
disassembles each library or object file, finds its AES-GCM main loops, hands every loop
body to llvm-mca for a few CPU models and prints one markdown table, sealbox's kernels
beside OpenSSL's. `tools/dev bench arm` builds the kernels, extracts Debian's arm64
OpenSSL and runs this; it can also be run by hand:

  tools/bench/arm_loops.py --openssl .cache/arm64-openssl-bookworm \
      --ours bazel-bin/crypto/armv8_ce --save-asm /tmp/loops

The rules (the output repeats them in short):

* A loop is a backward branch (b, b.cond, cbz, cbnz, tbz, tbnz); its body runs from the
  branch target to the branch, both included. Bodies that call or return (bl, blr, br,
  ret) or hold data words are not loops of interest. Functions are FUNC or global
  symbols; other symbols in code (local assembly labels) only name the loop they start.
* A Crypto Extensions main loop is an innermost loop whose body holds at least 40 AESE
  and 8 PMULL/PMULL2 (.1q). In our own (unstripped) objects, a function with AESE and
  PMULL but no such loop still gets its largest such loop measured, marked "below
  rule"; a function with a main loop's worth of AESE/PMULL in nested loops is named in
  a note (llvm-mca needs one straight-line body).
* A NEON (no Crypto Extensions) loop has no AESE and is an outermost loop either in a
  function whose own name (not its namespace) contains "armv8_neon" or in a function
  such a one tail-calls (b), or anywhere with at least 16 TBL/TBX in its body (inner
  loops included). It is AES with >= 16 TBL/TBX over four-register (64-byte) tables,
  the S-box lookups (or >= 16 TBL/TBX of any kind in a function named aes/ctr), and
  GHASH with any PMULL (.8b or .1q); it is measured on cortex-a53. Inner loops (AES
  rounds, say) are unrolled into one straight-line body: as many times as a constant
  counter set in the outer body says (mov wN, #k ... subs wN, wN, #1 ... b.ne), else
  --inner-trips times. The key size of a NEON AES loop comes from the function name
  (128/192/256), else AES-128 is assumed.
* Blocks per iteration = bytes the output pointer advances per iteration / 16. A
  pointer is a register whose every write in the loop steps it by a constant (add #imm,
  post/pre-index writeback); the output pointer is one that stores go through (itself
  or a register copied from it, data = out + 16). A loop that stores nothing (GHASH)
  uses its input pointer the same way. Without such pointers: data bytes stored (else
  loaded) per iteration through any base register the loop writes, sp and x29 excepted.
* Rounds = AESE / blocks: 10, 12, 14 -> AES-128, -192, -256. If that is not a whole
  number of rounds, the number of distinct AESE destination registers is tried.
* Encrypt or decrypt, from register data flow around the loop (a value written late in
  one iteration reaches the next iteration's reads), in this order:
    enc  a value the loop stores also flows into a PMULL (GHASH hashes what it wrote);
    dec  a loaded value flows into both a PMULL and a store (ciphertext hashed and
         decrypted);
    else GHASH loads its input separately: enc when that load's pointer is (a copy of)
         the pointer the loop stores through, followed back through mov/add/sub #imm in
         the loop and the code before it (it reads back ciphertext it wrote), dec when
         it is the pointer the loop's other data loads go through.
* cpb = llvm-mca Total Cycles / iterations / (16 * blocks). Every body is fed the same
  way: addresses stripped, every branch target rewritten to a label at the top of the
  body, the closing backward branch kept.

This file reads the command line and ties the parts together; they live beside it in
arm_loops_lib/ (disasm, operands, loops, classify, mca, openssl, ours, report).
"""

import argparse
import os
import re
import shutil
import sys

# The modules beside this script; it runs as `python3 tools/bench/arm_loops.py`.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from arm_loops_lib.openssl import openssl_rows  # noqa: E402
from arm_loops_lib.ours import object_files, our_rows  # noqa: E402
from arm_loops_lib.report import print_report  # noqa: E402


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--openssl", action="append", default=None, metavar="DIR_OR_LIB",
                    help="an arm64 libcrypto.so, or a folder extracted by mmdebstrap "
                    "(default: .cache/arm64-openssl-bookworm and -trixie)")
    ap.add_argument("--ours", action="append", default=None, metavar="DIR_OR_OBJ",
                    help="our aarch64 object files, or folders searched for *.o "
                    "(default: bazel-bin/crypto/armv8_ce and armv8_neon)")
    ap.add_argument("--no-ours", action="store_true", help="OpenSSL rows only")
    ap.add_argument("--note", action="append", default=[],
                    help="a line to print under the table (tools/dev says why ours are missing)")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--inner-trips", type=int, default=10,
                    help="times an inner loop of a NEON loop is unrolled (default 10: "
                    "one trip per AES-128 round)")
    # LLVM 19 (Debian 12: llvm-19) is the first here with its own N1 and V1 models;
    # LLVM 14 runs all three on the Cortex-A57 model, LLVM 16 V1 on N2's.
    ap.add_argument("--mca", default=shutil.which("llvm-mca-19") or "llvm-mca")
    ap.add_argument("--objdump", default=shutil.which("aarch64-linux-gnu-objdump")
                    or shutil.which("llvm-objdump-16") or "objdump")
    ap.add_argument("--save-asm", metavar="DIR", help="write each loop body as fed to llvm-mca")
    args = ap.parse_args()

    if args.openssl is None:
        args.openssl = [p for p in (os.path.join(root, ".cache/arm64-openssl-bookworm"),
                                    os.path.join(root, ".cache/arm64-openssl-trixie"))
                        if os.path.exists(p)]
    if args.no_ours:
        args.ours = []
    elif args.ours is None:
        args.ours = [p for p in (os.path.join(root, "bazel-bin/crypto/armv8_ce"),
                                 os.path.join(root, "bazel-bin/crypto/armv8_neon"))
                     if os.path.exists(p)]
    if args.save_asm:
        os.makedirs(args.save_asm, exist_ok=True)

    rows, notes = [], list(args.note)

    def save_prefix(tag):
        return (os.path.join(args.save_asm, re.sub(r"[^\w.-]+", "_", tag)[:120])
                if args.save_asm else None)

    # OpenSSL: stripped, so loops are found by the AESE/PMULL rule alone.
    for path in args.openssl:
        rows += openssl_rows(path, args, notes, save_prefix)

    # Ours: unstripped objects, loops reported per function.
    objs = [o for p in args.ours for o in object_files(p)]
    if args.ours and not objs:
        notes.append("no object files under " + ", ".join(args.ours))
    for obj in objs:
        rows += our_rows(obj, args, notes, save_prefix)

    for r in rows:
        r.cpb = {cpu: f.result() for cpu, f in r.cpb.items()}
    print_report(rows, notes, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
