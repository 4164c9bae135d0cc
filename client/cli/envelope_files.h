// Envelope files (docs/FORMAT.md "Envelope file"): `seal --envelope` asks the server
// for a data key and encrypts the input locally under it, keeping the sealed data key
// in the header; `open` of such a file opens the sealed key with the server and
// decrypts locally. Only the 81-byte key crosses the network, whatever the file's size.
#ifndef SEALBOX_CLIENT_CLI_ENVELOPE_FILES_H_
#define SEALBOX_CLIENT_CLI_ENVELOPE_FILES_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

#include "client/cli/channel.h"
#include "client/cli/input.h"
#include "client/cli/outcome.h"
#include "client/cli/output.h"
#include "client/cli/progress.h"
#include "sealbox/v1/data.pb.h"

namespace sealbox::client {

// What sealing or opening one envelope file takes.
struct EnvelopeCall {
  std::string key;
  std::string aad;  // the sealed data key's associated data
  Input& input;
  Output& output;
  const Connection& connection;
  Progress& progress;
};

// GenerateDataKey of a `key_bytes` data key under `key`, bound to `aad`, its answer's
// checksums checked. `response` holds the sealed key and, with `include_plaintext`,
// the raw one: the caller wipes it (crypto::WipeOnExit). `what` names the command.
Outcome GenerateDataKey(const Connection& connection, absl::string_view what,
                        const std::string& key, const std::string& aad, uint32_t key_bytes,
                        bool include_plaintext, v1::GenerateDataKeyResponse& response);

// Writes `call.input` as an envelope file to `call.output` (not committed).
Outcome SealEnvelope(const EnvelopeCall& call);

// Opens an envelope file whose first bytes, already read, are `head`; writes the
// plaintext to `call.output` (not committed), each segment only once it verified.
Outcome OpenEnvelope(const EnvelopeCall& call, std::string head);

// Rewraps the data key of an envelope file whose first bytes are `head` (Rewrap: no
// plaintext leaves the server) and writes the file with the new header; the
// segments are copied as they are.
Outcome RewrapEnvelope(const EnvelopeCall& call, std::string head);

}  // namespace sealbox::client

#endif  // SEALBOX_CLIENT_CLI_ENVELOPE_FILES_H_
