"""Compiling several .cc files as one translation unit (a "unity" build).

Most of a file's compile time here is the gRPC, Protobuf and gtest headers it parses
before any code of ours (docs/BUILDING.md, "Where a test run's time goes"). Files
compiled as one parse them once. Each file's text is preceded by a #line naming it,
so __FILE__, compiler messages and gtest's failure locations name the file as before.

Files compiled together share one scope: two of them may not define the same name in
an anonymous namespace, and a macro one defines is seen by those after it.

    unity_cc_library:      a cc_library whose .cc files are compiled as one.
    unity_cc_tests:        a package's gtest files compiled as one, and a cc_test per
                           file that runs only the tests its file defines.
    unity_cc_test_library: gtest files of several packages compiled as one...
    unity_cc_test:         ...and, in each package, a cc_test running its file's tests.
"""

load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")

# What protoc 3.21 defines in each .pb.cc under the same name.
PROTOC_FILE_LOCAL_NAMES = ["schemas", "file_default_instances"]

def _one_unit(name, sources, file_local_names = [], list_sources = False):
    """A genrule writing the files of sources one after another into NAME.cc.

    file_local_names: names that every file defines for itself (protoc's `schemas`),
      each renamed per file by a #define around it.
    list_sources: also define kUnityTestSources, the files' paths separated by spaces,
      for tools/build/test_main.cc.
    """
    define = "".join(["#define %s %s_'\"$$i\"'\\n" % (n, n) for n in file_local_names])
    undef = "".join(["#undef %s\\n" % n for n in file_local_names])
    listing = ("; printf 'extern const char kUnityTestSources[];\\n" +
               "const char kUnityTestSources[] = \"%s\";\\n' \"$(SRCS)\"") if list_sources else ""
    native.genrule(
        name = name,
        srcs = sources,
        outs = [name + ".cc"],
        cmd = ("(i=0; for f in $(SRCS); do i=$$((i + 1)); " +
               "printf '%s#line 1 \"%%s\"\\n' \"$$f\"; cat \"$$f\"; printf '\\n%s'; done%s) > $@") %
              (define, undef, listing),
        visibility = ["//visibility:private"],
    )
    return name + ".cc"

def unity_cc_library(name, srcs = [], file_local_names = [], **kwargs):
    """A cc_library (same arguments) whose .cc files are compiled as one.

    file_local_names: see _one_unit; for generated code only.
    """
    sources = [s for s in srcs if s.endswith(".cc")]
    if len(sources) > 1:
        srcs = [_one_unit(name + "_unity", sources, file_local_names)] + [
            s
            for s in srcs
            if not s.endswith(".cc")
        ]
    cc_library(name = name, srcs = srcs, **kwargs)

def unity_cc_test_library(name, srcs, deps = [], **kwargs):
    """gtest files (of this package or, exported, of others) compiled as one library.

    Args:
      name: the library, for unity_cc_test's `library`.
      srcs: the gtest files, and headers private to them.
      deps: what the files need, together.
      **kwargs: passed to the cc_library (visibility...).
    """
    sources = [s for s in srcs if s.endswith(".cc")]
    cc_library(
        name = name,
        testonly = True,
        srcs = [_one_unit(name + "_unity", sources, list_sources = True)] +
               [s for s in srcs if not s.endswith(".cc")],
        deps = deps + ["@system//:gtest"],
        alwayslink = True,
        **kwargs
    )

def unity_cc_test(name, library, sources = None, env = {}, deps = [], **kwargs):
    """A cc_test running the tests of library that its own files define.

    Args:
      name: the test; its file is NAME.cc in this package unless sources says.
      library: the unity_cc_test_library holding the file.
      sources: the files whose tests it runs, relative to this package (two tests
        may run one file's tests, with a different env).
      env, deps, **kwargs: the cc_test's (size, data, tags...).

    tools/build/test_main.cc finds the tests by the file gtest records for each, and
    fails if a test is defined in no file of the library (a header, say), where no
    target would run it. A --test_filter picks from all the library's tests instead.
    """
    package = native.package_name()
    files = [package + "/" + s for s in (sources or [name + ".cc"])]
    cc_test(
        name = name,
        env = dict(env, SEALBOX_TEST_SOURCE = " ".join(files)),
        deps = [library, "//tools/build:test_main"] + deps,
        **kwargs
    )

def unity_cc_tests(name, tests, deps = [], srcs = []):
    """A package's gtest files compiled as one, and a cc_test per file.

    Args:
      name: the library that holds every file's tests.
      tests: {test name: its unity_cc_test's arguments (size, env, sources...)}.
      deps: what the files need, together.
      srcs: headers the files share, private to them.
    """
    files = {}
    for test, attrs in tests.items():
        for source in attrs.get("sources", [test + ".cc"]):
            files[source] = True
    unity_cc_test_library(name = name, srcs = sorted(files.keys()) + srcs, deps = deps)
    for test, attrs in tests.items():
        unity_cc_test(name = test, library = ":" + name, **attrs)
