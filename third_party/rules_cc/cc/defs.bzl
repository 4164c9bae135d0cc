"""Offline stand-in for rules_cc: re-exports Bazel's native C++ rules.

Debian's bazel-rules-cc is too new for Bazel 4.2.3, so BUILD files load the rules
from here; with a current Bazel and the real rules_cc they load unchanged.
"""

cc_binary = native.cc_binary
cc_import = native.cc_import
cc_library = native.cc_library
cc_test = native.cc_test
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
