"""Compiling several .cc files as one translation unit (a "unity" build).

Most of a file's compile time here is the gRPC, Protobuf and gtest headers it parses
before any code of ours (docs/BUILDING.md, "Where a test run's time goes"). Files
compiled as one parse them once. Each file's text is preceded by a #line naming it,
so __FILE__, compiler messages and gtest's failure locations name the file as before.

Files compiled together share one scope: two of them may not define the same name in
an anonymous namespace, and a macro one defines is seen by those after it.

    unity_cc_library: a cc_library whose .cc files are compiled as one.
    unity_cc_tests:   the gtest files of a package compiled as one library, and one
                      cc_test per file, each running only the tests its file defines.
"""

load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")

def _one_unit(name, srcs, file_local_names = []):
    """srcs with its .cc files replaced by a genrule's NAME.cc that holds them all.

    file_local_names: names that every file defines for itself (protoc's `schemas`),
    each renamed per file by a #define around it.
    """
    sources = [s for s in srcs if s.endswith(".cc")]
    if len(sources) < 2:
        return srcs
    define = "".join(["#define %s %s_'\"$$i\"'\\n" % (n, n) for n in file_local_names])
    undef = "".join(["#undef %s\\n" % n for n in file_local_names])
    native.genrule(
        name = name,
        srcs = sources,
        outs = [name + ".cc"],
        cmd = ("i=0; for f in $(SRCS); do i=$$((i + 1)); " +
               "printf '%s#line 1 \"%%s\"\\n' \"$$f\"; cat \"$$f\"; printf '\\n%s'; done > $@") %
              (define, undef),
        visibility = ["//visibility:private"],
    )
    return [name + ".cc"] + [s for s in srcs if not s.endswith(".cc")]

def unity_cc_library(name, srcs = [], file_local_names = [], **kwargs):
    """A cc_library (same arguments) whose .cc files are compiled as one.

    file_local_names: see _one_unit; for generated code only.
    """
    cc_library(name = name, srcs = _one_unit(name + "_unity", srcs, file_local_names), **kwargs)

# What protoc 3.21 defines in each .pb.cc under the same name.
PROTOC_FILE_LOCAL_NAMES = ["schemas", "file_default_instances"]

def unity_cc_tests(name, tests, deps = [], srcs = [], **kwargs):
    """One cc_test per gtest file of tests, all compiled as one.

    Args:
      name: the library that holds every file's tests.
      tests: {test name: its cc_test's own arguments (size, data, env, tags...)}.
        The test's file is NAME.cc in this package, or the one its "source" names
        (two tests may run one file's tests, with different env).
      deps: what the files need, together.
      srcs: headers the files share, private to them.
      **kwargs: passed to the library and every test (testonly, visibility...).

    Each test runs the tests defined in its own file (tools/build/test_main.cc finds
    them by the file gtest records, and fails if a test is defined in a file that no
    target runs); a --test_filter picks from all of them instead.
    """
    package = native.package_name()
    sources = {t: attrs.get("source", t + ".cc") for t, attrs in tests.items()}
    files = sorted({s: True for s in sources.values()}.keys())
    cc_library(
        name = name,
        testonly = True,
        srcs = _one_unit(name + "_unity", files + srcs),
        deps = deps + ["@system//:gtest"],
        alwayslink = True,
        **kwargs
    )
    for test, attrs in tests.items():
        attrs = {k: v for k, v in attrs.items() if k != "source"}
        attrs["env"] = dict(attrs.get("env", {}))
        attrs["env"]["SEALBOX_TEST_SOURCE"] = package + "/" + sources[test]
        attrs["env"]["SEALBOX_TEST_SOURCES"] = " ".join([package + "/" + f for f in files])
        attrs["deps"] = [":" + name, "//tools/build:test_main"] + attrs.get("deps", [])
        cc_test(name = test, **dict(kwargs, **attrs))
