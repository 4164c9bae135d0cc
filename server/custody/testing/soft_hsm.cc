#include "server/custody/testing/soft_hsm.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace sealbox::server::custody::testing {
namespace {

void Run(const std::string& command) {
  if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
    std::fprintf(stderr, "failed: %s\n", command.c_str());
    std::abort();
  }
}

}  // namespace

std::string SoftHsm::Module() {
  struct utsname host;
  uname(&host);
  return absl::StrCat("/usr/lib/", host.machine, "-linux-gnu/softhsm/libsofthsm2.so");
}

SoftHsm::SoftHsm() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string home = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/softhsm-XXXXXX");
  if (mkdtemp(home.data()) == nullptr) std::abort();
  token_dir_ = home + "/tokens";
  mkdir(token_dir_.c_str(), 0700);
  const std::string conf = home + "/softhsm2.conf";
  std::ofstream(conf) << "directories.tokendir = " << token_dir_
                      << "\nobjectstore.backend = file\n";
  setenv("SOFTHSM2_CONF", conf.c_str(), 1);
  Run(absl::StrCat("softhsm2-util --init-token --free --label sealbox --pin ", kPin,
                   " --so-pin so-", kPin));
}

void SoftHsm::MakeKey(const std::string& label, bool extractable) const {
  Run(absl::StrCat("pkcs11-tool --module ", Module(), " --token-label sealbox --login --pin ", kPin,
                   " --keygen --key-type AES:32 --sensitive --label ", label,
                   extractable ? " --extractable" : ""));
}

HsmOptions SoftHsm::Options(const std::string& label) const {
  HsmOptions options;
  options.module = Module();
  options.token = "sealbox";
  options.key_label = label;
  options.pin = crypto::SecretBytes(
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(kPin), sizeof(kPin) - 1));
  return options;
}

}  // namespace sealbox::server::custody::testing
