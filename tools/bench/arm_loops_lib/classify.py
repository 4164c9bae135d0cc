"""What a loop body does: blocks per iteration from its pointers, key size from its
AESE count, encrypt or decrypt from register data flow around the loop."""

import re

from .disasm import branch_target, is_branch
from .loops import count, n_aese, n_pmull_q, n_tbl
from .operands import Access, defs_uses, is_load, is_store, regs_in, split_ops


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
