"""Our kernels' loops: per function of our unstripped objects, the CE main loops and
the NEON loops (inner loops unrolled), with notes on functions left unmeasured."""

import glob
import os
import re
import subprocess

from .classify import classify
from .disasm import branch_target, disassemble
from .loops import (MIN_AESE, MIN_PMULL, MIN_TBL, count, find_loops, n_aese, n_pmull_q,
                    n_sbox_tbl, n_tbl, prefix_of, trace)
from .mca import CE_CPUS, NEON_CPUS, measure
from .report import Row


def object_files(path):
    if os.path.isfile(path):
        return [path]
    objs = set(glob.glob(os.path.join(path, "**", "*.o"), recursive=True))
    # Bazel may build a source both ways; the non-PIC object is what binaries link.
    return sorted(o for o in objs
                  if not (o.endswith(".pic.o") and o[:-len(".pic.o")] + ".o" in objs))


def kernel_name(path, sym):
    """armv8_ce_eor3 / armv8_ce / armv8_neon, from the object's path and the symbol."""
    where = f"{path} {sym or ''}"
    if "armv8_ce" in where:
        eor3 = "eor3" in os.path.basename(path).lower() or "eor3" in (sym or "").lower() \
            or "armv8_ce_eor3" in path
        return "armv8_ce_eor3" if eor3 else "armv8_ce"
    if "armv8_neon" in where:
        return "armv8_neon"
    return os.path.basename(path)


def short_name(sym):
    """`void ns::(anonymous namespace)::CtrQuads<10>(unsigned char const*, ...)` -> CtrQuads<10>."""
    if not sym:
        return "?"
    s = sym.replace("(anonymous namespace)::", "")
    s = s.split("(")[0] if "(" in s else s
    s = s.split(" ")[-1]
    return s.split("::")[-1] or sym


def neon_entries(sections):
    """{function symbol: entry name} for functions whose own name contains "armv8_neon",
    and for the functions they tail-call (b), since the compiler often leaves the
    named entry point as a one-branch wrapper around a local copy of the loop."""
    out = {}
    for name, insns in sections.items():
        index = {insn.addr: insn for insn in insns}
        for insn in insns:
            entry = short_name(insn.sym)
            if "armv8_neon" not in entry:
                continue
            out.setdefault(insn.sym, entry)
            if insn.mn != "b":
                continue
            target = None
            if insn.reloc and insn.reloc[0] == "R_AARCH64_JUMP26":
                ref = insn.reloc[1]
                if ref in sections and sections[ref]:
                    target = sections[ref][0].sym
                else:
                    target = ref
            else:
                t = branch_target(insn)
                target = index[t].sym if t in index else None
            if target and target != insn.sym:
                out.setdefault(target, entry)
    return out


def ce_loops(sections, loops, objname, notes):
    """[(loop, body, False, note)]: each function's CE main loops, else its largest loop
    with AESE and PMULL ("below rule"); notes name GCM-shaped functions left out."""
    innermost = [lp for lp in loops if not any(lp.contains(o) for o in loops)]
    chosen = []
    by_sym = {}
    for lp in innermost:
        b = lp.body
        if n_aese(b) and n_pmull_q(b):
            by_sym.setdefault(b[0].sym, []).append(lp)
    for sym, lps in by_sym.items():
        main = [lp for lp in lps if n_aese(lp.body) >= MIN_AESE
                and n_pmull_q(lp.body) >= MIN_PMULL]
        if main:
            chosen += [(lp, lp.body, False, None) for lp in main]
        else:
            big = max(lps, key=lambda lp: n_aese(lp.body) + n_pmull_q(lp.body))
            chosen.append((big, big.body, False, f"below rule: {n_aese(big.body)} AESE, "
                           f"{n_pmull_q(big.body)} PMULL"))
    # Functions with AESE and PMULL whose loops were not measured: say why.
    measured = {lp.body[0].sym for lp, _, _, _ in chosen}
    for insns in sections.values():
        # Only functions shaped like a GCM kernel: as many AESE and PMULL as a main loop.
        aese, pmull = {}, {}
        for x in insns:
            if x.mn == "aese":
                aese[x.sym] = aese.get(x.sym, 0) + 1
            elif x.mn in ("pmull", "pmull2") and ".1q" in x.ops:
                pmull[x.sym] = pmull.get(x.sym, 0) + 1
        syms = {f for f in aese if aese[f] >= MIN_AESE and pmull.get(f, 0) >= MIN_PMULL}
        for sym in sorted(syms - measured):
            nested = any(lp.body[0].sym == sym and n_aese(lp.body) and
                         any(lp.contains(o) for o in loops) for lp in loops)
            why = ("its AESE/PMULL sit in nested loops (the compiler did not unroll the "
                   "inner ones); llvm-mca needs a flat loop body: unroll them" if nested
                   else "no loop holds both AESE and PMULL")
            notes.append(f"{objname}: {short_name(sym)} not measured: {why}")
    return chosen


def neon_loops(sections, loops, entries, inner_trips, objname, notes):
    """[(loop, straight-line body, True, note)]: outermost AES or GHASH loops without
    AESE; notes name NEON entry points none of whose loops qualified."""
    chosen = []
    outermost = [lp for lp in loops if not any(o.contains(lp) for o in loops)]
    found = set()
    for lp in outermost:
        tnotes = []
        b = trace(lp, loops, inner_trips, tnotes)
        sym = lp.body[0].sym
        if n_aese(b) or not (sym in entries or n_tbl(b) >= MIN_TBL):
            continue
        if not (n_tbl(b) >= MIN_TBL or count(b, lambda x: x.mn.startswith("pmull"))):
            continue  # a copy or tail loop in a NEON function: no AES, no GHASH
        found.add(entries.get(sym))
        chosen.append((lp, b, True, "; ".join(tnotes) or None))
    for entry in sorted({e for sym, e in entries.items() if short_name(sym) == e}):
        if entry in found:
            continue
        callees = set()
        for insns in sections.values():
            for x in insns:
                if x.mn == "bl" and entries.get(x.sym) == entry:
                    ref = x.reloc[1] if x.reloc else x.ops
                    if ref in sections and sections[ref]:
                        ref = sections[ref][0].sym
                    callees.add(short_name(re.sub(r"^[0-9a-f]+ <(.*)>$", r"\1", ref)))
        why = (f"it calls {', '.join(sorted(callees))} out of line, so its loops are not "
               "one straight-line body" if callees else "no backward branch found")
        notes.append(f"{objname}: {entry} has no loop this script can measure: {why}")
    return chosen


def our_row(obj, lp, body, neon, note, entries, args, save_prefix):
    """The table row of one chosen loop, its llvm-mca runs started."""
    info = classify(body, prefix_of(lp))
    if note:
        info["notes"].insert(0, note)
    sym = lp.body[0].sym or "?"
    name = short_name(sym)
    if sym in entries and entries[sym] != name:
        name = f"{entries[sym]} -> {name}"
    label = lp.body[0].label
    if label and label != sym:
        name = f"{name} [{short_name(label)}]"
    kname = kernel_name(obj, sym)
    if neon:
        kind = "+".join(k for k, c in (
            ("AES", n_sbox_tbl(body) >= MIN_TBL
             or re.search(r"aes|ctr", name, re.I) and n_tbl(body) >= MIN_TBL),
            ("GHASH", count(body, lambda x: x.mn.startswith("pmull")))) if c) or "?"
        info["notes"].insert(0, kind)
        info["kind"] = kind
        m = re.search(r"(128|192|256)", name)
        if "AES" not in kind:
            info["bits"] = None
        elif m:
            info["bits"] = int(m.group(1))
        else:
            info["notes"].append("key size not in the function name: taken as AES-128")
            info["bits"] = 128
    if not info["blocks"]:
        info["notes"].append("no data stores or loads found: cpb not derived")
    if kname == "armv8_ce" and info["eor3"]:
        info["notes"].insert(0, "WARNING: EOR3 in the plain kernel: it faults on cores "
                             "without SHA3 (A53, A57); built with +sha3?")
    tag = f"{kname}-{name}-0x{lp.body[0].addr:x}"
    cpb = measure(body, NEON_CPUS if neon else CE_CPUS, args.mca, args.iterations,
                  16 * info["blocks"] if info["blocks"] else 0, save_prefix(tag))
    return Row(source="ours", major=None, ours=True, kernel=kname,
               loop=f"{os.path.basename(obj)}: {name} @0x{lp.body[0].addr:x} "
               f"({len(body)} insns)",
               neon=neon, cpb=cpb, **info)


def our_rows(obj, args, notes, save_prefix):
    """Rows for one of our object files: CE main loops and NEON loops, per function."""
    try:
        sections = disassemble(args.objdump, obj)
    except subprocess.CalledProcessError as e:
        notes.append(f"{obj}: not disassembled ({(e.stderr or '').strip()[:120]})")
        return []
    loops = find_loops(sections)
    entries = neon_entries(sections)
    objname = os.path.basename(obj)
    chosen = ce_loops(sections, loops, objname, notes)
    chosen += neon_loops(sections, loops, entries, args.inner_trips, objname, notes)
    return [our_row(obj, lp, body, neon, note, entries, args, save_prefix)
            for lp, body, neon, note in chosen]
