#include "client/cli/data_commands.h"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/cli/channel.h"
#include "client/cli/checksums.h"
#include "client/cli/envelope_files.h"
#include "client/cli/input.h"
#include "client/cli/output.h"
#include "client/cli/progress.h"
#include "client/cli/stream_pump.h"
#include "crypto/secret/secure_wipe.h"
#include "sealbox/v1/data.grpc.pb.h"

namespace sealbox::client {
namespace {

namespace v1 = ::sealbox::v1;

// Inputs under this go to the unary Seal; the server's default unary limit is 1 MiB.
constexpr size_t kUnaryMaxPlaintext = (1 << 20) - 1;
// The most a unary ciphertext is read into memory for open and rewrap.
constexpr size_t kUnaryMaxCiphertext = 64 << 20;
constexpr size_t kMaxAadBytes = 1 << 20;

// First byte of each ciphertext format (docs/FORMAT.md).
constexpr unsigned char kUnaryFormat = 0x01;
constexpr unsigned char kStreamFormat = 0x02;
constexpr unsigned char kEnvelopeFormat = 0x03;

// Whether input whose first bytes are `head` is of `format` (false when empty).
bool IsFormat(const std::string& head, unsigned char format) {
  return !head.empty() && static_cast<unsigned char>(head[0]) == format;
}

const FlagSpec kKeyFlag{"--key", "", "NAME", "name of a key of your tenant (required)"};
const FlagSpec kAadFlag{"--aad", "", "TEXT",
                        "associated data: authenticated, not encrypted; open needs the same"};
const FlagSpec kAadFileFlag{"--aad-file", "", "FILE", "associated data from a file"};
const FlagSpec kInputFlag{"--input", "-i", "FILE", "read from FILE (default: stdin)"};
const FlagSpec kOutputFlag{"--output", "-o", "FILE", "write to FILE, atomically (default: stdout)"};
const FlagSpec kNoProgressFlag{"--no-progress", "", "",
                               "no progress bar (shown only on a terminal, for large inputs)"};

// Everything seal, open and rewrap share: parsed flags, the files, the connection.
struct DataCall {
  std::string key;
  std::string aad;
  std::unique_ptr<Input> input;
  std::unique_ptr<Output> output;
  std::unique_ptr<Connection> connection;
};

Outcome PrepareDataCall(const Invocation& invocation, bool binary_output, DataCall& call,
                        bool reads_input = true) {
  call.key = invocation.Get("--key");
  if (call.key.empty()) return Outcome::Usage("--key NAME is required");
  if (invocation.Has("--aad") && invocation.Has("--aad-file")) {
    return Outcome::Usage("give --aad or --aad-file, not both");
  }
  if (invocation.Has("--aad-file")) {
    absl::StatusOr<std::string> aad = ReadWholeFile(invocation.Get("--aad-file"), kMaxAadBytes);
    if (!aad.ok()) return Outcome::Error(absl::StrCat("--aad-file: ", aad.status().message()));
    call.aad = *std::move(aad);
  } else {
    call.aad = invocation.Get("--aad");
  }
  if (reads_input) {
    absl::StatusOr<std::unique_ptr<Input>> input = Input::Open(invocation.Get("--input"));
    if (!input.ok()) return Outcome::Error(std::string(input.status().message()));
    call.input = *std::move(input);
  }
  absl::StatusOr<std::unique_ptr<Output>> output = Output::Create(invocation.Get("--output"));
  if (!output.ok()) return Outcome::Error(std::string(output.status().message()));
  call.output = *std::move(output);
  if (binary_output && call.output->is_terminal()) {
    return Outcome::Usage(
        "refusing to write ciphertext to a terminal: use -o FILE or redirect stdout");
  }
  absl::StatusOr<std::unique_ptr<Connection>> connection = Connection::Create(invocation.global);
  if (!connection.ok()) return Outcome::Error(std::string(connection.status().message()));
  call.connection = *std::move(connection);
  return Outcome::Ok();
}

// Writes a unary result and renames the output into place.
Outcome WriteAll(Output& output, const std::string& bytes) {
  absl::Status written = output.Write(bytes);
  if (written.ok()) written = output.Commit();
  if (!written.ok()) return Outcome::Error(std::string(written.message()));
  return Outcome::Ok();
}

// Checks a unary answer's checksums (client/checksums.h), then writes `bytes`, its
// output, and renames the output into place.
template <typename Response>
Outcome WriteChecked(absl::string_view what, const Response& answer, const std::string& bytes,
                     Output& output) {
  if (absl::Status checked = CheckAnswer(what, answer); !checked.ok()) {
    return Outcome::Error(std::string(checked.message()));
  }
  return WriteAll(output, bytes);
}

// Renames the output into place once `done`, the work that wrote it, succeeded.
Outcome CommitAfter(Outcome done, Output& output) {
  if (!done.ok()) return done;
  absl::Status committed = output.Commit();
  if (!committed.ok()) return Outcome::Error(std::string(committed.message()));
  return Outcome::Ok();
}

Outcome FinishStream(absl::string_view what, const StreamResult& result,
                     const grpc::ClientContext& context, DataCall& call) {
  if (!result.input_error.ok()) return Outcome::Error(std::string(result.input_error.message()));
  if (!result.output_error.ok()) {
    return Outcome::Error(std::string(result.output_error.message()));
  }
  if (!result.status.ok()) return call.connection->Failed(what, result.status, context);
  return CommitAfter(Outcome::Ok(), *call.output);
}

// Reads a whole unary ciphertext whose first byte is already in `head`.
Outcome ReadUnaryCiphertext(Input& input, std::string& head) {
  absl::StatusOr<bool> ended = input.ReadUpTo(kUnaryMaxCiphertext, head);
  if (!ended.ok()) return Outcome::Error(std::string(ended.status().message()));
  if (!*ended) {
    return Outcome::DecryptionFailed(absl::StrCat(
        input.name(), " starts like a unary ciphertext but is larger than any can be"));
  }
  return Outcome::Ok();
}

Outcome NotCiphertext(const Input& input, const std::string& head) {
  if (head.empty()) return Outcome::DecryptionFailed(absl::StrCat(input.name(), " is empty"));
  return Outcome::DecryptionFailed(
      absl::StrFormat("%s is not a sealbox ciphertext (first byte 0x%02x)", input.name(),
                      static_cast<unsigned char>(head[0])));
}

absl::StatusOr<uint32_t> ParseSegmentSize(const std::string& text) {
  uint32_t bytes = 0;
  if (!absl::SimpleAtoi(text, &bytes) || bytes < 4096 || bytes > (4u << 20) ||
      (bytes & (bytes - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--segment-size must be a power of two from 4096 to 4194304, not '", text, "'"));
  }
  return bytes;
}

Outcome RunSeal(const Invocation& invocation) {
  uint32_t segment_bytes = 0;
  if (invocation.Has("--segment-size")) {
    absl::StatusOr<uint32_t> parsed = ParseSegmentSize(invocation.Get("--segment-size"));
    if (!parsed.ok()) return Outcome::Usage(std::string(parsed.status().message()));
    segment_bytes = *parsed;
  }
  if (invocation.Has("--envelope") && (invocation.Has("--stream") || segment_bytes != 0)) {
    return Outcome::Usage("--envelope seals locally: it takes no --stream or --segment-size");
  }
  DataCall call;
  if (Outcome prepared = PrepareDataCall(invocation, /*binary_output=*/true, call);
      !prepared.ok()) {
    return prepared;
  }
  Input& input = *call.input;
  if (input.is_terminal()) {
    std::fputs("sealbox: reading plaintext from the terminal; end it with Ctrl-D\n", stderr);
  }
  if (invocation.Has("--envelope")) {
    Progress progress("sealing", input.size(), !invocation.Has("--no-progress"));
    return CommitAfter(
        SealEnvelope({call.key, call.aad, input, *call.output, *call.connection, progress}),
        *call.output);
  }

  // Small inputs take the unary call: one round trip, and a ciphertext Rewrap accepts.
  std::string head;
  bool small = false;
  bool force_stream = invocation.Has("--stream") || segment_bytes != 0;
  if (!force_stream && (!input.size() || *input.size() <= kUnaryMaxPlaintext)) {
    absl::StatusOr<bool> ended = input.ReadUpTo(kUnaryMaxPlaintext, head);
    if (!ended.ok()) return Outcome::Error(std::string(ended.status().message()));
    small = *ended;
  }

  auto stub = v1::Crypto::NewStub(call.connection->channel());
  if (small) {
    v1::SealRequest request;
    request.set_key(call.key);
    request.set_plaintext(std::move(head));
    request.set_associated_data(call.aad);
    SetCrc32c(request.plaintext(), *request.mutable_plaintext_crc32c());
    SetCrc32c(request.associated_data(), *request.mutable_associated_data_crc32c());
    v1::SealResponse response;
    grpc::ClientContext context;
    call.connection->Prepare(context, CallKind::kUnary);
    grpc::Status status = stub->Seal(&context, request, &response);
    if (!status.ok()) return call.connection->Failed("seal", status, context);
    return WriteChecked("seal", response, response.ciphertext(), *call.output);
  }

  grpc::ClientContext context;
  call.connection->Prepare(context, CallKind::kStream);
  auto stream = stub->SealStream(&context);
  v1::SealStreamRequest start;
  start.mutable_start()->set_key(call.key);
  start.mutable_start()->set_associated_data(call.aad);
  start.mutable_start()->set_segment_size(segment_bytes);
  Progress progress("sealing", input.size(), !invocation.Has("--no-progress"));
  StreamResult result = PumpStream(
      context, *stream, start, head, input, *call.output, progress,
      [](v1::SealStreamRequest& r) { return r.mutable_plaintext_chunk(); },
      [](const v1::SealStreamResponse& r) -> const std::string& { return r.ciphertext_chunk(); });
  return FinishStream("seal", result, context, call);
}

Outcome RunOpen(const Invocation& invocation) {
  DataCall call;
  if (Outcome prepared = PrepareDataCall(invocation, /*binary_output=*/false, call);
      !prepared.ok()) {
    return prepared;
  }
  Input& input = *call.input;
  std::string head;
  if (absl::StatusOr<size_t> n = input.Read(1, head); !n.ok()) {
    return Outcome::Error(std::string(n.status().message()));
  }
  auto stub = v1::Crypto::NewStub(call.connection->channel());

  if (IsFormat(head, kUnaryFormat)) {
    if (Outcome read = ReadUnaryCiphertext(input, head); !read.ok()) return read;
    v1::OpenRequest request;
    FillCiphertextRequest(call.key, std::move(head), call.aad, request);
    v1::OpenResponse response;
    grpc::ClientContext context;
    call.connection->Prepare(context, CallKind::kUnary);
    grpc::Status status = stub->Open(&context, request, &response);
    if (!status.ok()) return call.connection->Failed("open", status, context);
    return WriteChecked("open", response, response.plaintext(), *call.output);
  }
  if (IsFormat(head, kEnvelopeFormat)) {
    Progress progress("opening", input.size(), !invocation.Has("--no-progress"));
    return CommitAfter(
        OpenEnvelope({call.key, call.aad, input, *call.output, *call.connection, progress}, head),
        *call.output);
  }
  if (!IsFormat(head, kStreamFormat)) {
    return NotCiphertext(input, head);
  }

  grpc::ClientContext context;
  call.connection->Prepare(context, CallKind::kStream);
  auto stream = stub->OpenStream(&context);
  v1::OpenStreamRequest start;
  start.mutable_start()->set_key(call.key);
  start.mutable_start()->set_associated_data(call.aad);
  Progress progress("opening", input.size(), !invocation.Has("--no-progress"));
  StreamResult result = PumpStream(
      context, *stream, start, head, input, *call.output, progress,
      [](v1::OpenStreamRequest& r) { return r.mutable_ciphertext_chunk(); },
      [](const v1::OpenStreamResponse& r) -> const std::string& { return r.plaintext_chunk(); });
  return FinishStream("open", result, context, call);
}

Outcome RunRewrap(const Invocation& invocation) {
  DataCall call;
  if (Outcome prepared = PrepareDataCall(invocation, /*binary_output=*/true, call);
      !prepared.ok()) {
    return prepared;
  }
  Input& input = *call.input;
  std::string head;
  if (absl::StatusOr<size_t> n = input.Read(1, head); !n.ok()) {
    return Outcome::Error(std::string(n.status().message()));
  }
  if (IsFormat(head, kEnvelopeFormat)) {
    Progress progress("rewrapping", input.size(), !invocation.Has("--no-progress"));
    return CommitAfter(
        RewrapEnvelope({call.key, call.aad, input, *call.output, *call.connection, progress}, head),
        *call.output);
  }
  if (IsFormat(head, kStreamFormat)) {
    return Outcome::Error(
        absl::StrCat(input.name(),
                     " is a stream ciphertext; rewrap takes unary ones only: open it and "
                     "seal it again"));
  }
  if (!IsFormat(head, kUnaryFormat)) {
    return NotCiphertext(input, head);
  }
  if (Outcome read = ReadUnaryCiphertext(input, head); !read.ok()) return read;

  auto stub = v1::Crypto::NewStub(call.connection->channel());
  v1::RewrapRequest request;
  FillCiphertextRequest(call.key, std::move(head), call.aad, request);
  v1::RewrapResponse response;
  grpc::ClientContext context;
  call.connection->Prepare(context, CallKind::kUnary);
  grpc::Status status = stub->Rewrap(&context, request, &response);
  if (!status.ok()) return call.connection->Failed("rewrap", status, context);
  return WriteChecked("rewrap", response, response.ciphertext(), *call.output);
}

// A data key for envelope encryption: the sealed key to OUT, and with
// --plaintext-output the raw key to a file of its own (mode 0600 when new).
Outcome RunDataKey(const Invocation& invocation) {
  uint32_t key_bytes = 32;
  if (invocation.Has("--bytes") && (!absl::SimpleAtoi(invocation.Get("--bytes"), &key_bytes) ||
                                    (key_bytes != 16 && key_bytes != 32))) {
    return Outcome::Usage(absl::StrCat("--bytes must be 32 (AES-256) or 16 (AES-128), not '",
                                       invocation.Get("--bytes"), "'"));
  }
  const bool with_plaintext = invocation.Has("--plaintext-output");
  std::unique_ptr<Output> plaintext_output;
  if (with_plaintext) {
    absl::StatusOr<std::unique_ptr<Output>> created =
        Output::Create(invocation.Get("--plaintext-output"));
    if (!created.ok()) return Outcome::Error(std::string(created.status().message()));
    plaintext_output = *std::move(created);
    if (plaintext_output->is_terminal()) {
      return Outcome::Usage("refusing to write a data key to a terminal");
    }
  }
  DataCall call;
  if (Outcome prepared =
          PrepareDataCall(invocation, /*binary_output=*/true, call, /*reads_input=*/false);
      !prepared.ok()) {
    return prepared;
  }
  v1::GenerateDataKeyResponse response;
  crypto::WipeOnExit wipe(*response.mutable_plaintext());  // the raw key, if asked for
  if (Outcome made = GenerateDataKey(*call.connection, "datakey", call.key, call.aad, key_bytes,
                                     with_plaintext, response);
      !made.ok()) {
    return made;
  }
  if (with_plaintext) {
    if (Outcome written = WriteAll(*plaintext_output, response.plaintext()); !written.ok()) {
      return written;
    }
  }
  return WriteAll(*call.output, response.ciphertext());
}

}  // namespace

std::vector<Command> DataCommands() {
  std::vector<Command> commands;
  commands.push_back({
      {"seal"},
      "--key NAME [--aad TEXT | --aad-file FILE] [-i IN] [-o OUT]",
      "encrypt data under one of your tenant's keys",
      "Encrypts IN (default stdin) to OUT (default stdout; never a terminal). An input\n"
      "under 1 MiB is sealed in one call and gives a unary ciphertext; a larger one, or\n"
      "one of unknown size that turns out larger, is streamed and gives a stream\n"
      "ciphertext. `open` reads both. Only unary ciphertexts can be rewrapped.\n"
      "\n"
      "With --envelope, the data never goes to the server: a fresh data key is asked\n"
      "for (GenerateDataKey), IN is encrypted here with AES-256-GCM under it, and OUT\n"
      "is an envelope file holding the data key sealed under --key (bound to --aad).\n"
      "`open` reads it; `rewrap` moves its data key to the key's primary version.",
      {kKeyFlag,
       kAadFlag,
       kAadFileFlag,
       kInputFlag,
       kOutputFlag,
       {"--envelope", "", "", "encrypt locally under a data key (large files; no upload)"},
       {"--stream", "", "", "always stream, whatever the input's size"},
       {"--segment-size", "", "BYTES",
        "stream segment size, a power of two from 4096 to 4194304 (implies --stream)"},
       kNoProgressFlag},
      0,
      0,
      RunSeal,
  });
  commands.push_back({
      {"open"},
      "--key NAME [--aad TEXT | --aad-file FILE] [-i IN] [-o OUT]",
      "decrypt data made by seal (either format, detected from its first byte)",
      "Decrypts IN (default stdin) to OUT (default stdout). The format is read from the\n"
      "first byte: 0x01 unary, 0x02 stream, 0x03 envelope file (opened here after the\n"
      "server opens its data key). Give the same --aad as at seal time.\n"
      "\n"
      "With -o FILE, plaintext goes to a temporary file beside FILE that is renamed\n"
      "to FILE only once the whole input has decrypted: on failure FILE is untouched.\n"
      "To stdout, a stream is written as it decrypts (each segment only after its tag\n"
      "verified), so if the stream later turns out truncated or tampered with, some\n"
      "plaintext may already have been written: check the exit status before trusting\n"
      "it. Exit status 3 means it did not decrypt: wrong key, wrong --aad, or a damaged\n"
      "or truncated ciphertext.",
      {kKeyFlag, kAadFlag, kAadFileFlag, kInputFlag, kOutputFlag, kNoProgressFlag},
      0,
      0,
      RunOpen,
  });
  commands.push_back({
      {"rewrap"},
      "--key NAME [--aad TEXT | --aad-file FILE] [-i IN] [-o OUT]",
      "re-encrypt a unary ciphertext under the key's current primary version",
      "Sends a unary ciphertext (from seal of an input under 1 MiB) and gets back the\n"
      "same plaintext sealed under the key's primary version, without the plaintext\n"
      "ever leaving the server. Use after `admin key rotate` to migrate stored data.\n"
      "An envelope file (seal --envelope) gets its data key rewrapped and its header\n"
      "rewritten; its data is copied unchanged. Stream ciphertexts cannot be\n"
      "rewrapped: open and seal them again.",
      {kKeyFlag, kAadFlag, kAadFileFlag, kInputFlag, kOutputFlag},
      0,
      0,
      RunRewrap,
  });
  commands.push_back({
      {"datakey"},
      "--key NAME [--aad TEXT | --aad-file FILE] [--bytes 32|16] [-o SEALED] "
      "[--plaintext-output FILE]",
      "make a data key for envelope encryption, sealed under one of your keys",
      "Asks the server for a fresh random data key (AES-256 by default) and writes it\n"
      "sealed under --key to OUT (default stdout): an ordinary unary ciphertext, 81\n"
      "bytes for AES-256, bound to --aad. Store it beside the data you encrypt with\n"
      "the key; `sealbox open` (same --key and --aad) gives the raw key back, and\n"
      "`sealbox rewrap` moves it to a newer key version. With --plaintext-output FILE\n"
      "the raw key is also written to FILE (mode 0600 if new): use it, then delete it.\n"
      "`sealbox seal --envelope` does all of this for a file in one step.",
      {kKeyFlag,
       kAadFlag,
       kAadFileFlag,
       {"--bytes", "", "N", "data key length: 32 (AES-256, default) or 16 (AES-128)"},
       {"--output", "-o", "FILE", "write the sealed key to FILE, atomically (default: stdout)"},
       {"--plaintext-output", "", "FILE", "also write the raw data key to FILE"}},
      0,
      0,
      RunDataKey,
  });
  return commands;
}

}  // namespace sealbox::client
