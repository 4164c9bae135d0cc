// A SoftHSM2 token of a test's own, as the custody tests and an operator make one:
// a token directory under TEST_TMPDIR named by SOFTHSM2_CONF, initialized with
// softhsm2-util, and AES keys made with opensc's pkcs11-tool. SoftHSM2 reads
// SOFTHSM2_CONF when the module is initialized, so one token per test process.
#ifndef SEALBOX_SERVER_CUSTODY_TESTING_SOFT_HSM_H_
#define SEALBOX_SERVER_CUSTODY_TESTING_SOFT_HSM_H_

#include <string>

#include "server/custody/pkcs11_root_key.h"

namespace sealbox::server::custody::testing {

class SoftHsm {
 public:
  // Makes the token "sealbox" with user PIN kPin; aborts the test process if the
  // tools fail (they are installed by tools/dev).
  SoftHsm();

  static constexpr char kPin[] = "4711-unit-test";

  // An AES-256 key labelled `label` on the token: sensitive, extractable only if asked.
  void MakeKey(const std::string& label, bool extractable = false) const;

  // Options that reach the token with `label` as the key.
  HsmOptions Options(const std::string& label) const;

  const std::string& token_dir() const { return token_dir_; }
  static std::string Module();

 private:
  std::string token_dir_;
};

}  // namespace sealbox::server::custody::testing

#endif  // SEALBOX_SERVER_CUSTODY_TESTING_SOFT_HSM_H_
