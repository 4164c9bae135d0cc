#include "client/cli/args.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sealbox::client {
namespace {

const FlagSpec kKey{"--key", "", "NAME", "the key"};
const FlagSpec kInput{"--input", "-i", "FILE", "input file"};
const FlagSpec kStream{"--stream", "", "", "always stream"};
const std::vector<const FlagSpec*> kSpecs = {&kKey, &kInput, &kStream};

TEST(LooksLikeFlagTest, DashesStartFlagsButALoneDashIsStdin) {
  EXPECT_TRUE(LooksLikeFlag("--key"));
  EXPECT_TRUE(LooksLikeFlag("-i"));
  EXPECT_TRUE(LooksLikeFlag("--key=k"));
  EXPECT_FALSE(LooksLikeFlag("-"));
  EXPECT_FALSE(LooksLikeFlag("acme"));
  EXPECT_FALSE(LooksLikeFlag(""));
}

// ConsumeFlag on args[0], returning the outcome; `flag` and `index` show what it read.
struct Consumed {
  Outcome outcome;
  ParsedFlag flag;
  size_t index = 0;
};

Consumed Consume(const std::vector<std::string>& args) {
  ParsedFlag flag;
  size_t index = 0;
  Outcome outcome = ConsumeFlag(args, &index, kSpecs, flag);
  return {outcome, flag, index};
}

TEST(ConsumeFlagTest, EachFormReadsItsFlagValueAndHowFarItGot) {
  struct Case {
    std::vector<std::string> args;
    const FlagSpec* spec;
    std::string value;
    size_t index;  // where the next argument starts
  };
  const Case cases[] = {
      {{"--key", "default", "rest"}, &kKey, "default", 2},  // value as the next argument
      {{"--key=a=b", "rest"}, &kKey, "a=b", 1},             // only the first '=' separates
      {{"--key="}, &kKey, "", 1},                           // an empty value
      {{"-i", "in.txt"}, &kInput, "in.txt", 2},             // the short name
      {{"--stream", "file"}, &kStream, "", 1},              // a switch leaves "file"
  };
  for (const Case& c : cases) {
    Consumed got = Consume(c.args);
    ASSERT_TRUE(got.outcome.ok()) << c.args[0] << ": " << got.outcome.message();
    EXPECT_EQ(got.flag.spec, c.spec) << c.args[0];
    EXPECT_EQ(got.flag.value, c.value) << c.args[0];
    EXPECT_EQ(got.index, c.index) << c.args[0];
  }
}

TEST(ConsumeFlagTest, SwitchWithAValueIsAUsageError) {
  Consumed c = Consume({"--stream=yes"});
  EXPECT_EQ(c.outcome.exit_code(), kExitUsage);
  EXPECT_EQ(c.outcome.message(), "--stream takes no value");
}

TEST(ConsumeFlagTest, MissingValueIsAUsageErrorNamingIt) {
  Consumed c = Consume({"--key"});
  EXPECT_EQ(c.outcome.exit_code(), kExitUsage);
  EXPECT_EQ(c.outcome.message(), "--key needs a value (NAME)");
}

TEST(ConsumeFlagTest, UnknownFlagIsAUsageErrorWithoutItsValue) {
  Consumed c = Consume({"--frob=secret"});
  EXPECT_EQ(c.outcome.exit_code(), kExitUsage);
  EXPECT_EQ(c.outcome.message(), "unknown flag '--frob'");
  EXPECT_EQ(c.index, 0u);
}

TEST(ConsumeFlagTest, ShortNamesTakeNoEqualsSign) {
  Consumed c = Consume({"-i=x"});
  EXPECT_EQ(c.outcome.exit_code(), kExitUsage);
  EXPECT_EQ(c.outcome.message(), "unknown flag '-i=x'");
}

TEST(ParseArgsTest, FlagsAndPositionalArgumentsInterleave) {
  ParsedArgs ok;
  Outcome outcome = ParseArgs({"acme", "--key", "k", "-", "--stream", "last"}, kSpecs, ok);
  ASSERT_TRUE(outcome.ok()) << outcome.message();
  EXPECT_EQ(ok.positional, (std::vector<std::string>{"acme", "-", "last"}));
  ASSERT_EQ(ok.flags.size(), 2u);
  EXPECT_EQ(ok.flags[0].spec, &kKey);
  EXPECT_EQ(ok.flags[0].value, "k");
  EXPECT_EQ(ok.flags[1].spec, &kStream);
  EXPECT_FALSE(ok.help);
}

TEST(ParseArgsTest, DoubleDashEndsTheFlags) {
  ParsedArgs parsed;
  Outcome outcome = ParseArgs({"--stream", "--", "--key", "-h"}, kSpecs, parsed);
  ASSERT_TRUE(outcome.ok()) << outcome.message();
  EXPECT_EQ(parsed.positional, (std::vector<std::string>{"--key", "-h"}));
  ASSERT_EQ(parsed.flags.size(), 1u);
  EXPECT_FALSE(parsed.help);
}

TEST(ParseArgsTest, HelpIsAcceptedAnywhere) {
  for (const char* help : {"-h", "--help"}) {
    ParsedArgs parsed;
    Outcome outcome = ParseArgs({"acme", help, "--key", "k"}, kSpecs, parsed);
    ASSERT_TRUE(outcome.ok()) << outcome.message();
    EXPECT_TRUE(parsed.help) << help;
    EXPECT_EQ(parsed.positional, std::vector<std::string>{"acme"});
  }
}

TEST(ParseArgsTest, StopsAtTheFirstBadFlag) {
  ParsedArgs parsed;
  Outcome outcome = ParseArgs({"--key", "k", "--frob", "--stream"}, kSpecs, parsed);
  EXPECT_EQ(outcome.exit_code(), kExitUsage);
  EXPECT_EQ(outcome.message(), "unknown flag '--frob'");
}

}  // namespace
}  // namespace sealbox::client
