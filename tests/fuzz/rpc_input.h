// How the rpc fuzzer reads its input's first two bytes; shared with the corpus
// generator.
#ifndef SEALBOX_TESTS_FUZZ_RPC_INPUT_H_
#define SEALBOX_TESTS_FUZZ_RPC_INPUT_H_

namespace sealbox::fuzz {

// Byte 0, taken mod kRpcCount.
enum Rpc {
  kSeal,
  kOpen,
  kRewrap,
  kSealStream,
  kOpenStream,
  kCreateTenant,
  kDeleteTenant,
  kListTenants,
  kIssueToken,
  kRevokeToken,
  kCreateKey,
  kImportKey,
  kRotateKey,
  kGetKey,
  kListKeys,
  kSetMinDecryptionVersion,
  kDisableKeyVersion,
  kEnableKeyVersion,
  kDestroyKeyVersion,
  // Added later, so the first ones keep their numbers (and the corpus its meaning).
  kSealBatch,
  kOpenBatch,
  kRewrapBatch,
  kGenerateDataKey,
  kRenewToken,
  kTrimKey,
  kSetRotationPeriod,
  kIssueAdminToken,
  kRevokeAdminToken,
  kListAdminTokens,
  kDisableKey,
  kEnableKey,
  kRpcCount
};

// Byte 1, taken mod kCredentialCount: which bearer token the call carries.
enum Credential { kTenantToken, kAdmin, kNone, kWrongToken, kCredentialCount };

}  // namespace sealbox::fuzz

#endif  // SEALBOX_TESTS_FUZZ_RPC_INPUT_H_
