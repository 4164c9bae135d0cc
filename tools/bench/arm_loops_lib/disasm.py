"""AArch64 instructions from objdump: each file's code as Insn lists with their
enclosing function and label, for the loop finder to walk by address."""

import re
import subprocess

BRANCHES = {"b", "cbz", "cbnz", "tbz", "tbnz"}


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
