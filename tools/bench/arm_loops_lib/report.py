"""The markdown report: every measured loop in one table, the NEON total, the method
check, the per-model comparison with OpenSSL and the rules, summary lines last."""

import os

from .loops import MIN_AESE, MIN_PMULL, MIN_TBL
from .mca import mca_command

# The cores of the per-model comparison, and whether each has SHA3 (EOR3): which of
# our kernels dispatch picks there, and which OpenSSL loops can run there.
MODELS = (("neoverse-n1", "N1", False), ("neoverse-v1", "V1", True),
          ("neoverse-n2", "N2", True))
RATIO_TARGET = 1.10  # ours / OpenSSL 3.5 on every model, AES-128 and AES-256

# Targets from the issue: (cpu, key bits) -> max cpb. armv8_ce and its EOR3 variant.
CE_TARGETS = {("cortex-a57", 128): 1.35, ("cortex-a57", 256): 1.85,
              ("neoverse-n2", 128): 0.95, ("neoverse-n2", 256): 1.20}
NEON_TARGET = 29.0  # AES-128-GCM on cortex-a53, AES and GHASH loops added if separate
# What the issue measured the same way (main loop, cpb), to check the method against.
REFERENCE = {("3.0", 128): (1.41, 1.10), ("3.0", 256): (1.92, 1.35),
             ("3.5", 128): (1.42, 1.02), ("3.5", 256): (1.90, 1.27)}


class Row:
    """One loop of the table: where it is from, classify()'s fields and cpb per CPU."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def fmt(cpus, cpu):
    """A cpb cell: two decimals, "error" for a failed run, a dash for a CPU not run."""
    if cpu not in cpus:
        return "—"
    v = cpus[cpu]
    return f"{v:.2f}" if isinstance(v, float) else "error"


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
      "ratios above are the current ones). EOR3 rows are judged on N2 only (Cortex-A57 "
      "is Armv8.0 and has no SHA3); their A57 figure is what the model predicts for the "
      "same code.")
    if summaries:
        p("")
        for line in summaries:
            p(line)
