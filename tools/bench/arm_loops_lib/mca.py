"""llvm-mca runs: a loop body rewritten as a standalone source, its Total Cycles per
iteration, and cycles per byte computed in a shared thread pool."""

import concurrent.futures
import os
import re
import shutil
import subprocess
import tempfile

MCA_ATTR = "+aes,+sha3"
CE_CPUS = ("cortex-a57", "neoverse-n1", "neoverse-v1", "neoverse-n2")
NEON_CPUS = ("cortex-a53",)


def mca_source(body):
    """The body as llvm-mca input: every branch target becomes .Lloop, at its top."""
    lines = [".Lloop:"]
    for x in body:
        ops = re.sub(r"\b[0-9a-f]+ <[^>]*>", ".Lloop", x.ops)
        lines.append(f"\t{x.mn}\t{ops}".rstrip())
    return "\n".join(lines) + "\n"


def mca_command(mca, cpu, iterations, path="LOOP.s"):
    """The llvm-mca command line; the report prints it with LOOP.s."""
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


POOL = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2)


def measure(body, cpus, mca, iterations, bytes_per_iter, save_prefix):
    """{cpu: future of cpb (or an error string)}; llvm-mca runs in the background."""
    def one(cpu):
        save = f"{save_prefix}.{cpu}.s" if save_prefix else None
        r = run_mca(mca, cpu, iterations, mca_source(body), save)
        return r / bytes_per_iter if isinstance(r, float) and bytes_per_iter else r
    return {cpu: POOL.submit(one, cpu) for cpu in cpus}
