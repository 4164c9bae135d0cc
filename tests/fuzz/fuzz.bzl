"""One libFuzzer target, and the regression test that replays its corpus.

sealbox_fuzz_target(name = "x", srcs = ["x.cc"], deps = [...]) makes:
  x_lib              the target's LLVMFuzzerTestOneInput
  x                  the fuzzer: with --config=fuzz (clang-14, --define=sealbox_fuzz=1)
                     linked with -fsanitize=fuzzer; in any other build linked with
                     the standalone driver instead, so `bazel build //...` with gcc
                     builds it and it replays the files it is given.
  x_regression_test  the standalone driver over corpus/x/ and regressions/x/: every
                     `bazel test //...` (and --config=asan) replays them.
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library", "cc_test")

def sealbox_fuzz_target(name, srcs, deps = [], size = "small"):
    cc_library(
        name = name + "_lib",
        testonly = True,
        srcs = srcs,
        deps = deps,
        alwayslink = True,
    )
    cc_binary(
        name = name,
        testonly = True,
        deps = [":" + name + "_lib"] + select({
            ":fuzzing": [],
            "//conditions:default": [":standalone_driver"],
        }),
        linkopts = select({
            ":fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
    )
    corpus = "corpus/" + name
    regressions = "regressions/" + name
    cc_test(
        name = name + "_regression_test",
        size = size,
        # Paths from the runfiles root, where a test starts.
        args = [native.package_name() + "/" + d for d in (corpus, regressions)],
        data = native.glob([corpus + "/**", regressions + "/**"]),
        deps = [
            ":" + name + "_lib",
            ":standalone_driver",
        ],
    )
