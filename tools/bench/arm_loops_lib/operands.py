"""Operands of AArch64 instructions: registers read and written, load/store bases and
sizes, which the loop classifier's data flow and pointer walks are built on."""

import re

from .disasm import is_branch

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
