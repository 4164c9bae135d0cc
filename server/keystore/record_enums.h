// The stored records' enums (sealbox.internal) as the keystore's own (info.h). Both
// are numbered as the admin API numbers them, so a conversion is a cast, and a value
// one side does not know passes through unchanged, as it always has.
#ifndef SEALBOX_SERVER_KEYSTORE_RECORD_ENUMS_H_
#define SEALBOX_SERVER_KEYSTORE_RECORD_ENUMS_H_

#include "sealbox/internal/keystore_file.pb.h"
#include "server/keystore/info.h"

namespace sealbox::server {

static_assert(NumberedAsKeyAlgorithm(internal::ALGORITHM_UNSPECIFIED, internal::AES_128_GCM,
                                     internal::AES_256_GCM));
static_assert(NumberedAsVersionState(internal::ENABLED, internal::DISABLED, internal::DESTROYED));
static_assert(NumberedAsOperation(internal::SEAL, internal::OPEN, internal::REWRAP,
                                  internal::GENERATE_DATA_KEY));

inline KeyAlgorithm FromRecord(internal::Algorithm algorithm) {
  return static_cast<KeyAlgorithm>(algorithm);
}
inline VersionState FromRecord(internal::KeyVersionState state) {
  return static_cast<VersionState>(state);
}
inline internal::Algorithm ToRecord(KeyAlgorithm algorithm) {
  return static_cast<internal::Algorithm>(algorithm);
}
inline internal::KeyVersionState ToRecord(VersionState state) {
  return static_cast<internal::KeyVersionState>(state);
}

}  // namespace sealbox::server

#endif  // SEALBOX_SERVER_KEYSTORE_RECORD_ENUMS_H_
