"""Loops in disassembled code: backward branches, their nesting, the instruction
counts that pick the AES-GCM loops, and inner loops unrolled into one body."""

import re

from .disasm import branch_target, is_branch
from .operands import regs_in, split_ops

LEAVES = {"bl", "blr", "br", "ret", "braa", "brab", "blraa", "retaa", "retab"}
# Thresholds of the selection rules (see arm_loops.py's docstring).
MIN_AESE = 40
MIN_PMULL = 8
MIN_TBL = 16


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
