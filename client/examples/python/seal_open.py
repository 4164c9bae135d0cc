#!/usr/bin/python3
"""A minimal sealbox client in Python: seal a message, open it again, stream a file.

Needs Debian's python3-grpcio and python3-grpc-tools. The stubs are generated from
the project's .proto files on the fly, so nothing generated is checked in. The unary
calls carry CRC32C checksums both ways (sealbox_crc32c.py):

    SEALBOX_TOKEN=... /usr/bin/python3 seal_open.py [HOST:PORT] [--proto-dir DIR]
"""
import argparse
import atexit
import importlib
import os
import shutil
import sys
import tempfile

from grpc_tools import protoc
import grpc

from sealbox_crc32c import checksum, verify


def load_stubs(proto_dir):
    """Compiles sealbox/v1/data.proto into a private temporary folder (removed at exit)
    and imports it as sealbox.v1. Only that package is generated there, nothing named
    grpc, so the folder can go first on sys.path without hiding the real grpc package,
    whatever the working directory."""
    out = tempfile.mkdtemp(prefix="sealbox-stubs-")
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main([
        "protoc", f"-I{proto_dir}", f"-I{include}", f"--python_out={out}",
        f"--grpc_python_out={out}", os.path.join(proto_dir, "sealbox/v1/data.proto"),
    ])
    if rc != 0:
        sys.exit(f"protoc failed on {proto_dir}")
    sys.path.insert(0, out)
    return (importlib.import_module("sealbox.v1.data_pb2"),
            importlib.import_module("sealbox.v1.data_pb2_grpc"))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("server", nargs="?", default="127.0.0.1:50051")
    parser.add_argument("--proto-dir", default=os.path.join(here, "../../../proto"))
    parser.add_argument("--key", default="default")
    args = parser.parse_args()
    token = os.environ.get("SEALBOX_TOKEN")
    if not token:
        sys.exit("set SEALBOX_TOKEN to a tenant token")

    data_pb2, data_grpc = load_stubs(args.proto_dir)
    stub = data_grpc.CryptoStub(grpc.insecure_channel(args.server))
    auth = [("authorization", f"Bearer {token}")]

    # Unary: small values such as database fields. The server checks the checksums we
    # send; verify() checks the ones it sends back, and that it did check ours.
    message, row = b"hello from python", b"row-7"
    sealed = stub.Seal(data_pb2.SealRequest(
        key=args.key, plaintext=message, associated_data=row,
        plaintext_crc32c=checksum(message), associated_data_crc32c=checksum(row)),
        metadata=auth)
    verify(sealed, ["ciphertext"],
           ["verified_plaintext_crc32c", "verified_associated_data_crc32c"])
    opened = stub.Open(data_pb2.OpenRequest(
        key=args.key, ciphertext=sealed.ciphertext, associated_data=row,
        ciphertext_crc32c=checksum(sealed.ciphertext), associated_data_crc32c=checksum(row)),
        metadata=auth)
    verify(opened, ["plaintext"],
           ["verified_ciphertext_crc32c", "verified_associated_data_crc32c"])
    assert opened.plaintext == message
    print(f"unary: sealed {len(sealed.ciphertext)} bytes under version "
          f"{sealed.key_version}, opened OK")

    # Streaming: any size, sent in chunks of any size.
    payload = os.urandom(3 * 1024 * 1024 + 5)

    def seal_requests():
        yield data_pb2.SealStreamRequest(start=data_pb2.StreamStart(key=args.key))
        for i in range(0, len(payload), 100_000):
            yield data_pb2.SealStreamRequest(plaintext_chunk=payload[i:i + 100_000])

    ciphertext = b"".join(r.ciphertext_chunk
                          for r in stub.SealStream(seal_requests(), metadata=auth))

    def open_requests():
        yield data_pb2.OpenStreamRequest(start=data_pb2.StreamStart(key=args.key))
        for i in range(0, len(ciphertext), 65_536):
            yield data_pb2.OpenStreamRequest(ciphertext_chunk=ciphertext[i:i + 65_536])

    plaintext = b"".join(r.plaintext_chunk
                         for r in stub.OpenStream(open_requests(), metadata=auth))
    assert plaintext == payload
    print(f"stream: {len(payload)} bytes -> {len(ciphertext)} bytes and back, OK")


if __name__ == "__main__":
    main()
