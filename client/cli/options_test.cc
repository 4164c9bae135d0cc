#include "client/cli/options.h"

#include <stdlib.h>

#include <string>

#include "gtest/gtest.h"

namespace sealbox::client {
namespace {

const FlagSpec& Global(const std::string& name) {
  for (const FlagSpec& spec : GlobalFlags()) {
    if (spec.name == name) return spec;
  }
  ADD_FAILURE() << "no global flag " << name;
  static const FlagSpec none;
  return none;
}

Outcome Apply(const std::string& name, const std::string& value, GlobalOptions& options) {
  return ApplyGlobalFlag(ParsedFlag{&Global(name), value}, options);
}

TEST(GlobalFlagsTest, ListedInHelpOrderWithValueNames) {
  std::vector<std::string> names;
  for (const FlagSpec& spec : GlobalFlags()) names.push_back(spec.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"--server", "--token", "--tls-ca", "--tls-cert", "--tls-key",
                                      "--tls-server-name", "--insecure", "--timeout", "--json"}));
  EXPECT_EQ(Global("--server").value_name, "HOST:PORT");
  EXPECT_EQ(Global("--insecure").value_name, "");  // a switch
  EXPECT_EQ(Global("--json").value_name, "");
}

TEST(ApplyGlobalFlagTest, EachFlagSetsItsOption) {
  GlobalOptions options;
  ASSERT_TRUE(Apply("--server", "h:1", options).ok());
  ASSERT_TRUE(Apply("--token", "t0k", options).ok());
  ASSERT_TRUE(Apply("--tls-ca", "ca.pem", options).ok());
  ASSERT_TRUE(Apply("--tls-cert", "c.pem", options).ok());
  ASSERT_TRUE(Apply("--tls-key", "k.pem", options).ok());
  ASSERT_TRUE(Apply("--tls-server-name", "sealbox", options).ok());
  ASSERT_TRUE(Apply("--timeout", "2.5", options).ok());
  ASSERT_TRUE(Apply("--json", "", options).ok());
  EXPECT_EQ(options.server, "h:1");
  EXPECT_EQ(options.token, "t0k");
  EXPECT_EQ(options.tls_ca, "ca.pem");
  EXPECT_EQ(options.tls_cert, "c.pem");
  EXPECT_EQ(options.tls_key, "k.pem");
  EXPECT_EQ(options.tls_server_name, "sealbox");
  EXPECT_EQ(options.timeout_seconds, 2.5);
  EXPECT_TRUE(options.json);
  EXPECT_FALSE(options.insecure);
  ASSERT_TRUE(Apply("--insecure", "", options).ok());
  EXPECT_TRUE(options.insecure);
}

TEST(ApplyGlobalFlagTest, TimeoutMustBeAPositiveNumberOfSecondsUpToAYear) {
  for (const char* bad : {"soon", "-1", "0", "inf", "nan", "", "31536001"}) {
    GlobalOptions options;
    Outcome outcome = Apply("--timeout", bad, options);
    EXPECT_EQ(outcome.exit_code(), kExitUsage) << bad;
    EXPECT_EQ(outcome.message(),
              std::string("--timeout must be a positive number of seconds, not '") + bad + "'");
    EXPECT_FALSE(options.timeout_seconds.has_value());
  }
  GlobalOptions options;
  EXPECT_TRUE(Apply("--timeout", "31536000", options).ok());
  EXPECT_TRUE(Apply("--timeout", "0.001", options).ok());
}

TEST(ApplyGlobalFlagTest, ACommandFlagIsNotGlobal) {
  const FlagSpec key{"--key", "", "NAME", ""};
  GlobalOptions options;
  Outcome outcome = ApplyGlobalFlag(ParsedFlag{&key, "k"}, options);
  EXPECT_EQ(outcome.exit_code(), kExitUsage);
  EXPECT_EQ(outcome.message(), "unknown flag '--key'");
}

TEST(OptionsFromEnvironmentTest, ServerAndTokenFromTheEnvironmentWhenSet) {
  unsetenv("SEALBOX_SERVER");
  unsetenv("SEALBOX_TOKEN");
  GlobalOptions defaults = OptionsFromEnvironment();
  EXPECT_EQ(defaults.server, "127.0.0.1:50051");
  EXPECT_EQ(defaults.token, "");

  setenv("SEALBOX_SERVER", "sealbox:443", 1);
  setenv("SEALBOX_TOKEN", "from-env", 1);
  GlobalOptions from_env = OptionsFromEnvironment();
  EXPECT_EQ(from_env.server, "sealbox:443");
  EXPECT_EQ(from_env.token, "from-env");

  // Set but empty counts as unset.
  setenv("SEALBOX_SERVER", "", 1);
  setenv("SEALBOX_TOKEN", "", 1);
  EXPECT_EQ(OptionsFromEnvironment().server, "127.0.0.1:50051");
  EXPECT_EQ(OptionsFromEnvironment().token, "");
  unsetenv("SEALBOX_SERVER");
  unsetenv("SEALBOX_TOKEN");
}

Outcome Validate(void (*change)(GlobalOptions&)) {
  GlobalOptions options;
  change(options);
  return ValidateOptions(options);
}

TEST(ValidateOptionsTest, DefaultsAreValid) { EXPECT_TRUE(ValidateOptions(GlobalOptions{}).ok()); }

TEST(ValidateOptionsTest, ServerMustParse) {
  Outcome outcome = Validate([](GlobalOptions& o) { o.server = "nowhere"; });
  EXPECT_EQ(outcome.exit_code(), kExitUsage);
  EXPECT_EQ(outcome.message(),
            "server address 'nowhere' is not HOST:PORT, [IPV6]:PORT or unix:PATH");
}

TEST(ValidateOptionsTest, TokenMustBeVisibleAscii) {
  for (const char* bad : {"two words", "token\n", "tab\there", "caf\xc3\xa9"}) {
    GlobalOptions options;
    options.token = bad;
    Outcome outcome = ValidateOptions(options);
    EXPECT_EQ(outcome.exit_code(), kExitUsage) << bad;
    EXPECT_EQ(outcome.message(), "the token holds a space, newline or non-ASCII character");
  }
  GlobalOptions options;
  options.token = "sbx_AZaz09-._~+/=";
  EXPECT_TRUE(ValidateOptions(options).ok());
}

TEST(ValidateOptionsTest, ClientCertificateAndKeyGoTogether) {
  Outcome cert_only = Validate([](GlobalOptions& o) { o.tls_cert = "c.pem"; });
  EXPECT_EQ(cert_only.exit_code(), kExitUsage);
  EXPECT_EQ(cert_only.message(), "--tls-cert and --tls-key go together");
  Outcome key_only = Validate([](GlobalOptions& o) { o.tls_key = "k.pem"; });
  EXPECT_EQ(key_only.message(), "--tls-cert and --tls-key go together");
  EXPECT_TRUE(Validate([](GlobalOptions& o) {
                o.tls_cert = "c.pem";
                o.tls_key = "k.pem";
              }).ok());
}

TEST(ValidateOptionsTest, InsecureExcludesEveryTlsFlag) {
  for (void (*tls)(GlobalOptions&) :
       {+[](GlobalOptions& o) { o.tls_ca = "ca.pem"; },
        +[](GlobalOptions& o) { o.tls_server_name = "sealbox"; },
        +[](GlobalOptions& o) { o.tls_cert = "c.pem", o.tls_key = "k.pem"; }}) {
    GlobalOptions options;
    tls(options);
    options.insecure = true;
    Outcome outcome = ValidateOptions(options);
    EXPECT_EQ(outcome.exit_code(), kExitUsage);
    EXPECT_EQ(outcome.message(), "--insecure cannot be combined with --tls-* flags");
  }
  EXPECT_TRUE(Validate([](GlobalOptions& o) {
                o.server = "10.0.0.1:1";
                o.insecure = true;
              }).ok());
}

}  // namespace
}  // namespace sealbox::client
