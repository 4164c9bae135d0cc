#!/usr/bin/python3
"""The sealbox CLI's streams beside the load generator's, in one run (tools/dev bench cli).

Each round runs, against the same server:
  1. the load generator's stream rows: SealStream and OpenStream of BYTES in 1 MiB
     messages from memory, with its client's CPU time per MiB;
  2. `sealbox seal` and `sealbox open` of BYTES from a pipe to a pipe (`cat FILE |
     sealbox ... | cat > /dev/null`), the CLI's own CPU time per MiB from wait4;
  3. the same from a file to a file (`-i FILE -o FILE`: written beside the target,
     fsync'd, renamed), beside the disk's own rate for writing BYTES with an fsync.
The medians over the rounds are compared with the targets of issue 35: the CLI at most
1.5x the load generator's client CPU per MiB, at least 0.7 of its rate. With
--before-cli, another build of the CLI (an older commit's) runs step 2 too, so that a
change is measured side by side.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

MIB = 1 << 20


def run_load_generator(args):
    """(SealStream MB/s, OpenStream MB/s, client us/MiB Seal, Open) of one round."""
    out = subprocess.run(
        [args.load_generator, f"--server={args.server}",
         f"--admin_token_file={args.admin_token_file}", "--unary_bytes=", "--batch_items=0",
         "--stream_message_bytes=1048576", "--stream_rounds=1",
         f"--stream_bytes={args.bytes}"],
        check=True, capture_output=True, text=True).stdout
    # "1 MiB    median |  Discard Echo Seal Open | ratios | server us/MiB | client us/MiB | RSS"
    row = next(line for line in out.splitlines() if re.match(r"1 MiB +median", line))
    cells = [cell.split() for cell in row.split("|")]
    rates, client = cells[1], cells[4]
    return float(rates[2]), float(rates[3]), float(client[1]), float(client[2])


def run_cli(args, command, source, target=None, binary=None):
    """(MB/s, CLI CPU us/MiB) of one `sealbox COMMAND`: from a pipe to a pipe when
    `target` is None, else from the file `source` to the file `target`."""
    env = dict(os.environ, SEALBOX_SERVER=args.server, SEALBOX_TOKEN=args.token)
    cli = [binary or args.cli, command, "--key", args.key]
    start = time.monotonic()
    if target is None:
        producer = subprocess.Popen(["cat", source], stdout=subprocess.PIPE)
        process = subprocess.Popen(cli, stdin=producer.stdout, stdout=subprocess.PIPE, env=env)
        producer.stdout.close()
        consumer = subprocess.Popen(["cat"], stdin=process.stdout, stdout=subprocess.DEVNULL)
        process.stdout.close()
        _, status, usage = os.wait4(process.pid, 0)
        consumer.wait()
        producer.wait()
    else:
        process = subprocess.Popen(cli + ["-i", source, "-o", target], env=env)
        _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - start
    if status != 0:
        sys.exit(f"cli_bench: sealbox {command} failed (status {status})")
    mib = os.path.getsize(source) / MIB
    return args.bytes / seconds / 1e6, (usage.ru_utime + usage.ru_stime) / mib * 1e6


def disk_write_rate(path, size):
    """MB/s of writing `size` bytes to `path` and fsync'ing it, as the CLI's -o does."""
    block = os.urandom(MIB)
    start = time.monotonic()
    with open(path, "wb") as f:
        for _ in range(size // MIB):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())
    seconds = time.monotonic() - start
    os.unlink(path)
    return size / seconds / 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--cli", "--load-generator", "--server", "--admin-token-file", "--token",
                 "--work"):
        parser.add_argument(flag, required=True)
    parser.add_argument("--key", default="default")
    parser.add_argument("--bytes", type=int, default=1 << 30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before-cli", help="another sealbox binary to measure beside")
    args = parser.parse_args()

    plain = os.path.join(args.work, "plain")
    with open(plain, "wb") as f:  # incompressible, as real data is assumed to be
        for _ in range(args.bytes // MIB):
            f.write(os.urandom(MIB))
    sealed = os.path.join(args.work, "sealed")
    run_cli(args, "seal", plain, sealed)

    columns = ("lg seal", "lg open", "lg seal cpu", "lg open cpu", "cli seal", "cli seal cpu",
               "cli open", "cli open cpu", "file seal", "file open", "disk")
    rows, before_rows = [], []
    print(f"cli_bench: {args.bytes / MIB:.0f} MiB per stream, {args.rounds} rounds; MB/s "
          "(10^6 bytes/s) of plaintext, client CPU (user + system) in us per MiB")
    print("round | load generator: SealStream OpenStream  us/MiB S O | CLI pipe->pipe: seal "
          "us/MiB  open us/MiB | CLI file->file: seal open | disk write+fsync")
    for round_number in range(1, args.rounds + 1):
        lg = run_load_generator(args)
        cli_seal = run_cli(args, "seal", plain)
        cli_open = run_cli(args, "open", sealed)
        file_seal = run_cli(args, "seal", plain, os.path.join(args.work, "out.sealed"))
        file_open = run_cli(args, "open", sealed, os.path.join(args.work, "out.plain"))
        disk = disk_write_rate(os.path.join(args.work, "disk"), args.bytes)
        row = lg + cli_seal + cli_open + (file_seal[0], file_open[0], disk)
        rows.append(row)
        if args.before_cli:
            before_rows.append(run_cli(args, "seal", plain, binary=args.before_cli)
                               + run_cli(args, "open", sealed, binary=args.before_cli))
            print("      before: seal {:.0f} MB/s {:.0f} us/MiB, open {:.0f} MB/s {:.0f} "
                  "us/MiB".format(*before_rows[-1]))
        print(f"{round_number:5} | {row[0]:26.0f} {row[1]:10.0f} {row[2]:8.0f} {row[3]:5.0f} | "
              f"{row[4]:19.0f} {row[5]:6.0f} {row[6]:5.0f} {row[7]:6.0f} | "
              f"{row[8]:20.0f} {row[9]:4.0f} | {row[10]:16.0f}")
    median = dict(zip(columns, (statistics.median(c) for c in zip(*rows))))
    if before_rows:
        medians = [statistics.median(c) for c in zip(*before_rows)]
        print("before: --before-cli pipe->pipe medians: seal {:.0f} MB/s, {:.0f} us/MiB; "
              "open {:.0f} MB/s, {:.0f} us/MiB".format(*medians))
    print("median| {lg seal:26.0f} {lg open:10.0f} {lg seal cpu:8.0f} {lg open cpu:5.0f} | "
          "{cli seal:19.0f} {cli seal cpu:6.0f} {cli open:5.0f} {cli open cpu:6.0f} | "
          "{file seal:20.0f} {file open:4.0f} | {disk:16.0f}".format(**median))

    checks = [
        ("CLI seal CPU/MiB <= 1.5x load generator's", median["cli seal cpu"] / median["lg seal cpu"], 1.5, False),
        ("CLI open CPU/MiB <= 1.5x load generator's", median["cli open cpu"] / median["lg open cpu"], 1.5, False),
        ("CLI seal rate >= 0.7 of SealStream's", median["cli seal"] / median["lg seal"], 0.7, True),
        ("CLI open rate >= 0.7 of OpenStream's", median["cli open"] / median["lg open"], 0.7, True),
    ]
    print()
    for name, value, target, at_least in checks:
        met = value >= target if at_least else value <= target
        print(f"  {name:45} {value:5.2f}  {'met' if met else 'NOT met'}")
    print("cli: seal_cpu_ratio={:.2f} open_cpu_ratio={:.2f} seal_rate_ratio={:.2f} "
          "open_rate_ratio={:.2f}".format(*(c[1] for c in checks)))


if __name__ == "__main__":
    main()
