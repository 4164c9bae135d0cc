#include "crypto/testing/vector_file.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace sealbox::crypto::test {
namespace {

constexpr char kDefaultWorkspace[] = "sealbox";

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool ParseHex(absl::string_view text, std::vector<uint8_t>* out) {
  if (text.size() % 2 != 0) return false;
  out->clear();
  for (size_t i = 0; i < text.size(); i += 2) {
    const int high = HexDigit(text[i]);
    const int low = HexDigit(text[i + 1]);
    if (high < 0 || low < 0) return false;
    out->push_back(static_cast<uint8_t>(high << 4 | low));
  }
  return true;
}

bool ParseDecimal(absl::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;  // 19 digits always fit
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = value;
  return true;
}

[[noreturn]] void NotInSchema(const std::string& location, absl::string_view name) {
  std::fprintf(stderr, "%s: the test asked for attribute \"%.*s\", not in its schema\n",
               location.c_str(), static_cast<int>(name.size()), name.data());
  std::abort();
}

}  // namespace

const std::vector<uint8_t>& TestVector::Bytes(absl::string_view name) const {
  auto it = bytes_.find(name);
  if (it == bytes_.end()) NotInSchema(location_, name);
  return it->second;
}

uint64_t TestVector::Number(absl::string_view name) const {
  auto it = numbers_.find(name);
  if (it == numbers_.end()) NotInSchema(location_, name);
  return it->second;
}

absl::StatusOr<std::vector<TestVector>> ParseTestVectors(absl::string_view text,
                                                         absl::string_view file_name,
                                                         const std::vector<Attribute>& schema) {
  std::vector<std::string> names;
  for (const Attribute& attribute : schema) names.push_back(attribute.name);
  auto error = [&](int line, auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ":", line, ": ", parts...));
  };

  std::vector<TestVector> vectors;
  TestVector current;
  int block_line = 0;               // first line of the open block; 0 when none
  std::map<std::string, int> seen;  // attribute -> line, in the open block

  // Closes the open block, checking that nothing is missing.
  auto finish_block = [&]() -> absl::Status {
    if (block_line == 0) return absl::OkStatus();
    for (const Attribute& attribute : schema) {
      if (seen.count(attribute.name) == 0) {
        return error(block_line, "block lacks attribute \"", attribute.name, "\"");
      }
    }
    vectors.push_back(std::move(current));
    current = TestVector();
    seen.clear();
    block_line = 0;
    return absl::OkStatus();
  };

  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const absl::string_view line = Trim(raw);
    if (line.empty()) {
      if (absl::Status s = finish_block(); !s.ok()) return s;
      continue;
    }
    if (line.front() == '#') continue;

    const size_t equals = line.find('=');
    if (equals == absl::string_view::npos) {
      return error(line_number, "expected \"Name = value\", got \"", line, "\"");
    }
    const std::string name(Trim(line.substr(0, equals)));
    const absl::string_view value = Trim(line.substr(equals + 1));
    const Attribute* attribute = nullptr;
    for (const Attribute& a : schema) {
      if (a.name == name) attribute = &a;
    }
    if (attribute == nullptr) {
      return error(line_number, "unknown attribute \"", name, "\" (expected ",
                   absl::StrJoin(names, ", "), ")");
    }
    if (auto it = seen.find(name); it != seen.end()) {
      return error(line_number, "attribute \"", name, "\" repeated (first on line ", it->second,
                   ")");
    }
    if (block_line == 0) {
      block_line = line_number;
      current.location_ = absl::StrCat(file_name, ":", line_number);
    }
    seen[name] = line_number;

    if (attribute->kind == AttributeKind::kHex) {
      std::vector<uint8_t> bytes;
      if (!ParseHex(value, &bytes)) {
        return error(line_number, "attribute \"", name,
                     "\" is not an even number of hex digits: \"", value, "\"");
      }
      current.bytes_[name] = std::move(bytes);
    } else {
      uint64_t number;
      if (!ParseDecimal(value, &number)) {
        return error(line_number, "attribute \"", name, "\" is not an unsigned decimal number: \"",
                     value, "\"");
      }
      current.numbers_[name] = number;
    }
  }
  if (absl::Status s = finish_block(); !s.ok()) return s;
  if (vectors.empty()) return error(line_number, "no test vectors in the file");
  return vectors;
}

std::string RunfilePath(absl::string_view workspace_path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  if (srcdir == nullptr || *srcdir == '\0') srcdir = std::getenv("RUNFILES_DIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || *srcdir == '\0') {
    // Started by hand from the workspace root: the file is right there.
    return std::string(workspace_path);
  }
  return absl::StrCat(srcdir, "/",
                      workspace != nullptr && *workspace != '\0' ? workspace : kDefaultWorkspace,
                      "/", workspace_path);
}

absl::StatusOr<std::vector<TestVector>> ReadTestVectors(absl::string_view workspace_path,
                                                        const std::vector<Attribute>& schema) {
  const std::string path = RunfilePath(workspace_path);
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("cannot open ", path, " (is ", workspace_path, " in the test's data?)"));
  }
  std::ostringstream text;
  text << file.rdbuf();
  return ParseTestVectors(text.str(), workspace_path, schema);
}

}  // namespace sealbox::crypto::test
