// The root key as an AES-256 key inside an HSM, used over PKCS#11 (CKM_AES_GCM with
// C_Encrypt and C_Decrypt). The key must be sensitive and never extractable: the HSM
// uses it but never lets it out, so sealbox refuses any other.
#ifndef SEALBOX_SERVER_CUSTODY_PKCS11_ROOT_KEY_H_
#define SEALBOX_SERVER_CUSTODY_PKCS11_ROOT_KEY_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "crypto/secret/secret_bytes.h"
#include "server/custody/pkcs11_module.h"
#include "server/custody/root_key.h"

namespace sealbox::server::custody {

struct HsmOptions {
  std::string module;     // --hsm-module: the vendor's PKCS#11 library
  std::string token;      // --hsm-token: the token's label
  std::string key_label;  // --hsm-key: the AES key's CKA_LABEL
  crypto::SecretBytes pin;
  std::string pin_source = "the PIN";  // names where the PIN came from, for messages
  // --init --hsm-create-key: generate the key in the HSM when the token has none by
  // that label (sensitive, never extractable, on the token).
  bool create_key = false;
  // How often the server checks the key while serving (root_key_monitor.h).
  absl::Duration check_interval = absl::Seconds(10);
};

class Pkcs11RootKey final : public RootKey {
 public:
  // Loads the module, finds the token, logs in and finds the key, checking that it
  // is a sensitive, non-extractable AES-256 key allowed to encrypt and decrypt.
  // FAILED_PRECONDITION with a sentence an operator can act on for each way that
  // fails (no such module or token, a wrong PIN, no key, an extractable key).
  static absl::StatusOr<std::unique_ptr<Pkcs11RootKey>> Open(HsmOptions options);

  ~Pkcs11RootKey() override;

  std::string Describe() const override;
  absl::StatusOr<std::string> Wrap(absl::Span<const uint8_t> secret,
                                   absl::string_view context) override;
  absl::StatusOr<crypto::SecretBytes> Unwrap(absl::string_view wrapped,
                                             absl::string_view context) override;
  absl::Status Check() override;

  // Whether Open generated the key (--hsm-create-key).
  bool created_key() const { return created_key_; }

 private:
  Pkcs11RootKey(HsmOptions options, std::shared_ptr<Pkcs11Module> module)
      : options_(std::move(options)), module_(std::move(module)) {}

  // Opens a session on the token, logs in and finds the key (or makes it: only when
  // Open is asked to, never when connecting again).
  absl::Status Connect(bool may_create_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status ConnectedOrConnect() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseSession() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<unsigned long> FindSlot() const;
  // The labels of the module's initialized tokens, by slot; an error when it cannot
  // list them.
  absl::StatusOr<std::vector<std::pair<unsigned long, std::string>>> ListTokens() const;
  absl::StatusOr<unsigned long> FindKey(bool may_create) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckKey(unsigned long key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<unsigned long> GenerateKey() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Failed(absl::string_view doing, unsigned long rv) const;
  // One small encryption with the key: whether the HSM and the key work now.
  absl::Status TestEncryption() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const HsmOptions options_;
  const std::shared_ptr<Pkcs11Module> module_;
  bool created_key_ = false;

  absl::Mutex mu_;
  unsigned long session_ ABSL_GUARDED_BY(mu_) = 0;  // 0: none
  unsigned long key_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sealbox::server::custody

#endif  // SEALBOX_SERVER_CUSTODY_PKCS11_ROOT_KEY_H_
