// Test vectors kept as data files. A file is blocks of `Name = value` lines separated
// by blank lines; a line starting with `#` is a comment:
//
//   # Test case 2
//   Count = 2
//   Key = 00000000000000000000000000000000
//   AAD =
//
// The reader is strict, so a typo in a file fails the test instead of quietly
// skipping a check: each block must hold exactly the attributes the test names, each
// once, with a well-formed value. Errors name the file and line.
#ifndef SEALBOX_CRYPTO_TESTING_VECTOR_FILE_H_
#define SEALBOX_CRYPTO_TESTING_VECTOR_FILE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sealbox::crypto::test {

enum class AttributeKind {
  kHex,      // bytes as an even number of hex digits; nothing after "=" is empty
  kDecimal,  // an unsigned 64-bit number
};

struct Attribute {
  std::string name;
  AttributeKind kind;
};

class TestVector {
 public:
  // "file:line" of the block's first line, for failure messages.
  const std::string& location() const { return location_; }

  // The value of a kHex or kDecimal attribute of the schema. Asking for a name the
  // schema does not hold is a bug in the test: it aborts.
  const std::vector<uint8_t>& Bytes(absl::string_view name) const;
  uint64_t Number(absl::string_view name) const;

 private:
  friend absl::StatusOr<std::vector<TestVector>> ParseTestVectors(absl::string_view,
                                                                  absl::string_view,
                                                                  const std::vector<Attribute>&);

  std::string location_;
  std::map<std::string, std::vector<uint8_t>, std::less<>> bytes_;
  std::map<std::string, uint64_t, std::less<>> numbers_;
};

// Parses the text of a vector file; `file_name` is used only in error messages.
// Every block must carry exactly the attributes in `schema`. An error (unknown,
// missing or repeated attribute, malformed line or value, no blocks at all) is
// INVALID_ARGUMENT with a message starting "file:line: ".
absl::StatusOr<std::vector<TestVector>> ParseTestVectors(absl::string_view text,
                                                         absl::string_view file_name,
                                                         const std::vector<Attribute>& schema);

// The path of a data file in this test's runfiles, given its path in the workspace
// ("crypto/tests/testdata/gcm_spec_vectors.txt"): under TEST_SRCDIR (bazel test)
// or RUNFILES_DIR, in the workspace named by TEST_WORKSPACE ("sealbox" if unset);
// with neither set, the path itself, for a binary started in the workspace root.
std::string RunfilePath(absl::string_view workspace_path);

// Reads and parses a vector file named by its path in the workspace (a `data`
// dependency of the test). Errors name the file by that path.
absl::StatusOr<std::vector<TestVector>> ReadTestVectors(absl::string_view workspace_path,
                                                        const std::vector<Attribute>& schema);

}  // namespace sealbox::crypto::test

#endif  // SEALBOX_CRYPTO_TESTING_VECTOR_FILE_H_
