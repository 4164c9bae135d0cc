#!/usr/bin/python3
"""A short user of the sealbox Python library (client/python): seal or open a file.

    SEALBOX_TOKEN=... sealbox_example.py COMMAND --key KEY [--aad TEXT] IN OUT

COMMAND: seal, open (one unary call: a small file), seal-stream, open-stream (a file
of any size through the streams), seal-envelope, open-envelope (an envelope file,
encrypted here). The server is SEALBOX_SERVER (default 127.0.0.1:50051). The Go,
Node.js and Java examples take the same arguments.
"""
import argparse
import os
import sys

import sealbox


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["seal", "open", "seal-stream", "open-stream",
                                            "seal-envelope", "open-envelope"])
    parser.add_argument("--key", required=True, help="a key of the token's tenant")
    parser.add_argument("--aad", default="", help="associated data, needed again to open")
    parser.add_argument("input", metavar="IN")
    parser.add_argument("output", metavar="OUT")
    args = parser.parse_args()
    aad = args.aad.encode()

    with sealbox.Client(os.environ.get("SEALBOX_SERVER", "127.0.0.1:50051"),
                        token=os.environ.get("SEALBOX_TOKEN")) as client:
        try:
            if args.command in ("seal", "open"):
                with open(args.input, "rb") as f:
                    data = f.read()
                if args.command == "seal":
                    result = client.seal(args.key, data, aad).ciphertext
                else:
                    result = client.open(args.key, data, aad).plaintext
                with open(args.output, "wb") as f:
                    f.write(result)
            else:
                run = {"seal-stream": client.seal_file, "open-stream": client.open_file,
                       "seal-envelope": client.seal_envelope_file,
                       "open-envelope": client.open_envelope_file}[args.command]
                run(args.key, args.input, args.output, aad)
        except (sealbox.SealboxError, OSError) as error:
            print(f"sealbox_example.py: {type(error).__name__}: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
