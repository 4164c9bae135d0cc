#include "client/cli/envelope_files.h"

#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "client/cli/checksums.h"
#include "crypto/format/envelope.h"
#include "crypto/secret/secure_wipe.h"
#include "sealbox/v1/data.grpc.pb.h"

namespace sealbox::client {
namespace {

namespace v1 = ::sealbox::v1;

// Input is read, and output written, a segment's worth at a time.
constexpr size_t kChunkBytes = crypto::kDefaultEnvelopeSegmentBytes;

absl::Span<const uint8_t> Bytes(const std::string& s) {
  return absl::MakeSpan(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

Outcome Damaged(const Input& input, absl::string_view why) {
  return Outcome::DecryptionFailed(absl::StrCat(input.name(), ": ", why));
}

// Reads until `out` holds `size` bytes; false if the input ends first.
absl::StatusOr<bool> ReadExactly(Input& input, size_t size, std::string& out) {
  while (out.size() < size) {
    absl::StatusOr<size_t> n = input.Read(size - out.size(), out);
    if (!n.ok()) return n.status();
    if (*n == 0) return false;
  }
  return true;
}

}  // namespace

Outcome GenerateDataKey(const Connection& connection, absl::string_view what,
                        const std::string& key, const std::string& aad, uint32_t key_bytes,
                        bool include_plaintext, v1::GenerateDataKeyResponse& response) {
  v1::GenerateDataKeyRequest request;
  request.set_key(key);
  request.set_data_key_bytes(key_bytes);
  request.set_associated_data(aad);
  request.set_include_plaintext(include_plaintext);
  SetCrc32c(request.associated_data(), *request.mutable_associated_data_crc32c());
  grpc::ClientContext context;
  connection.Prepare(context, CallKind::kUnary);
  grpc::Status status =
      v1::Crypto::NewStub(connection.channel())->GenerateDataKey(&context, request, &response);
  if (!status.ok()) return connection.Failed(what, status, context);
  if (absl::Status checked = CheckAnswer(what, response); !checked.ok()) {
    return Outcome::Error(std::string(checked.message()));
  }
  return Outcome::Ok();
}

Outcome SealEnvelope(const EnvelopeCall& call) {
  v1::GenerateDataKeyResponse response;
  crypto::WipeOnExit wipe(*response.mutable_plaintext());
  if (Outcome made = GenerateDataKey(call.connection, "seal", call.key, call.aad, 32,
                                     /*include_plaintext=*/true, response);
      !made.ok()) {
    return made;
  }

  absl::StatusOr<crypto::EnvelopeHeader> header =
      crypto::NewEnvelopeHeader(Bytes(response.ciphertext()), 0);
  if (!header.ok()) return Outcome::Error(std::string(header.status().message()));
  absl::StatusOr<std::unique_ptr<crypto::SegmentSealer>> sealer =
      crypto::EnvelopeSealer(Bytes(response.plaintext()), *header);
  if (!sealer.ok()) return Outcome::Error(std::string(sealer.status().message()));

  std::string sealed(header->bytes.begin(), header->bytes.end());
  std::string plaintext;
  for (;;) {
    plaintext.clear();
    absl::StatusOr<size_t> n = call.input.Read(kChunkBytes, plaintext);
    if (!n.ok()) return Outcome::Error(std::string(n.status().message()));
    absl::Status done =
        *n == 0 ? (*sealer)->Finish(sealed) : (*sealer)->Update(Bytes(plaintext), sealed);
    if (done.ok()) done = call.output.Write(sealed);
    if (!done.ok()) return Outcome::Error(std::string(done.message()));
    sealed.clear();
    call.progress.Advance(*n);
    if (*n == 0) break;
  }
  crypto::SecureWipe(plaintext.data(), plaintext.capacity());
  return Outcome::Ok();
}

// Reads the rest of the header that `head` starts.
Outcome ReadHeader(Input& input, std::string& head, crypto::EnvelopeHeader& header) {
  // The fixed part of the header says how long the rest is.
  absl::StatusOr<bool> complete = ReadExactly(input, crypto::kEnvelopeFixedHeaderBytes, head);
  if (!complete.ok()) return Outcome::Error(std::string(complete.status().message()));
  if (!*complete) return Damaged(input, "envelope header cut short");
  absl::StatusOr<size_t> header_bytes = crypto::EnvelopeHeaderBytes(Bytes(head));
  if (!header_bytes.ok()) return Damaged(input, header_bytes.status().message());
  complete = ReadExactly(input, *header_bytes, head);
  if (!complete.ok()) return Outcome::Error(std::string(complete.status().message()));
  if (!*complete) return Damaged(input, "envelope header cut short");
  absl::StatusOr<crypto::EnvelopeHeader> parsed = crypto::ParseEnvelopeHeader(Bytes(head));
  if (!parsed.ok()) return Damaged(input, parsed.status().message());
  header = *std::move(parsed);
  return Outcome::Ok();
}

Outcome OpenEnvelope(const EnvelopeCall& call, std::string head) {
  crypto::EnvelopeHeader header;
  if (Outcome read = ReadHeader(call.input, head, header); !read.ok()) return read;

  v1::OpenRequest request;
  FillCiphertextRequest(call.key,
                        std::string(header.sealed_data_key.begin(), header.sealed_data_key.end()),
                        call.aad, request);
  v1::OpenResponse response;
  crypto::WipeOnExit wipe(*response.mutable_plaintext());
  grpc::ClientContext context;
  call.connection.Prepare(context, CallKind::kUnary);
  grpc::Status status =
      v1::Crypto::NewStub(call.connection.channel())->Open(&context, request, &response);
  if (!status.ok()) return call.connection.Failed("open", status, context);
  if (absl::Status checked = CheckAnswer("open", response); !checked.ok()) {
    return Outcome::Error(std::string(checked.message()));
  }
  absl::StatusOr<std::unique_ptr<crypto::SegmentOpener>> opener =
      crypto::EnvelopeOpener(Bytes(response.plaintext()), header);
  if (!opener.ok()) return Damaged(call.input, "the sealed data key is not a data key");

  std::string sealed;
  std::string plaintext;
  Outcome outcome = Outcome::Ok();
  for (;;) {
    sealed.clear();
    absl::StatusOr<size_t> n = call.input.Read(kChunkBytes, sealed);
    if (!n.ok()) {
      outcome = Outcome::Error(std::string(n.status().message()));
      break;
    }
    absl::Status opened =
        *n == 0 ? (*opener)->Finish(plaintext) : (*opener)->Update(Bytes(sealed), plaintext);
    if (!opened.ok()) {
      outcome = Damaged(call.input, "decryption failed");
      break;
    }
    if (absl::Status written = call.output.Write(plaintext); !written.ok()) {
      outcome = Outcome::Error(std::string(written.message()));
      break;
    }
    crypto::SecureWipe(plaintext.data(), plaintext.size());
    plaintext.clear();
    call.progress.Advance(*n);
    if (*n == 0) break;
  }
  crypto::SecureWipe(plaintext.data(), plaintext.capacity());
  return outcome;
}

Outcome RewrapEnvelope(const EnvelopeCall& call, std::string head) {
  crypto::EnvelopeHeader header;
  if (Outcome read = ReadHeader(call.input, head, header); !read.ok()) return read;
  v1::RewrapRequest request;
  FillCiphertextRequest(call.key,
                        std::string(header.sealed_data_key.begin(), header.sealed_data_key.end()),
                        call.aad, request);
  v1::RewrapResponse response;
  grpc::ClientContext context;
  call.connection.Prepare(context, CallKind::kUnary);
  grpc::Status status =
      v1::Crypto::NewStub(call.connection.channel())->Rewrap(&context, request, &response);
  if (!status.ok()) return call.connection.Failed("rewrap", status, context);
  if (absl::Status checked = CheckAnswer("rewrap", response); !checked.ok()) {
    return Outcome::Error(std::string(checked.message()));
  }
  // The segments' AAD is the header's first 12 bytes, which stay; so do the segments.
  absl::StatusOr<crypto::EnvelopeHeader> rewrapped = crypto::NewEnvelopeHeader(
      Bytes(response.ciphertext()), header.segment_bytes, header.nonce_prefix);
  if (!rewrapped.ok()) return Outcome::Error(std::string(rewrapped.status().message()));
  std::string chunk(rewrapped->bytes.begin(), rewrapped->bytes.end());
  for (;;) {
    if (absl::Status written = call.output.Write(chunk); !written.ok()) {
      return Outcome::Error(std::string(written.message()));
    }
    chunk.clear();
    absl::StatusOr<size_t> n = call.input.Read(kChunkBytes, chunk);
    if (!n.ok()) return Outcome::Error(std::string(n.status().message()));
    call.progress.Advance(*n);
    if (*n == 0) return Outcome::Ok();
  }
}

}  // namespace sealbox::client
