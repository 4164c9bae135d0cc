#include "server/custody/pkcs11_root_key.h"

#include <openssl/rand.h>

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "p11-kit-1/p11-kit/pkcs11.h"

namespace sealbox::server::custody {
namespace {

constexpr size_t kIvBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr size_t kRootKeyBytes = 32;
// CK_BBOOL's values (the GNU form of the header leaves kTrue to the compat form).
constexpr unsigned char kTrue = 1, kFalse = 0;

// How often Open looks for a token when the module lists none, and the pause between.
constexpr int kStartLooks = 4;
constexpr absl::Duration kStartLookPause = absl::Milliseconds(250);

// A token's label: 32 bytes padded with spaces.
std::string TokenLabel(const struct ck_token_info& info) {
  return std::string(absl::StripTrailingAsciiWhitespace(
      absl::string_view(reinterpret_cast<const char*>(info.label), sizeof(info.label))));
}

struct ck_attribute Attribute(ck_attribute_type_t type, void* value, unsigned long size) {
  struct ck_attribute a;
  a.type = type;
  a.value = value;
  a.value_len = size;
  return a;
}

// The GCM parameters for one call: the IV and the context as AAD; a 128-bit tag.
struct ck_gcm_params GcmParams(uint8_t* iv, absl::string_view context) {
  struct ck_gcm_params params = {};
  params.iv_ptr = iv;
  params.iv_len = kIvBytes;
  params.iv_bits = 8 * kIvBytes;
  params.aad_ptr = reinterpret_cast<unsigned char*>(const_cast<char*>(context.data()));
  params.aad_len = context.size();
  params.tag_bits = 8 * kTagBytes;
  return params;
}

// Return values that mean the session (or the device behind it) is gone, so that
// connecting again may help.
bool SessionLost(ck_rv_t rv) {
  return rv == CKR_SESSION_HANDLE_INVALID || rv == CKR_SESSION_CLOSED || rv == CKR_DEVICE_REMOVED ||
         rv == CKR_DEVICE_ERROR || rv == CKR_TOKEN_NOT_PRESENT || rv == CKR_USER_NOT_LOGGED_IN ||
         rv == CKR_KEY_HANDLE_INVALID || rv == CKR_OBJECT_HANDLE_INVALID || rv == CKR_GENERAL_ERROR;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Pkcs11RootKey>> Pkcs11RootKey::Open(HsmOptions options) {
  if (options.token.empty()) return absl::InvalidArgumentError("--hsm-token is required");
  if (options.key_label.empty()) return absl::InvalidArgumentError("--hsm-key is required");
  absl::StatusOr<std::shared_ptr<Pkcs11Module>> module = Pkcs11Module::Load(options.module);
  if (!module.ok()) return module.status();
  std::unique_ptr<Pkcs11RootKey> root(new Pkcs11RootKey(std::move(options), *std::move(module)));
  absl::MutexLock lock(&root->mu_);
  for (int look = 1;; ++look) {
    absl::Status connected = root->Connect(root->options_.create_key);
    if (connected.ok()) return root;
    // A module that lists no token at all, or fails a call outright, may have met
    // the token mid-write by another process (SoftHSM2 then leaves the token out, or
    // fails C_Login with CKR_GENERAL_ERROR, until it is initialized afresh): look
    // again, briefly, before saying so. A wrong label, PIN or key is a plain mistake.
    if (look == kStartLooks) return connected;
    if (!absl::IsUnavailable(connected)) {
      absl::StatusOr<std::vector<std::pair<unsigned long, std::string>>> tokens =
          root->ListTokens();
      if (!tokens.ok() || !tokens->empty()) return connected;
    }
    absl::SleepFor(kStartLookPause);
    if (!root->module_->Reinitialize().ok()) return connected;
  }
}

Pkcs11RootKey::~Pkcs11RootKey() {
  absl::MutexLock lock(&mu_);
  CloseSession();
}

std::string Pkcs11RootKey::Describe() const {
  return absl::StrCat("PKCS#11 key '", options_.key_label, "' on token '", options_.token, "'");
}

absl::Status Pkcs11RootKey::Failed(absl::string_view doing, unsigned long rv) const {
  return absl::UnavailableError(
      absl::StrCat(Describe(), ": ", doing, " failed: ", Pkcs11ErrorName(rv)));
}

absl::StatusOr<std::vector<std::pair<unsigned long, std::string>>> Pkcs11RootKey::ListTokens()
    const {
  struct ck_function_list* p11 = module_->functions();
  unsigned long count = 0;
  ck_rv_t rv = p11->C_GetSlotList(kTrue, nullptr, &count);
  std::vector<ck_slot_id_t> slots(count);
  if (rv == CKR_OK && count > 0) rv = p11->C_GetSlotList(kTrue, slots.data(), &count);
  if (rv != CKR_OK) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the PKCS#11 module ", module_->path(), " cannot list its tokens: ", Pkcs11ErrorName(rv)));
  }
  slots.resize(count);
  std::vector<std::pair<unsigned long, std::string>> tokens;
  for (ck_slot_id_t slot : slots) {
    struct ck_token_info info;
    if (p11->C_GetTokenInfo(slot, &info) != CKR_OK) continue;
    if ((info.flags & CKF_TOKEN_INITIALIZED) == 0) continue;  // a free slot
    tokens.emplace_back(slot, TokenLabel(info));
  }
  return tokens;
}

absl::StatusOr<unsigned long> Pkcs11RootKey::FindSlot() const {
  absl::StatusOr<std::vector<std::pair<unsigned long, std::string>>> tokens = ListTokens();
  if (!tokens.ok()) return tokens.status();
  std::vector<std::string> labels;
  for (const auto& [slot, label] : *tokens) {
    if (label == options_.token) return slot;
    labels.push_back(absl::StrCat("'", label, "'"));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "the PKCS#11 module ", module_->path(), " has no token labelled '", options_.token,
      "' (--hsm-token); its tokens: ", labels.empty() ? "none" : absl::StrJoin(labels, ", ")));
}

absl::Status Pkcs11RootKey::Connect(bool may_create_key) {
  CloseSession();
  struct ck_function_list* p11 = module_->functions();
  absl::StatusOr<unsigned long> slot = FindSlot();
  if (!slot.ok()) return slot.status();
  ck_session_handle_t session = 0;
  ck_rv_t rv =
      p11->C_OpenSession(*slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, nullptr, nullptr, &session);
  if (rv != CKR_OK) return Failed("opening a session", rv);
  session_ = session;
  rv = p11->C_Login(session_, CKU_USER, const_cast<unsigned char*>(options_.pin.data()),
                    options_.pin.size());
  if (rv == CKR_PIN_INCORRECT || rv == CKR_PIN_LOCKED || rv == CKR_PIN_EXPIRED ||
      rv == CKR_PIN_LEN_RANGE) {
    CloseSession();
    return absl::FailedPreconditionError(absl::StrCat(
        "token '", options_.token, "' refused ", options_.pin_source, ": ", Pkcs11ErrorName(rv),
        rv == CKR_PIN_LOCKED ? " (unlock it with the SO PIN)" : ""));
  }
  // Login state belongs to the application, not the session: another root key of
  // this process (two servers in one test) may have logged in already.
  if (rv != CKR_OK && rv != CKR_USER_ALREADY_LOGGED_IN) {
    CloseSession();
    return Failed("logging in", rv);
  }
  absl::StatusOr<unsigned long> key = FindKey(may_create_key);
  if (!key.ok()) {
    CloseSession();
    return key.status();
  }
  if (absl::Status s = CheckKey(*key); !s.ok()) {
    CloseSession();
    return s;
  }
  key_ = *key;
  return absl::OkStatus();
}

absl::Status Pkcs11RootKey::ConnectedOrConnect() {
  if (session_ != 0) return absl::OkStatus();
  return Connect(/*may_create_key=*/false);
}

void Pkcs11RootKey::CloseSession() {
  if (session_ != 0) module_->functions()->C_CloseSession(session_);
  session_ = 0;
  key_ = 0;
}

absl::StatusOr<unsigned long> Pkcs11RootKey::FindKey(bool may_create) {
  struct ck_function_list* p11 = module_->functions();
  ck_object_class_t secret_key = CKO_SECRET_KEY;
  std::string label = options_.key_label;
  struct ck_attribute match[] = {
      Attribute(CKA_CLASS, &secret_key, sizeof(secret_key)),
      Attribute(CKA_LABEL, label.data(), label.size()),
  };
  ck_rv_t rv = p11->C_FindObjectsInit(session_, match, 2);
  if (rv != CKR_OK) return Failed("looking for the key", rv);
  ck_object_handle_t found[2];
  unsigned long count = 0;
  rv = p11->C_FindObjects(session_, found, 2, &count);
  p11->C_FindObjectsFinal(session_);
  if (rv != CKR_OK) return Failed("looking for the key", rv);
  if (count > 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("token '", options_.token, "' holds more than one secret key labelled '",
                     options_.key_label, "' (--hsm-key); sealbox needs exactly one"));
  }
  if (count == 1) return found[0];
  if (may_create) return GenerateKey();
  return absl::FailedPreconditionError(absl::StrCat(
      "token '", options_.token, "' has no secret key labelled '", options_.key_label,
      "' (--hsm-key). Make one the HSM never releases (pkcs11-tool --keygen --key-type "
      "AES:32 --sensitive --label ",
      options_.key_label, "), or start once with --init --hsm-create-key"));
}

absl::StatusOr<unsigned long> Pkcs11RootKey::GenerateKey() {
  struct ck_function_list* p11 = module_->functions();
  ck_object_class_t secret_key = CKO_SECRET_KEY;
  ck_key_type_t aes = CKK_AES;
  unsigned long bytes = kRootKeyBytes;
  unsigned char yes = kTrue, no = kFalse;
  std::string label = options_.key_label;
  struct ck_attribute shape[] = {
      Attribute(CKA_CLASS, &secret_key, sizeof(secret_key)),
      Attribute(CKA_KEY_TYPE, &aes, sizeof(aes)),
      Attribute(CKA_VALUE_LEN, &bytes, sizeof(bytes)),
      Attribute(CKA_LABEL, label.data(), label.size()),
      Attribute(CKA_TOKEN, &yes, 1),
      Attribute(CKA_PRIVATE, &yes, 1),
      Attribute(CKA_SENSITIVE, &yes, 1),
      Attribute(CKA_EXTRACTABLE, &no, 1),
      Attribute(CKA_ENCRYPT, &yes, 1),
      Attribute(CKA_DECRYPT, &yes, 1),
      Attribute(CKA_WRAP, &no, 1),
      Attribute(CKA_UNWRAP, &no, 1),
  };
  struct ck_mechanism generate = {CKM_AES_KEY_GEN, nullptr, 0};
  ck_object_handle_t key = 0;
  ck_rv_t rv =
      p11->C_GenerateKey(session_, &generate, shape, sizeof(shape) / sizeof(shape[0]), &key);
  if (rv != CKR_OK) return Failed("generating the key (--hsm-create-key)", rv);
  created_key_ = true;
  return key;
}

absl::Status Pkcs11RootKey::CheckKey(unsigned long key) {
  struct ck_function_list* p11 = module_->functions();
  ck_key_type_t type = 0;
  unsigned long bytes = 0;
  unsigned char sensitive = kFalse, extractable = kTrue, encrypt = kFalse, decrypt = kFalse;
  struct ck_attribute read[] = {
      Attribute(CKA_KEY_TYPE, &type, sizeof(type)), Attribute(CKA_VALUE_LEN, &bytes, sizeof(bytes)),
      Attribute(CKA_SENSITIVE, &sensitive, 1),      Attribute(CKA_EXTRACTABLE, &extractable, 1),
      Attribute(CKA_ENCRYPT, &encrypt, 1),          Attribute(CKA_DECRYPT, &decrypt, 1),
  };
  ck_rv_t rv = p11->C_GetAttributeValue(session_, key, read, sizeof(read) / sizeof(read[0]));
  if (rv != CKR_OK) return Failed("reading the key's attributes", rv);
  const std::string which =
      absl::StrCat("HSM key '", options_.key_label, "' on token '", options_.token, "'");
  if (type != CKK_AES || bytes != kRootKeyBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat(which, " is not an AES-256 key (make one with --key-type AES:32)"));
  }
  if (extractable != kFalse || sensitive != kTrue) {
    return absl::FailedPreconditionError(absl::StrCat(
        which, " could leave the HSM (",
        extractable != kFalse ? "CKA_EXTRACTABLE is true" : "CKA_SENSITIVE is false",
        "); sealbox seals its KEK only with a key the HSM never releases: make one with "
        "--sensitive and without --extractable"));
  }
  if (encrypt != kTrue || decrypt != kTrue) {
    return absl::FailedPreconditionError(
        absl::StrCat(which, " may not encrypt and decrypt (CKA_ENCRYPT, CKA_DECRYPT)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Pkcs11RootKey::Wrap(absl::Span<const uint8_t> secret,
                                                absl::string_view context) {
  absl::MutexLock lock(&mu_);
  if (absl::Status s = ConnectedOrConnect(); !s.ok()) return s;
  struct ck_function_list* p11 = module_->functions();
  std::string out(kIvBytes + secret.size() + kTagBytes, '\0');
  uint8_t* iv = reinterpret_cast<uint8_t*>(out.data());
  if (RAND_bytes(iv, kIvBytes) != 1) return absl::InternalError("RAND_bytes failed");
  struct ck_gcm_params params = GcmParams(iv, context);
  struct ck_mechanism gcm = {CKM_AES_GCM, &params, sizeof(params)};
  ck_rv_t rv = p11->C_EncryptInit(session_, &gcm, key_);
  unsigned long written = secret.size() + kTagBytes;
  if (rv == CKR_OK) {
    rv = p11->C_Encrypt(session_, const_cast<uint8_t*>(secret.data()), secret.size(), iv + kIvBytes,
                        &written);
  }
  if (rv != CKR_OK) {
    if (SessionLost(rv)) CloseSession();
    return Failed("sealing", rv);
  }
  if (written != secret.size() + kTagBytes) {
    return absl::InternalError(
        absl::StrCat(Describe(), ": AES-GCM returned ", written, " bytes for ", secret.size()));
  }
  return out;
}

absl::StatusOr<crypto::SecretBytes> Pkcs11RootKey::Unwrap(absl::string_view wrapped,
                                                          absl::string_view context) {
  if (wrapped.size() < kIvBytes + kTagBytes) {
    return absl::FailedPreconditionError(absl::StrCat("too short to be sealed by ", Describe()));
  }
  absl::MutexLock lock(&mu_);
  if (absl::Status s = ConnectedOrConnect(); !s.ok()) return s;
  struct ck_function_list* p11 = module_->functions();
  std::string iv(wrapped.substr(0, kIvBytes));
  std::string sealed(wrapped.substr(kIvBytes));
  struct ck_gcm_params params = GcmParams(reinterpret_cast<uint8_t*>(iv.data()), context);
  struct ck_mechanism gcm = {CKM_AES_GCM, &params, sizeof(params)};
  // Room for the tag too: some modules check the output buffer against the input.
  crypto::SecretBytes plain(sealed.size());
  unsigned long written = plain.size();
  ck_rv_t rv = p11->C_DecryptInit(session_, &gcm, key_);
  if (rv == CKR_OK) {
    rv = p11->C_Decrypt(session_, reinterpret_cast<unsigned char*>(sealed.data()), sealed.size(),
                        plain.data(), &written);
  }
  // A tag that does not verify is CKR_ENCRYPTED_DATA_INVALID by the standard, but
  // some modules (SoftHSM2) say CKR_GENERAL_ERROR: when the key still encrypts, the
  // data was at fault, not the HSM.
  if (rv == CKR_ENCRYPTED_DATA_INVALID || rv == CKR_ENCRYPTED_DATA_LEN_RANGE ||
      (rv != CKR_OK && TestEncryption().ok())) {
    return absl::FailedPreconditionError(
        absl::StrCat("the sealed KEK does not open under ", Describe(),
                     ": another HSM key sealed it, or it was altered"));
  }
  if (rv != CKR_OK) {
    if (SessionLost(rv)) CloseSession();
    return Failed("unsealing", rv);
  }
  crypto::SecretBytes out(plain.span().first(written));
  return out;
}

absl::Status Pkcs11RootKey::TestEncryption() {
  uint8_t iv[kIvBytes];
  uint8_t block[16] = {}, out[16 + kTagBytes];
  if (RAND_bytes(iv, sizeof(iv)) != 1) return absl::InternalError("RAND_bytes failed");
  struct ck_gcm_params params = GcmParams(iv, "sealbox/v1/root-key-check");
  struct ck_mechanism gcm = {CKM_AES_GCM, &params, sizeof(params)};
  unsigned long written = sizeof(out);
  struct ck_function_list* p11 = module_->functions();
  ck_rv_t rv = p11->C_EncryptInit(session_, &gcm, key_);
  if (rv == CKR_OK) rv = p11->C_Encrypt(session_, block, sizeof(block), out, &written);
  if (rv != CKR_OK) return Failed("a test encryption", rv);
  return absl::OkStatus();
}

absl::Status Pkcs11RootKey::Check() {
  absl::MutexLock lock(&mu_);
  absl::Status usable = ConnectedOrConnect();
  if (usable.ok()) {
    // The key must still be on the token, and usable: a lost session, a removed
    // token or a deleted key all fail here.
    absl::StatusOr<unsigned long> key = FindKey(/*may_create=*/false);
    if (!key.ok()) {
      usable = key.status();
    } else if (*key != key_) {
      key_ = *key;
    }
  }
  if (usable.ok()) usable = TestEncryption();
  if (usable.ok()) return usable;
  // Lost: start the module afresh and connect again, once per check.
  CloseSession();
  if (module_->Reinitialize().ok() && Connect(/*may_create_key=*/false).ok()) {
    return absl::OkStatus();
  }
  CloseSession();
  return absl::UnavailableError(usable.message());
}

}  // namespace sealbox::server::custody
