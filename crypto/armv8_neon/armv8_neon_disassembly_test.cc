// Checks the built kernel's machine code (objdump -d of its libraries, made by the
// genrule :disassembly) for what the constant-time argument and the target CPUs
// rely on:
//   - no AES or 64-bit PMULL instruction anywhere (cores without the crypto
//     extensions would fault on them);
//   - no load or store with a register offset ([xN, xM]) anywhere: every table
//     lookup by data goes through tbl/tbx on registers, so the code has no use for
//     an indexed address (this does not catch an address computed into one
//     register, which the review of the source and the valgrind run cover);
//   - in the assembly loops, no conditional branch but the loop count's, and no
//     call.
// Usage: armv8_neon_disassembly_test DISASSEMBLY_FILE
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace {

std::string disassembly_path;

struct Instruction {
  std::string function;
  std::string text;  // mnemonic and operands, as objdump prints them
};

// Parsed once (std::regex is slow under QEMU).
const std::vector<Instruction>& ReadDisassembly() {
  static const std::vector<Instruction>* const instructions = [] {
    auto* parsed = new std::vector<Instruction>;
    std::ifstream file(disassembly_path);
    EXPECT_TRUE(file.good()) << "cannot read " << disassembly_path;
    const std::regex function_line(R"(^[0-9a-f]+ <([^>]+)>:$)");
    const std::regex instruction_line(R"(^\s*[0-9a-f]+:\s+(.*)$)");
    std::string function, line;
    std::smatch match;
    while (std::getline(file, line)) {
      if (std::regex_match(line, match, function_line)) {
        function = match[1];
      } else if (std::regex_match(line, match, instruction_line) && !function.empty()) {
        std::string text = match[1];
        const size_t comment = text.find("//");
        if (comment != std::string::npos) text.erase(comment);
        parsed->push_back({function, text});
      }
    }
    return parsed;
  }();
  return *instructions;
}

bool IsHotLoop(const std::string& function) {
  return function == "armv8_neon_ctr128_blocks" || function == "armv8_neon_ctr192_blocks" ||
         function == "armv8_neon_ctr256_blocks" || function == "armv8_neon_ghash_blocks";
}

TEST(Armv8NeonDisassemblyTest, HasTheKernel) {
  std::set<std::string> functions;
  for (const Instruction& i : ReadDisassembly()) functions.insert(i.function);
  for (const char* name : {"armv8_neon_ctr128_blocks", "armv8_neon_ctr192_blocks",
                           "armv8_neon_ctr256_blocks", "armv8_neon_ghash_blocks"}) {
    EXPECT_EQ(functions.count(name), 1u) << name << " missing from " << disassembly_path;
  }
  EXPECT_GT(functions.size(), 8u);
}

TEST(Armv8NeonDisassemblyTest, NoCryptoExtensionInstructions) {
  const std::regex crypto(R"(^(aes[a-z]*|sha[0-9a-z]*|sm[34][a-z0-9]*|eor3|bcax|rax1|xar)\s)");
  const std::regex pmull64(R"(^pmull2?\s+v\d+\.1q)");
  for (const Instruction& i : ReadDisassembly()) {
    EXPECT_FALSE(std::regex_search(i.text, crypto)) << i.function << ": " << i.text;
    EXPECT_FALSE(std::regex_search(i.text, pmull64)) << i.function << ": " << i.text;
  }
}

TEST(Armv8NeonDisassemblyTest, NoRegisterOffsetAddressing) {
  const std::regex indexed(R"(\[(x\d+|sp), [xw]\d+)");
  for (const Instruction& i : ReadDisassembly()) {
    EXPECT_FALSE(std::regex_search(i.text, indexed)) << i.function << ": " << i.text;
  }
}

// The loops' only conditional branches: `cbz` on the count argument at entry and
// the back edge `b.ne` on the flags of the `subs` that decrements it. No calls.
TEST(Armv8NeonDisassemblyTest, LoopsBranchOnlyOnTheirCount) {
  const std::map<std::string, std::string> count_register = {
      {"armv8_neon_ctr128_blocks", "x4"},
      {"armv8_neon_ctr192_blocks", "x4"},
      {"armv8_neon_ctr256_blocks", "x4"},
      {"armv8_neon_ghash_blocks", "x3"},
  };
  const std::regex conditional(R"(^(b\.[a-z]+|cbn?z|tbn?z|csel|csinc|csinv|csneg|cset|ccmp)\s)");
  const std::regex call(R"(^(bl|blr|br)\s)");
  const std::regex sets_flags(
      R"(^(adds|subs|ands|bics|negs|ngcs|adcs|sbcs|cmp|cmn|tst|ccmp|ccmn|fcmp|fccmp)\s)");
  const std::vector<Instruction>& instructions = ReadDisassembly();
  std::map<std::string, int> branches;
  for (size_t k = 0; k < instructions.size(); ++k) {
    const Instruction& i = instructions[k];
    if (!IsHotLoop(i.function)) continue;
    EXPECT_FALSE(std::regex_search(i.text, call)) << i.function << ": " << i.text;
    if (!std::regex_search(i.text, conditional)) continue;
    ++branches[i.function];
    const std::string& count = count_register.at(i.function);
    const bool entry_check = i.text.rfind("cbz\t" + count + ",", 0) == 0;
    bool back_edge = false;
    if (i.text.rfind("b.ne\t", 0) == 0) {
      size_t f = k;
      while (f > 0 && instructions[f - 1].function == i.function &&
             !std::regex_search(instructions[f - 1].text, sets_flags)) {
        --f;
      }
      back_edge = f > 0 && instructions[f - 1].text.rfind(
                               "subs\t" + count + ", " + count + ", #0x1", 0) == 0;
    }
    EXPECT_TRUE(entry_check || back_edge)
        << i.function << ": conditional instruction other than the loop count's: " << i.text;
  }
  for (const auto& [function, reg] : count_register) {
    EXPECT_EQ(branches[function], 2) << function;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    fprintf(stderr, "usage: %s DISASSEMBLY_FILE\n", argv[0]);
    return 2;
  }
  disassembly_path = argv[1];
  return RUN_ALL_TESTS();
}
