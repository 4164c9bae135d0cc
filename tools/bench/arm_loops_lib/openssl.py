"""OpenSSL's loops, the rivals: Debian's arm64 libcrypto found and disassembled, its
CE main loops (stripped, so by the AESE/PMULL rule alone) measured."""

import glob
import os
import re

from .classify import classify
from .disasm import disassemble
from .loops import MIN_AESE, MIN_PMULL, find_loops, n_aese, n_pmull_q, prefix_of
from .mca import CE_CPUS, measure
from .report import Row


def openssl_version(path):
    with open(path, "rb") as f:
        m = re.search(rb"OpenSSL (3\.\d+)\.(\d+)", f.read())
    if not m:
        return "?", "?"
    return m.group(1).decode(), f"{m.group(1).decode()}.{m.group(2).decode()}"


def find_libcrypto(path):
    if os.path.isfile(path):
        return path
    hits = sorted(glob.glob(os.path.join(path, "usr/lib/aarch64-linux-gnu/libcrypto.so.*")))
    return hits[0] if hits else None


def openssl_rows(path, args, notes, save_prefix):
    """Rows for one libcrypto (or a folder holding one): its CE main loops."""
    lib = find_libcrypto(path)
    if not lib:
        notes.append(f"no arm64 libcrypto under {path}")
        return []
    major, full = openssl_version(lib)
    sections = disassemble(args.objdump, lib)
    loops = [lp for lp in find_loops(sections)
             if n_aese(lp.body) >= MIN_AESE and n_pmull_q(lp.body) >= MIN_PMULL]
    loops = [lp for lp in loops if not any(lp.contains(o) for o in loops)]
    if not loops:
        notes.append(f"OpenSSL {full} ({lib}): no loop with >= {MIN_AESE} AESE and "
                     f">= {MIN_PMULL} PMULL")
    rows = []
    for lp in loops:
        body = lp.body
        info = classify(body, prefix_of(lp))
        where = f"0x{body[0].addr:x}..0x{body[-1].addr:x}"
        cpb = measure(body, CE_CPUS, args.mca, args.iterations,
                      16 * info["blocks"] if info["blocks"] else 0,
                      save_prefix(f"openssl-{full}-{where}"))
        rows.append(Row(source=f"OpenSSL {full}", major=major, ours=False,
                        loop=f"{where} ({len(body)} insns)", neon=False, cpb=cpb,
                        **info))
    return rows
