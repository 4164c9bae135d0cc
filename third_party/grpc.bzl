"""C++ code generation for .proto files with Debian's protoc and grpc_cpp_plugin.

Offline, so no rules_proto: one genrule runs the system protoc per file, and a
cc_library wraps the four generated files. Protos live under //proto and are
imported and included relative to it ("sealbox/v1/data.proto" ->
#include "sealbox/v1/data.grpc.pb.h").
"""

load("//tools/build:unity.bzl", "unity_cc_library")

def cc_grpc_library(name, src, deps = [], grpc = True, **kwargs):
    """Generates and compiles the messages (and services) of one .proto file.

    Args:
      name: the cc_library's name.
      src: the .proto file, in this package (which must be under //proto).
      deps: cc_grpc_library targets of the .proto files it imports.
      grpc: False for a file with messages only.
      **kwargs: passed to the cc_library (visibility, testonly, ...).
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
    grpc_flags = (
        "--grpc_out=$(GENDIR)/proto " +
        "--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin "
    ) if grpc else ""
    native.genrule(
        name = name + "_generate",
        srcs = [src] + [d + "_proto_srcs" for d in deps],
        outs = outs,
        # protoc names outputs after the import path, which starts below //proto;
        # generated .proto files are found below $(GENDIR)/proto.
        cmd = (
            "/usr/bin/protoc -Iproto -I$(GENDIR)/proto --cpp_out=$(GENDIR)/proto " + grpc_flags +
            native.package_name()[len("proto/"):] + "/" + src
        ),
    )
    # This file and everything it imports, for the genrules of files importing it.
    native.filegroup(
        name = name + "_proto_srcs",
        srcs = [src] + [d + "_proto_srcs" for d in deps],
    )
    # The .pb.cc and .grpc.pb.cc compiled as one: they parse the same headers.
    unity_cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        strip_include_prefix = "/proto",
        deps = deps + ["@system//:grpc"],
        **kwargs
    )
