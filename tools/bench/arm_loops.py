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
"""

import argparse
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

MCA_ATTR = "+aes,+sha3"
CE_CPUS = ("cortex-a57", "neoverse-n1", "neoverse-v1", "neoverse-n2")
# The cores of the per-model comparison, and whether each has SHA3 (EOR3): which of
# our kernels dispatch picks there, and which OpenSSL loops can run there.
MODELS = (("neoverse-n1", "N1", False), ("neoverse-v1", "V1", True),
          ("neoverse-n2", "N2", True))
RATIO_TARGET = 1.10  # ours / OpenSSL 3.5 on every model, AES-128 and AES-256
NEON_CPUS = ("cortex-a53",)
MIN_AESE = 40
MIN_PMULL = 8
MIN_TBL = 16

# Targets from the issue: (cpu, key bits) -> max cpb. armv8_ce and its EOR3 variant.
CE_TARGETS = {("cortex-a57", 128): 1.35, ("cortex-a57", 256): 1.85,
              ("neoverse-n2", 128): 0.95, ("neoverse-n2", 256): 1.20}
NEON_TARGET = 29.0  # AES-128-GCM on cortex-a53, AES and GHASH loops added if separate
# What the issue measured the same way (main loop, cpb), to check the method against.
REFERENCE = {("3.0", 128): (1.41, 1.10), ("3.0", 256): (1.92, 1.35),
             ("3.5", 128): (1.42, 1.02), ("3.5", 256): (1.90, 1.27)}

BRANCHES = {"b", "cbz", "cbnz", "tbz", "tbnz"}
LEAVES = {"bl", "blr", "br", "ret", "braa", "brab", "blraa", "retaa", "retab"}
# Instructions whose first (destination) operand is also read.
READ_DEST = {"aese", "aesd", "ins", "bsl", "bit", "bif", "tbx", "sli", "sri", "mla",
             "mls", "fmla", "fmls", "movk", "bfi", "bfxil", "bfm", "usra", "ssra",
             "ursra", "srsra", "sadalp", "uadalp", "sdot", "udot", "sha1c", "sha1m",
             "sha1p", "sha1su0", "sha1su1", "sha256h", "sha256h2", "sha256su0",
             "sha256su1", "pmlal", "umlal", "umlal2", "smlal", "smlal2", "saba",
             "uaba", "sabal", "uabal"}
NO_DEST = {"cmp", "cmn", "tst", "ccmp", "ccmn", "fcmp", "fcmpe", "prfm", "prfum"}
SIZE = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "x": 8, "w": 4}
ARR_SIZE = {"16b": 16, "8h": 16, "4s": 16, "2d": 16, "1q": 16,
            "8b": 8, "4h": 8, "2s": 8, "1d": 8, "b": 1, "h": 2, "s": 4, "d": 8}


# --- disassembly ---------------------------------------------------------------

class Insn:
    __slots__ = ("addr", "mn", "ops", "sym", "label", "reloc")

    def __init__(self, addr, mn, ops, sym, label):
        self.addr, self.mn, self.ops, self.sym, self.label = addr, mn, ops, sym, label
        self.reloc = None


INSN_LINE = re.compile(r"\s+([0-9a-f]+):\t(\S+)\s*([^/]*)")
RELOC_LINE = re.compile(r"\s+[0-9a-f]+: (R_AARCH64_\w+)\s+(.*)$")
SYMBOL_LINE = re.compile(r"[0-9a-f]+ <(.*)>:$")


def function_symbols(objdump, path):
    """Names of the FUNC and global symbols; other (local, untyped) symbols in code,
    such as assembly labels, are labels inside a function."""
    text = subprocess.run([objdump, "-t", "-C", path], check=True, capture_output=True,
                          text=True).stdout
    out = set()
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ (.{7}) \S+\t[0-9a-f]+ (.*)$", line)
        if m and (m.group(1)[6] == "F" or m.group(1)[0] in "gu"):
            out.add(re.sub(r"^\.(hidden|protected|internal)\s+", "", m.group(2).strip()))
    return out


def disassemble(objdump, path):
    """Returns {section: [Insn]} in address order (objdump's `// ...` comments dropped).
    Insn.sym is the enclosing function (the last FUNC symbol; any symbol when the file
    has no symbol table, as in a stripped library), Insn.label the last symbol."""
    funcs = function_symbols(objdump, path)
    text = subprocess.run([objdump, "-d", "-r", "-C", "--no-show-raw-insn", path],
                          check=True, capture_output=True, text=True).stdout
    sections, cur, sym, label = {}, None, None, None
    for line in text.splitlines():
        if not line:
            continue
        if line[0] == " " or line[0] == "\t":
            m = INSN_LINE.match(line)
            if m and cur is not None:
                cur.append(Insn(int(m.group(1), 16), m.group(2), m.group(3).strip(), sym,
                                label))
                continue
            m = RELOC_LINE.match(line)
            if m and cur:
                cur[-1].reloc = (m.group(1), m.group(2).strip())
            continue
        if line.startswith("Disassembly of section "):
            cur = sections.setdefault(line[23:].rstrip(":"), [])
            continue
        m = SYMBOL_LINE.match(line)
        if m:
            label = m.group(1)
            if not funcs or label in funcs:
                sym = label
    return sections


def is_branch(mn):
    return mn in BRANCHES or mn.startswith("b.")


def branch_target(insn):
    m = re.search(r"\b([0-9a-f]+) <", insn.ops)
    return int(m.group(1), 16) if m else None


def split_ops(ops):
    out, depth, cur = [], 0, ""
    for ch in ops:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def regs_in(text):
    """Register ids ('v', n) / ('x', n) named in an operand, with {a-b} lists expanded."""
    out = []
    m = re.match(r"^\{\s*v(\d+)\.\w+\s*-\s*v(\d+)\.\w+\s*\}", text)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        n = a
        while True:
            out.append(("v", n))
            if n == b:
                break
            n = (n + 1) % 32
        return out
    for m in re.finditer(r"\b([vqdshbxw])(\d+)\b", text):
        out.append(("v" if m.group(1) in "vqdshb" else "x", int(m.group(2))))
    return out


def operand_bytes(text):
    """Bytes moved by the data operand(s) of a load or store."""
    total = 0
    m = re.match(r"^\{\s*v(\d+)\.(\w+)\s*-\s*v(\d+)\.\w+\s*\}(\[\d+\])?", text)
    if m:
        n = (int(m.group(3)) - int(m.group(1))) % 32 + 1
        size = ARR_SIZE.get(m.group(2), 16) if not m.group(4) else ARR_SIZE.get(m.group(2), 0)
        return n * size
    for m in re.finditer(r"\bv\d+\.(\w+)", text):
        total += ARR_SIZE.get(m.group(1), 16)
    if total:
        return total
    for m in re.finditer(r"\b([qdshbxw])\d+\b", text):
        total += SIZE[m.group(1)]
    return total


class Access:
    """A load or store: its data operands, base register and writeback."""

    def __init__(self, insn):
        ops = split_ops(insn.ops)
        addr_i = next(i for i, o in enumerate(ops) if o.startswith("["))
        self.data = ops[:addr_i]
        addr = ops[addr_i]
        base = re.match(r"^\[\s*(\w+)", addr).group(1)
        self.base = None if base in ("sp", "x29") else regs_in(base)[0] if regs_in(base) else None
        self.writeback = addr.endswith("!") or len(ops) > addr_i + 1
        self.addr_regs = regs_in(addr) + [r for o in ops[addr_i + 1:] for r in regs_in(o)]
        mn = insn.mn
        if mn in ("strb", "ldrb", "ldrsb"):
            self.bytes = len(self.data)
        elif mn in ("strh", "ldrh", "ldrsh"):
            self.bytes = 2 * len(self.data)
        elif mn == "ldrsw":
            self.bytes = 4
        else:
            self.bytes = sum(operand_bytes(o) for o in self.data)


def is_store(mn):
    return mn.startswith("st")


def is_load(mn):
    return mn.startswith("ld")


def defs_uses(insn):
    """(defs, uses) as sets of register ids."""
    mn, ops = insn.mn, split_ops(insn.ops)
    if is_store(mn) and "[" in insn.ops:
        acc = Access(insn)
        uses = {r for o in acc.data for r in regs_in(o)} | set(acc.addr_regs)
        defs = {acc.base} if acc.writeback and acc.base else set()
        if mn.startswith("stxr") or mn.startswith("stlxr"):  # status register
            defs |= set(regs_in(acc.data[0]))
        return defs, uses
    if is_load(mn) and "[" in insn.ops:
        acc = Access(insn)
        defs = {r for o in acc.data for r in regs_in(o)}
        uses = set(acc.addr_regs)
        if acc.writeback and acc.base:
            defs.add(acc.base)
        if any("[" in o for o in acc.data):  # ld1 {v0.s}[1]: one lane, the rest kept
            uses |= defs
        return defs, uses
    if is_branch(mn) or mn in NO_DEST or not ops:
        return set(), {r for o in ops for r in regs_in(o)}
    dest = regs_in(ops[0])
    uses = {r for o in ops[1:] for r in regs_in(o)}
    if mn in READ_DEST or (ops[0].startswith("v") and "[" in ops[0]):
        uses |= set(dest)  # also element writes: mov v0.d[1], x1 keeps v0.d[0]
    return set(dest), uses


# --- loops ---------------------------------------------------------------------

class Loop:
    def __init__(self, section, insns, start, end):
        self.section, self.insns, self.start, self.end = section, insns, start, end

    @property
    def body(self):
        return self.insns[self.start:self.end + 1]

    def contains(self, other):
        return (other.section == self.section and self.start <= other.start
                and other.end <= self.end and other is not self)


def find_loops(sections, max_len=6000):
    loops = []
    for name, insns in sections.items():
        index = {insn.addr: i for i, insn in enumerate(insns)}
        for i, insn in enumerate(insns):
            if not is_branch(insn.mn):
                continue
            t = branch_target(insn)
            if t is None or t > insn.addr or t not in index or i - index[t] > max_len:
                continue
            body = insns[index[t]:i + 1]
            if any(x.mn in LEAVES or x.mn.startswith(".") or x.mn == "udf" for x in body):
                continue
            loops.append(Loop(name, insns, index[t], i))
    # Two branches back to one target: one loop, the longer body.
    best = {}
    for lp in loops:
        key = (lp.section, lp.start)
        if key not in best or lp.end > best[key].end:
            best[key] = lp
    return sorted(best.values(), key=lambda lp: (lp.section, lp.start))


def count(body, pred):
    return sum(1 for x in body if pred(x))


def n_aese(body):
    return count(body, lambda x: x.mn == "aese")


def n_pmull_q(body):
    return count(body, lambda x: x.mn in ("pmull", "pmull2") and ".1q" in x.ops)


def n_tbl(body):
    return count(body, lambda x: x.mn in ("tbl", "tbx"))


def n_sbox_tbl(body):
    """TBL/TBX over a four-register (64-byte) table: S-box lookups, not permutations."""
    return count(body, lambda x: x.mn in ("tbl", "tbx")
                 and re.search(r"\{\s*v(\d+)\.16b\s*-\s*v(\d+)\.16b\s*\}", x.ops)
                 and len(regs_in(split_ops(x.ops)[1])) == 4)


def data_bytes(body):
    """(stored, loaded) bytes per iteration through registers the loop advances."""
    written = set()
    for x in body:
        written |= defs_uses(x)[0]
    stored = loaded = 0
    for x in body:
        if "[" not in x.ops or not (is_store(x.mn) or is_load(x.mn)):
            continue
        acc = Access(x)
        if acc.base is None or acc.base not in written:
            continue
        if is_store(x.mn):
            stored += acc.bytes
        else:
            loaded += acc.bytes
    return stored, loaded


def self_step(insn, reg):
    """The constant this instruction adds to `reg` when it only steps it (add/sub with an
    immediate, or a load/store writeback), else None."""
    ops = split_ops(insn.ops)
    if insn.mn in ("add", "sub") and len(ops) == 3 and regs_in(ops[0]) == [reg] \
            and regs_in(ops[1]) == [reg]:
        m = re.match(r"^#(0x[0-9a-f]+|\d+)$", ops[2])
        if m:
            return int(m.group(1), 0) * (1 if insn.mn == "add" else -1)
    if "[" in insn.ops and (is_load(insn.mn) or is_store(insn.mn)):
        acc = Access(insn)
        if acc.base == reg and acc.writeback:
            i = next(i for i, o in enumerate(ops) if o.startswith("["))
            m = re.search(r"#(-?(?:0x[0-9a-f]+|\d+))", ops[i + 1] if len(ops) > i + 1 else ops[i])
            if m:
                return int(m.group(1), 0)
    return None


def pointer_walk(body):
    """(stored, loaded) bytes per iteration from the loop's pointers: registers whose
    every write in the loop steps them by a constant (out += 64, ld1 {...}, [x1], #16),
    counted for the stores and loads addressed through them or through registers
    derived from them (data = in + 16). None where no such pointer is found."""
    defs = {}
    for x in body:
        for reg in defs_uses(x)[0]:
            defs.setdefault(reg, []).append(x)
    steps = {}
    for reg, writers in defs.items():
        if reg[0] != "x":
            continue
        st = [self_step(x, reg) for x in writers]
        if all(v is not None for v in st) and sum(st):
            steps[reg] = abs(sum(st))
    stored = loaded = None
    for reg, step in steps.items():
        derived, grew = {reg}, True
        while grew:
            grew = False
            for x in body:
                ops = split_ops(x.ops)
                if x.mn in ("add", "sub", "mov") and len(ops) >= 2 and regs_in(ops[0]) \
                        and regs_in(ops[0])[0] not in derived \
                        and set(regs_in(ops[1])) & derived \
                        and all(not regs_in(o) for o in ops[2:]):
                    derived.add(regs_in(ops[0])[0])
                    grew = True
        for x in body:
            if "[" not in x.ops or not (is_load(x.mn) or is_store(x.mn)):
                continue
            acc = Access(x)
            if not set(acc.addr_regs) & derived:
                continue
            if is_store(x.mn):
                stored = max(stored or 0, step)
            else:
                loaded = max(loaded or 0, step)
    return stored, loaded


def direction(body, prefix=()):
    """('enc' | 'dec' | '?', how) from register data flow around the loop (a value
    written late in one iteration reaches the next one's reads):
      enc  a value the loop stores also flows into a PMULL (GHASH hashes the
           ciphertext it wrote), or, failing that, no loaded value flows into both a
           PMULL and a store while some loaded value does reach a PMULL (GHASH reads
           back ciphertext an earlier iteration stored);
      dec  a loaded value flows into both a PMULL and a stored value (the ciphertext
           is hashed and decrypted)."""
    n = len(body)
    du = [defs_uses(x) for x in body]
    last_def = {}  # (j, reg) -> producer index, cyclic
    users = {}     # (producer, reg) -> [consumer index]
    for j in range(n):
        for reg in du[j][1]:
            for k in list(range(j - 1, -1, -1)) + list(range(n - 1, j - 1, -1)):
                if reg in du[k][0]:
                    last_def[(j, reg)] = k
                    users.setdefault((k, reg), []).append(j)
                    break
    pmulls = [j for j, x in enumerate(body) if x.mn in ("pmull", "pmull2")]
    stores = [j for j, x in enumerate(body) if is_store(x.mn) and "[" in x.ops]
    loads = [j for j, x in enumerate(body) if is_load(x.mn) and "[" in x.ops]
    if not pmulls or not stores:
        return "?", ""
    store_data = {j: {r for o in Access(body[j]).data for r in regs_in(o)} for j in stores}

    def reaches(seeds):
        """Instructions a value flows into from (producer, reg) seeds; stores only
        through their data operands."""
        hit, todo, seen = set(), list(seeds), set(seeds)
        while todo:
            k, reg = todo.pop()
            for j in users.get((k, reg), []):
                if j in store_data and reg not in store_data[j]:
                    continue
                hit.add(j)
                for d in du[j][0]:
                    if (j, d) not in seen and not (j in store_data):
                        seen.add((j, d))
                        todo.append((j, d))
        return hit

    pm = set(pmulls)
    for j in stores:
        for reg in store_data[j]:
            k = last_def.get((j, reg))
            if k is not None and reaches([(k, reg)]) & pm:
                return "enc", "stored value hashed"
    hashed, crypted = [], []  # loads feeding only GHASH / feeding a store
    for j in loads:
        acc = Access(body[j])
        hit = reaches([(j, r) for o in acc.data for r in regs_in(o)])
        if hit & pm and hit & set(stores):
            return "dec", "loaded value hashed and stored"
        if hit & pm:
            hashed.append(j)
        elif hit & set(stores):
            crypted.append(j)
    if not hashed:
        return "?", ""
    # GHASH loads its input on its own: through the output pointer (it hashes what an
    # earlier iteration wrote: encrypt) or the input pointer (decrypt)? Follow the
    # base register back through copies (mov/add/sub #imm) in the loop, then before it.
    out_bases = {Access(body[j]).base for j in stores} - {None}
    in_bases = {Access(body[j]).base for j in crypted} - {None}
    code = list(prefix) + list(body)
    for j in hashed:
        reg, pos = Access(body[j]).base, len(prefix) + j
        for _ in range(8):
            if reg is None:
                break
            if reg in out_bases:
                return "enc", "GHASH input read back from memory"
            if reg in in_bases:
                return "dec", "GHASH input loaded separately"
            src = None
            for k in range(pos - 1, -1, -1):
                x = code[k]
                if reg in defs_uses(x)[0] and self_step(x, reg) is None:
                    ops = split_ops(x.ops)
                    if x.mn in ("mov", "add", "sub") and len(ops) >= 2 and \
                            all(not regs_in(o) for o in ops[2:]) and regs_in(ops[1]):
                        src, pos = regs_in(ops[1])[0], k
                    break
            reg = src
    return "?", "GHASH input from a pointer of unknown origin"


def counted_trips(insns, outer_start, inner):
    """Trips of a count-down inner loop whose counter the outer body sets to a constant
    (mov wN, #k ... subs wN, wN, #1 ... b.ne), else None."""
    body = inner.body
    close = body[-1]
    reg = None
    if close.mn in ("cbnz", "b.ne", "b.gt"):
        if close.mn == "cbnz":
            reg = split_ops(close.ops)[0]
        else:
            for x in reversed(body[:-1]):
                ops = split_ops(x.ops)
                if x.mn in ("subs", "sub") and len(ops) == 3 and ops[0] == ops[1] \
                        and ops[2] == "#0x1":
                    reg = ops[0]
                    break
    if reg is None:
        return None
    for x in reversed(insns[outer_start:inner.start]):
        ops = split_ops(x.ops)
        if ops and ops[0] == reg:
            m = None
            if x.mn == "mov" and len(ops) == 2:
                m = re.match(r"^#(0x[0-9a-f]+|\d+)$", ops[1])
            return int(m.group(1), 0) if m else None
    return None


def prefix_of(loop, limit=600):
    """The instructions of the loop's function before the loop (at most `limit`)."""
    sym, out = loop.insns[loop.start].sym, []
    for x in reversed(loop.insns[max(0, loop.start - limit):loop.start]):
        if x.sym != sym:
            break
        out.append(x)
    return out[::-1]


def trace(loop, all_loops, trips, notes=None):
    """The loop body as one straight line, each inner loop's body repeated: as many times
    as a constant counter says, else `trips` times. Notes say which."""
    inner = [lp for lp in all_loops if loop.contains(lp)]
    top = [lp for lp in inner if not any(o.contains(lp) for o in inner)]
    out, i = [], loop.start
    for lp in sorted(top, key=lambda lp: lp.start):
        out += loop.insns[i:lp.start]
        n = counted_trips(loop.insns, loop.start, lp)
        if notes is not None:
            notes.append(f"inner loop @0x{lp.body[0].addr:x} unrolled x{n or trips}"
                         + (" (its constant counter)" if n else " (--inner-trips)"))
        out += trace(lp, all_loops, trips, notes) * (n or trips)
        i = lp.end + 1
    out += loop.insns[i:loop.end + 1]
    return out


def classify(body, prefix=()):
    """Dict of the loop's shape: blocks, key bits, EOR3, direction, note. `prefix`: the
    code before the loop in its function, for where its pointers come from."""
    aese = n_aese(body)
    way, how = direction(body, prefix)
    stored, loaded = pointer_walk(body)
    walked = bool(stored or loaded)
    if not walked:
        stored, loaded = data_bytes(body)
    info = {"aese": aese, "pmull": n_pmull_q(body), "tbl": n_tbl(body), "kind": None,
            "pmull_any": count(body, lambda x: x.mn in ("pmull", "pmull2")),
            "eor3": count(body, lambda x: x.mn == "eor3") > 0,
            "dir": way, "stored": stored, "loaded": loaded, "notes": []}
    if how == "GHASH input read back from memory":
        info["notes"].append("enc: GHASH reads back the ciphertext it stored")
    elif how and way == "?":
        info["notes"].append(how)
    nbytes = stored or loaded
    blocks = nbytes / 16 if nbytes else None
    rounds = {10: 128, 12: 192, 14: 256}
    info["bits"] = None
    if aese:
        dests = len({split_ops(x.ops)[0].split(".")[0] for x in body if x.mn == "aese"})
        if blocks and aese / blocks in rounds:
            info["bits"] = rounds[aese / blocks]
        elif aese / dests in rounds:
            info["notes"].append(f"{nbytes} data bytes per iteration do not give whole "
                                 f"rounds; blocks from {dests} AESE destinations")
            blocks, info["bits"] = dests, rounds[aese / dests]
        else:
            info["notes"].append(f"{aese} AESE over {blocks} blocks: key size unknown")
    if not walked and nbytes:
        info["notes"].append("no constant-step pointer: bytes counted per load/store")
    if not stored and loaded:
        info["notes"].append("stores nothing: bytes from the input pointer")
    fwd = count(body[:-1], lambda x: is_branch(x.mn) and (branch_target(x) or 0) > x.addr)
    if fwd:
        info["notes"].append(f"{fwd} forward branch(es) inside the body: llvm-mca runs "
                             "every instruction, as if none were taken")
    info["blocks"] = blocks
    return info


# --- llvm-mca ------------------------------------------------------------------

def mca_source(body):
    lines = [".Lloop:"]
    for x in body:
        ops = re.sub(r"\b[0-9a-f]+ <[^>]*>", ".Lloop", x.ops)
        lines.append(f"\t{x.mn}\t{ops}".rstrip())
    return "\n".join(lines) + "\n"


def mca_command(mca, cpu, iterations, path="LOOP.s"):
    return [mca, "-mtriple=aarch64", f"-mcpu={cpu}", f"-mattr={MCA_ATTR}",
            f"-iterations={iterations}", path]


def run_mca(mca, cpu, iterations, source, save_as=None):
    """Cycles per iteration of the straight-line body, or an error string."""
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write(source)
        path = f.name
    try:
        if save_as:
            shutil.copy(path, save_as)
        r = subprocess.run(mca_command(mca, cpu, iterations, path),
                           capture_output=True, text=True)
    finally:
        os.unlink(path)
    total = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    iters = re.search(r"Iterations:\s+(\d+)", r.stdout)
    if r.returncode or not total:
        err = (r.stderr.strip().splitlines() or ["llvm-mca failed"])[0]
        return f"llvm-mca: {err}"
    return int(total.group(1)) / int(iters.group(1))


# --- sources -------------------------------------------------------------------

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


class Row:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def fmt(cpus, cpu):
    if cpu not in cpus:
        return "—"
    v = cpus[cpu]
    return f"{v:.2f}" if isinstance(v, float) else "error"


POOL = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2)


def measure(body, cpus, mca, iterations, bytes_per_iter, save_prefix):
    """{cpu: future of cpb (or an error string)}; llvm-mca runs in the background."""
    def one(cpu):
        save = f"{save_prefix}.{cpu}.s" if save_prefix else None
        r = run_mca(mca, cpu, iterations, mca_source(body), save)
        return r / bytes_per_iter if isinstance(r, float) and bytes_per_iter else r
    return {cpu: POOL.submit(one, cpu) for cpu in cpus}


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
        lib = find_libcrypto(path)
        if not lib:
            notes.append(f"no arm64 libcrypto under {path}")
            continue
        major, full = openssl_version(lib)
        sections = disassemble(args.objdump, lib)
        loops = [lp for lp in find_loops(sections)
                 if n_aese(lp.body) >= MIN_AESE and n_pmull_q(lp.body) >= MIN_PMULL]
        loops = [lp for lp in loops if not any(lp.contains(o) for o in loops)]
        if not loops:
            notes.append(f"OpenSSL {full} ({lib}): no loop with >= {MIN_AESE} AESE and "
                         f">= {MIN_PMULL} PMULL")
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


def our_rows(obj, args, notes, save_prefix):
    """Rows for one of our object files: CE main loops and NEON loops, per function."""
    try:
        sections = disassemble(args.objdump, obj)
    except subprocess.CalledProcessError as e:
        notes.append(f"{obj}: not disassembled ({(e.stderr or '').strip()[:120]})")
        return []
    loops = find_loops(sections)
    entries = neon_entries(sections)
    innermost = [lp for lp in loops if not any(lp.contains(o) for o in loops)]
    chosen = []  # (loop, straight-line body, neon?, note)
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
            notes.append(f"{os.path.basename(obj)}: {short_name(sym)} not measured: {why}")
    outermost = [lp for lp in loops if not any(o.contains(lp) for o in loops)]
    found = set()
    for lp in outermost:
        tnotes = []
        b = trace(lp, loops, args.inner_trips, tnotes)
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
        notes.append(f"{os.path.basename(obj)}: {entry} has no loop this script can "
                     f"measure: {why}")

    rows = []
    for lp, body, neon, note in chosen:
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
        rows.append(Row(source="ours", major=None, ours=True, kernel=kname,
                        loop=f"{os.path.basename(obj)}: {name} @0x{lp.body[0].addr:x} "
                        f"({len(body)} insns)",
                        neon=neon, cpb=cpb, **info))
    return rows


def verdict(row):
    """(target text, pass/miss) for our rows."""
    if not row.ours:
        return "—", ""
    if row.neon:
        return f"A53 <= {NEON_TARGET:g} (AES-128-GCM, all loops)", "see total below"
    if row.bits not in (128, 256):
        return "—", ""
    n2_only = row.kernel == "armv8_ce_eor3" or (row.eor3 and row.kernel != "armv8_ce")
    cpus = ["neoverse-n2"] if n2_only else ["cortex-a57", "neoverse-n2"]
    parts, ok = [], True
    for cpu in ("cortex-a57", "neoverse-n2"):
        limit = CE_TARGETS[(cpu, row.bits)]
        parts.append(f"{'A57' if cpu == 'cortex-a57' else 'N2'} <= {limit:.2f}")
        if cpu in cpus:
            v = row.cpb.get(cpu)
            ok = ok and isinstance(v, float) and v <= limit
    text = " / ".join(parts) + (" (N2 only: A57 has no EOR3)" if n2_only else "")
    return text, "pass" if ok else "MISS"


def best(rows, cpu):
    """(cpb, row) of the fastest row on `cpu`, or (None, None)."""
    vals = [(r.cpb.get(cpu), r) for r in rows if isinstance(r.cpb.get(cpu), float)]
    return min(vals, key=lambda v: v[0]) if vals else (None, None)


def print_models(rows):
    """Per Neoverse model: the kernel sealbox's dispatch picks on that core beside the
    fastest OpenSSL 3.5 and 3.0 loop that core can run (EOR3 loops only where it has
    SHA3), AES-128 and AES-256, seal (enc) and open (dec); then one summary line per
    model with the smallest ratio to OpenSSL 3.5, returned to print last."""
    p = print
    ce = [r for r in rows if not r.neon and r.bits in (128, 256) and r.dir in ("enc", "dec")]
    if not ce:
        return []
    p("\nPer Neoverse model: the kernel dispatch picks on that core (`armv8_ce_eor3` "
      "with SHA3, else `armv8_ce`) beside the fastest OpenSSL loop the core can run "
      "(its EOR3 loops only with SHA3); ratio = OpenSSL cpb / ours (above 1: ours "
      f"faster); target >= {RATIO_TARGET:.2f}x OpenSSL 3.5:\n")
    p("| model | kernel | key | op | ours cpb | OpenSSL 3.5 cpb | OpenSSL 3.0 cpb "
      "| vs 3.5 | vs 3.0 |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    summaries = []
    for cpu, short, sha3 in MODELS:
        kernel = "armv8_ce_eor3" if sha3 else "armv8_ce"
        worst = None
        for bits in (128, 256):
            for way, op in (("enc", "seal"), ("dec", "open")):
                pick = [r for r in ce if r.bits == bits and r.dir == way]
                ours, _ = best([r for r in pick if r.ours and r.kernel == kernel], cpu)
                runs = [r for r in pick if not r.ours and (sha3 or not r.eor3)]
                o35, _ = best([r for r in runs if r.major == "3.5"], cpu)
                o30, _ = best([r for r in runs if r.major == "3.0"], cpu)
                f = lambda v: f"{v:.3f}" if v else "—"
                x = lambda o: f"{o / ours:.2f}x" if o and ours else "—"
                p(f"| {short} | `{kernel}` | AES-{bits} | {op} | {f(ours)} | {f(o35)} | "
                  f"{f(o30)} | {x(o35)} | {x(o30)} |")
                if ours and o35 and (worst is None or o35 / ours < worst[0]):
                    worst = (o35 / ours, f"{op}/{bits}")
        if worst:
            verdict = "pass" if worst[0] >= RATIO_TARGET else "MISS"
            summaries.append(f"arm {short}: {kernel} vs openssl-3.5: min={worst[0]:.2f}x "
                             f"at {worst[1]} (target {RATIO_TARGET:.2f}x: {verdict})")
        else:
            summaries.append(f"arm {short}: {kernel} vs openssl-3.5: not measured")
    return summaries


def print_report(rows, notes, args):
    p = print
    p("## AArch64 AES-GCM main loops: predicted cycles per byte (llvm-mca)\n")
    p("Command, once per loop and CPU model (LOOP.s: the loop body as described below):\n")
    p("```")
    p(" ".join(mca_command(os.path.basename(args.mca),
                           "{cortex-a57,neoverse-n1,neoverse-v1,neoverse-n2,cortex-a53}",
                           args.iterations)))
    p("```\n")
    p(f"cpb = Total Cycles / {args.iterations} / (16 * blocks per iteration). The bodies come "
      f"from `{os.path.basename(args.objdump)} -d --no-show-raw-insn`, addresses stripped, "
      "every branch target rewritten to a label at the top of the body, the closing "
      "backward branch kept. llvm-mca does not fuse AESE+AESMC, so absolute figures are "
      "pessimistic: compare rows, not hardware.\n")
    p("| source | loop | key | enc/dec | blocks/iter | EOR3 | A57 cpb | N1 cpb | V1 cpb "
      "| N2 cpb | A53 cpb | target | verdict | notes |")
    p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in sorted(rows, key=lambda r: (r.ours, r.source, r.neon, r.bits or 0,
                                         r.blocks or 0, r.dir != "enc")):
        target, ok = verdict(r)
        key = f"AES-{r.bits}" if r.bits else "—" if r.kind == "GHASH" else "?"
        blocks = f"{r.blocks:g}" if r.blocks else "?"
        errs = [v for v in r.cpb.values() if isinstance(v, str)]
        note = "; ".join(r.notes + errs[:1])
        way = r.dir if r.pmull_any and r.kind != "GHASH" else "—"
        p(f"| {r.source} | {r.loop} | {key} | {way} | {blocks} | "
          f"{'yes' if r.eor3 else 'no'} | {fmt(r.cpb, 'cortex-a57')} | "
          f"{fmt(r.cpb, 'neoverse-n1')} | {fmt(r.cpb, 'neoverse-v1')} | "
          f"{fmt(r.cpb, 'neoverse-n2')} | {fmt(r.cpb, 'cortex-a53')} | {target} | "
          f"{ok} | {note} |")

    if notes:
        p("")
        for n in notes:
            p(f"- **note:** {n}")
    neon = [r for r in rows if r.neon and r.bits in (128, None)]
    if neon:
        by_kernel = {}
        for r in neon:
            by_kernel.setdefault(r.kernel, []).append(r)
        p("\nNEON kernel, AES-128-GCM on cortex-a53 (AES and GHASH loops added when they "
          f"are separate; target <= {NEON_TARGET:g} cpb):\n")
        for k, rs in by_kernel.items():
            both = [r for r in rs if r.kind == "AES+GHASH"]
            aes = [r for r in rs if r.kind == "AES"]
            gh = [r for r in rs if r.kind == "GHASH"]
            vals = lambda rs_: [r.cpb.get("cortex-a53") for r in rs_
                                if isinstance(r.cpb.get("cortex-a53"), float)]
            if vals(both):
                total, how = min(vals(both)), "fused AES+GHASH loop (the fastest one)"
            elif vals(aes) and vals(gh):
                total = min(vals(aes)) + min(vals(gh))
                how = f"AES loop {min(vals(aes)):.2f} + GHASH loop {min(vals(gh)):.2f}"
            else:
                have = ", ".join(f"{r.loop.split(': ', 1)[1]} {r.kind}" for r in rs)
                p(f"- {k}: cannot add up: needs an AES-128 and a GHASH loop, or one loop "
                  f"doing both; found: {have}")
                continue
            p(f"- {k}: {total:.2f} cpb ({how}): "
              f"{'pass' if total <= NEON_TARGET else 'MISS'}")

    ref_rows = [r for r in rows if not r.ours and r.dir == "enc"
                and (r.major, r.bits) in REFERENCE]
    if ref_rows:
        p("\nMethod check: OpenSSL encrypt loops against the figures the issue measured "
          "the same way (A57 / N2):\n")
        p("| OpenSSL | key | blocks | EOR3 | here | issue | max difference |")
        p("| --- | --- | --- | --- | --- | --- | --- |")
        for r in ref_rows:
            ref = REFERENCE[(r.major, r.bits)]
            here = [r.cpb.get(c) for c in ("cortex-a57", "neoverse-n2")]
            if not all(isinstance(v, float) for v in here):
                continue
            # 3.5 carries both kernels; the 3.5 figures are its 8-block EOR3 loop.
            if r.major == "3.5" and not r.eor3:
                continue
            diff = max(abs(a - b) for a, b in zip(here, ref))
            p(f"| {r.source} | AES-{r.bits} | {r.blocks:g} | {'yes' if r.eor3 else 'no'} | "
              f"{here[0]:.2f} / {here[1]:.2f} | {ref[0]:.2f} / {ref[1]:.2f} | {diff:.2f} |")

    summaries = print_models(rows)

    p("\nHow loops were found and classified:\n")
    p(f"- CE main loop: innermost backward branch whose body (target .. branch) holds >= "
      f"{MIN_AESE} AESE and >= {MIN_PMULL} PMULL/PMULL2 .1q; in our objects a function "
      "with AESE and PMULL but no such loop has its largest one measured, marked "
      "\"below rule\".")
    p(f"- NEON loop (measured on cortex-a53): no AESE; outermost loop in a function whose "
      "own name contains \"armv8_neon\" (or one it tail-calls), or holding >= "
      f"{MIN_TBL} TBL/TBX. AES = >= {MIN_TBL} TBL/TBX over 4-register tables (S-box "
      "lookups), GHASH = any PMULL; inner loops "
      f"unrolled by their constant counter, else x{args.inner_trips}; key size from the "
      "function name.")
    p("- blocks/iter: bytes the output pointer (a register stepped by a constant, that "
      "stores go through) advances per iteration / 16; the input pointer for a loop that "
      "stores nothing. Key = AESE / blocks (10/12/14 rounds).")
    p("- enc/dec (register data flow around the loop): enc when a stored value flows into "
      "a PMULL; dec when a loaded value flows into both a PMULL and a store; otherwise by "
      "where GHASH's own load points: the output pointer (enc, reads back what it wrote) "
      "or the input pointer (dec).")
    p("- target/verdict columns: the earlier absolute targets on A57 and N2 (the per-model "
      "ratios above are the current ones). EOR3 rows are judged on N2 only (Cortex-A57 is Armv8.0 and has no SHA3); their A57 "
      "figure is what the model predicts for the same code.")
    if summaries:
        p("")
        for line in summaries:
            p(line)


if __name__ == "__main__":
    sys.exit(main())
