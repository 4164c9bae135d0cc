// Writes the seed corpora of the fuzz targets: real ciphertexts, streams and
// keystores under the fixed keys of fixtures.h, each in its target's input layout
// (described at the top of each *_fuzzer.cc), plus a few malformed ones.
//
//   bazel build //tests/fuzz:make_corpus
//   bazel-bin/tests/fuzz/make_corpus tests/fuzz/corpus
//
// Seeds are deterministic except the keystore envelopes (SealKeystore draws a salt
// and nonce per write), so remaking them changes only those files.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "crypto/format/stream.h"
#include "crypto/format/unary.h"
#include "sealbox/v1/admin.pb.h"
#include "sealbox/v1/data.pb.h"
#include "server/keystore/keystore_file.h"
#include "tests/fuzz/fixtures.h"
#include "tests/fuzz/rpc_input.h"

namespace sealbox::fuzz {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

void Die(const std::string& what) {
  std::fprintf(stderr, "make_corpus: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T Ok(absl::StatusOr<T> value) {
  if (!value.ok()) Die(value.status().ToString());
  return *std::move(value);
}

void Ok(const absl::Status& status) {
  if (!status.ok()) Die(status.ToString());
}

Bytes Str(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes Pattern(size_t size, uint8_t seed) {
  Bytes bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

class Writer {
 public:
  Writer(fs::path dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }
  void Write(const std::string& name, const Bytes& bytes) {
    std::ofstream file(dir_ / name, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    if (!file) Die("cannot write " + (dir_ / name).string());
  }

 private:
  fs::path dir_;
};

absl::Span<const uint8_t> Material(bool aes128) {
  return aes128 ? absl::MakeConstSpan(kMaterial128) : absl::MakeConstSpan(kMaterial256);
}

Bytes SealUnary(bool aes128, uint32_t version, uint8_t epoch_seed, uint64_t counter,
                const Bytes& plaintext, const Bytes& aad) {
  crypto::EpochId epoch;
  for (size_t i = 0; i < epoch.size(); ++i) epoch[i] = static_cast<uint8_t>(epoch_seed + i);
  auto subkey = Ok(crypto::EpochSubkey::DeriveForTesting(
      Material(aes128), {kTenant, kKeyName, version}, epoch, counter));
  return Ok(subkey->Seal(plaintext, aad));
}

Bytes SealStream(bool aes128, uint32_t version, const Bytes& plaintext, const Bytes& aad,
                 uint32_t segment_bytes) {
  crypto::StreamSalt salt;
  crypto::StreamNoncePrefix prefix;
  for (size_t i = 0; i < salt.size(); ++i) salt[i] = static_cast<uint8_t>(0x50 + i);
  for (size_t i = 0; i < prefix.size(); ++i) prefix[i] = static_cast<uint8_t>(0xa0 + i);
  auto sealer = Ok(crypto::StreamSealer::CreateForTesting(
      Material(aes128), {kTenant, kKeyName, version}, aad, segment_bytes, salt, prefix));
  Bytes out;
  Ok(sealer->Update(plaintext, out));
  Ok(sealer->Finish(out));
  return out;
}

Bytes U16(size_t value) { return {static_cast<uint8_t>(value >> 8), static_cast<uint8_t>(value)}; }

// unary_open_fuzzer: flags | AAD length | AAD | ciphertext.
void Unary(Writer w) {
  const auto input = [](bool aes128, const Bytes& aad, const Bytes& ciphertext) {
    return Cat(
        {{static_cast<uint8_t>(aes128)}, {static_cast<uint8_t>(aad.size())}, aad, ciphertext});
  };
  const Bytes ctx = Str("ctx");
  w.Write("aes256_empty", input(false, {}, SealUnary(false, 1, 0, 0, {}, {})));
  w.Write("aes256_short", input(false, ctx, SealUnary(false, 1, 1, 1, Str("hello"), ctx)));
  w.Write("aes256_block", input(false, {}, SealUnary(false, 1, 2, 2, Pattern(16, 1), {})));
  w.Write("aes256_long", input(false, ctx, SealUnary(false, 1, 3, 3, Pattern(1000, 2), ctx)));
  w.Write("aes256_version7",
          input(false, {}, SealUnary(false, 7, 4, 1u << 31, Pattern(33, 3), {})));
  w.Write("aes128_short", input(true, ctx, SealUnary(true, 1, 5, 0, Str("hello"), ctx)));
  w.Write("aes128_long",
          input(true, Pattern(200, 9), SealUnary(true, 2, 6, 9, Pattern(300, 4), Pattern(200, 9))));
  Bytes wrong_aad = input(false, Str("other"), SealUnary(false, 1, 7, 0, Str("hello"), ctx));
  w.Write("wrong_aad", wrong_aad);
  Bytes flipped = input(false, {}, SealUnary(false, 1, 8, 0, Pattern(40, 5), {}));
  flipped[2 + 40] ^= 1;
  w.Write("flipped_bit", flipped);
  Bytes truncated = input(false, {}, SealUnary(false, 1, 9, 0, Pattern(20, 6), {}));
  truncated.resize(truncated.size() - 1);
  w.Write("truncated", truncated);
  w.Write("empty", {});
  w.Write("header_only", input(false, {}, Cat({{0x01}, Bytes(32, 0)})));
  w.Write("stream_format_byte", input(false, {}, Cat({{0x02}, Bytes(60, 0)})));
}

// stream_open_fuzzer: AAD length | AAD | split count | u16 lengths | stream.
void Stream(Writer w) {
  const auto input = [](const Bytes& aad, const std::vector<size_t>& splits, const Bytes& stream) {
    Bytes out =
        Cat({{static_cast<uint8_t>(aad.size())}, aad, {static_cast<uint8_t>(splits.size())}});
    for (size_t split : splits) out = Cat({out, U16(split)});
    return Cat({out, stream});
  };
  const Bytes ctx = Str("ctx");
  w.Write("empty_stream", input({}, {}, SealStream(false, 1, {}, {}, 4096)));
  w.Write("one_byte_split", input(ctx, {1}, SealStream(false, 1, Str("x"), ctx, 4096)));
  w.Write("header_splits",
          input({}, {47, 1, 0, 100}, SealStream(false, 1, Pattern(4095, 1), {}, 4096)));
  w.Write("exact_segment", input({}, {4112}, SealStream(false, 1, Pattern(4096, 2), {}, 4096)));
  w.Write("three_segments",
          input(ctx, {1000, 3000, 7}, SealStream(false, 1, Pattern(9000, 3), ctx, 4096)));
  w.Write("aes128_version2",
          input({}, {48, 4112}, SealStream(true, 2, Pattern(5000, 4), {}, 4096)));
  w.Write("segment_8k", input({}, {}, SealStream(false, 1, Pattern(8200, 5), {}, 8192)));
  w.Write("disabled_version3", input({}, {}, SealStream(false, 3, Str("x"), {}, 4096)));
  Bytes truncated = SealStream(false, 1, Pattern(5000, 6), {}, 4096);
  truncated.resize(truncated.size() - 20);
  w.Write("truncated", input({}, {64}, truncated));
  Bytes trailing = Cat({SealStream(false, 1, Pattern(10, 7), {}, 4096), {0}});
  w.Write("trailing_byte", input({}, {}, trailing));
  w.Write("wrong_aad", input(Str("other"), {}, SealStream(false, 1, Str("x"), ctx, 4096)));
  w.Write("empty", {});
}

server::KeystoreContents SampleKeystore(int tenants) {
  server::KeystoreContents contents;
  contents.generation = 42;
  for (int t = 0; t < tenants; ++t) {
    internal::Tenant* tenant = contents.file.add_tenants();
    tenant->set_name("tenant-" + std::to_string(t));
    internal::Token* token = tenant->add_tokens();
    token->set_id("tok" + std::to_string(t));
    token->set_sha256(std::string(32, static_cast<char>('a' + t)));
    token->set_description("ci");
    token->set_create_time_unix(1700000000);
    internal::Key* key = tenant->add_keys();
    key->set_name("default");
    key->set_algorithm(t % 2 ? internal::AES_128_GCM : internal::AES_256_GCM);
    key->set_primary_version(2);
    key->set_min_decryption_version(1);
    for (uint32_t v = 1; v <= 2; ++v) {
      internal::KeyVersion* version = key->add_versions();
      version->set_version(v);
      version->set_state(v == 1 ? internal::DISABLED : internal::ENABLED);
      version->set_material(std::string(t % 2 ? 16 : 32, static_cast<char>(v)));
      version->set_create_time_unix(1700000000 + v);
    }
  }
  return contents;
}

// keystore_open_fuzzer: mode | envelope (mode 0) or serialized KeystoreFile (mode 1).
void Keystore(Writer w) {
  const server::Kek kek = *server::Kek::FromBytes(kKek);
  for (int tenants : {0, 1, 3}) {
    const server::KeystoreContents contents = SampleKeystore(tenants);
    const std::string name = std::to_string(tenants) + "_tenants";
    w.Write("envelope_" + name, Cat({{0}, Ok(server::SealKeystore(kek, contents))}));
    w.Write("proto_" + name, Cat({{1}, Str(contents.file.SerializeAsString())}));
  }
  Bytes damaged = Cat({{0}, Ok(server::SealKeystore(kek, SampleKeystore(1)))});
  damaged[1 + 70] ^= 0x80;
  w.Write("envelope_damaged", damaged);
  const server::Kek other_kek = *server::Kek::FromBytes(Bytes(32, 0x11));
  w.Write("envelope_other_kek", Cat({{0}, Ok(server::SealKeystore(other_kek, SampleKeystore(1)))}));
  w.Write("magic_only", Cat({{0}, Str("SBXKEYS\n")}));
  w.Write("empty", {});
}

Bytes RpcInput(Rpc rpc, Credential credential, const google::protobuf::Message& request) {
  return Cat({{static_cast<uint8_t>(rpc), static_cast<uint8_t>(credential)},
              Str(request.SerializeAsString())});
}

// A stream RPC: u16 length | message, per message.
Bytes StreamRpcInput(Rpc rpc, const std::vector<const google::protobuf::Message*>& messages) {
  Bytes out = {static_cast<uint8_t>(rpc), kTenantToken};
  for (const auto* message : messages) {
    const std::string bytes = message->SerializeAsString();
    out = Cat({out, U16(bytes.size()), Str(bytes)});
  }
  return out;
}

// rpc_fuzzer: RPC | credential | request. Ciphertexts are sealed under key "k" of
// tenant "fuzz", version 1: the material the fuzzer's server imports.
void Rpcs(Writer w) {
  const Bytes ctx = Str("ctx");
  const Bytes sealed = SealUnary(false, 1, 0x30, 5, Str("hello"), ctx);

  v1::SealRequest seal;
  seal.set_key(kKeyName);
  seal.set_plaintext("hello");
  seal.set_associated_data("ctx");
  w.Write("seal", RpcInput(kSeal, kTenantToken, seal));
  w.Write("seal_as_admin", RpcInput(kSeal, kAdmin, seal));
  w.Write("seal_no_token", RpcInput(kSeal, kNone, seal));
  v1::OpenRequest open;
  open.set_key(kKeyName);
  open.set_ciphertext(std::string(sealed.begin(), sealed.end()));
  open.set_associated_data("ctx");
  w.Write("open", RpcInput(kOpen, kTenantToken, open));
  open.set_key("missing");
  w.Write("open_missing_key", RpcInput(kOpen, kTenantToken, open));
  v1::RewrapRequest rewrap;
  rewrap.set_key(kKeyName);
  rewrap.set_ciphertext(std::string(sealed.begin(), sealed.end()));
  rewrap.set_associated_data("ctx");
  w.Write("rewrap", RpcInput(kRewrap, kTenantToken, rewrap));

  v1::SealStreamRequest seal_start, seal_chunk;
  seal_start.mutable_start()->set_key(kKeyName);
  seal_start.mutable_start()->set_segment_size(4096);
  seal_chunk.set_plaintext_chunk(std::string(5000, 'p'));
  w.Write("seal_stream", StreamRpcInput(kSealStream, {&seal_start, &seal_chunk, &seal_chunk}));
  const Bytes stream = SealStream(false, 1, Pattern(5000, 1), ctx, 4096);
  v1::OpenStreamRequest open_start, open_head, open_tail;
  open_start.mutable_start()->set_key(kKeyName);
  open_start.mutable_start()->set_associated_data("ctx");
  open_head.set_ciphertext_chunk(std::string(stream.begin(), stream.begin() + 100));
  open_tail.set_ciphertext_chunk(std::string(stream.begin() + 100, stream.end()));
  w.Write("open_stream", StreamRpcInput(kOpenStream, {&open_start, &open_head, &open_tail}));
  w.Write("open_stream_no_start", StreamRpcInput(kOpenStream, {&open_head}));

  v1::CreateTenantRequest create_tenant;
  create_tenant.set_name("acme");
  w.Write("create_tenant", RpcInput(kCreateTenant, kAdmin, create_tenant));
  w.Write("create_tenant_as_tenant", RpcInput(kCreateTenant, kTenantToken, create_tenant));
  v1::DeleteTenantRequest delete_tenant;
  delete_tenant.set_name("scratch");
  w.Write("delete_tenant", RpcInput(kDeleteTenant, kAdmin, delete_tenant));
  w.Write("list_tenants", RpcInput(kListTenants, kAdmin, v1::ListTenantsRequest()));
  v1::IssueTokenRequest issue;
  issue.set_tenant("scratch");
  issue.set_description("ci");
  w.Write("issue_token", RpcInput(kIssueToken, kAdmin, issue));
  v1::RevokeTokenRequest revoke;
  revoke.set_tenant("scratch");
  revoke.set_token_id("tok1");
  w.Write("revoke_token", RpcInput(kRevokeToken, kAdmin, revoke));
  v1::CreateKeyRequest create_key;
  create_key.set_tenant("scratch");
  create_key.set_key("k2");
  create_key.set_algorithm(v1::AES_128_GCM);
  w.Write("create_key", RpcInput(kCreateKey, kAdmin, create_key));
  v1::ImportKeyRequest import_key;
  import_key.set_tenant("scratch");
  import_key.set_key("imported");
  import_key.set_material("imported-material-0123456789abcd");  // 32 bytes, not a fill
  w.Write("import_key", RpcInput(kImportKey, kAdmin, import_key));
  v1::KeyRef key_ref;
  key_ref.set_tenant("scratch");
  key_ref.set_key("k2");
  w.Write("rotate_key", RpcInput(kRotateKey, kAdmin, key_ref));
  w.Write("get_key", RpcInput(kGetKey, kAdmin, key_ref));
  w.Write("disable_key", RpcInput(kDisableKey, kAdmin, key_ref));
  w.Write("enable_key", RpcInput(kEnableKey, kAdmin, key_ref));
  v1::ListKeysRequest list_keys;
  list_keys.set_tenant("scratch");
  w.Write("list_keys", RpcInput(kListKeys, kAdmin, list_keys));
  v1::SetMinDecryptionVersionRequest min_version;
  min_version.set_tenant("scratch");
  min_version.set_key("k2");
  min_version.set_min_decryption_version(2);
  w.Write("set_min_decryption_version", RpcInput(kSetMinDecryptionVersion, kAdmin, min_version));
  v1::KeyVersionRef version_ref;
  version_ref.set_tenant("scratch");
  version_ref.set_key("k2");
  version_ref.set_version(1);
  w.Write("disable_key_version", RpcInput(kDisableKeyVersion, kAdmin, version_ref));
  w.Write("enable_key_version", RpcInput(kEnableKeyVersion, kAdmin, version_ref));
  w.Write("destroy_key_version", RpcInput(kDestroyKeyVersion, kAdmin, version_ref));

  v1::SealBatchRequest seal_batch;
  *seal_batch.add_items() = seal;
  seal_batch.add_items()->set_key("missing");
  w.Write("seal_batch", RpcInput(kSealBatch, kTenantToken, seal_batch));
  v1::OpenBatchRequest open_batch;
  open.set_key(kKeyName);
  *open_batch.add_items() = open;
  w.Write("open_batch", RpcInput(kOpenBatch, kTenantToken, open_batch));
  v1::RewrapBatchRequest rewrap_batch;
  *rewrap_batch.add_items() = rewrap;
  w.Write("rewrap_batch", RpcInput(kRewrapBatch, kTenantToken, rewrap_batch));
  v1::GenerateDataKeyRequest data_key;
  data_key.set_key(kKeyName);
  data_key.set_data_key_bytes(16);
  data_key.set_include_plaintext(true);
  w.Write("generate_data_key", RpcInput(kGenerateDataKey, kTenantToken, data_key));
  v1::RenewTokenRequest renew;
  renew.mutable_ttl()->set_seconds(3600);
  w.Write("renew_token", RpcInput(kRenewToken, kTenantToken, renew));
  v1::TrimKeyRequest trim;
  trim.set_tenant("scratch");
  trim.set_key("k2");
  trim.set_min_available_version(2);
  w.Write("trim_key", RpcInput(kTrimKey, kAdmin, trim));
  v1::SetRotationPeriodRequest period;
  period.set_tenant("scratch");
  period.set_key("k2");
  period.mutable_rotation_period()->set_seconds(90 * 86400);
  w.Write("set_rotation_period", RpcInput(kSetRotationPeriod, kAdmin, period));
  v1::IssueAdminTokenRequest admin_token;
  admin_token.set_description("dashboard");
  admin_token.set_read_only(true);
  admin_token.mutable_ttl()->set_seconds(60);
  w.Write("issue_admin_token", RpcInput(kIssueAdminToken, kAdmin, admin_token));
  v1::RevokeAdminTokenRequest revoke_admin;
  revoke_admin.set_token_id("0123456789abcdef");
  w.Write("revoke_admin_token", RpcInput(kRevokeAdminToken, kAdmin, revoke_admin));
  w.Write("list_admin_tokens", RpcInput(kListAdminTokens, kAdmin, v1::ListAdminTokensRequest()));
  w.Write("empty", {});
}

// aes_gcm_differential_fuzzer: shape | IV length - 1 | AAD length | position (u16)
// | key | IV | AAD | plaintext.
void Differential(Writer w) {
  struct Case {
    const char* name;
    int key_index;  // 16, 24, 32
    int tag_index;  // 16, 15, 14, 13, 12, 8, 4
    int mutation;   // none, ciphertext, tag, AAD, IV, truncate
    size_t iv_bytes;
    size_t aad_bytes;
    size_t plaintext_bytes;
  };
  const Case cases[] = {
      {"aes128_empty", 0, 0, 0, 12, 0, 0},
      {"aes192_block", 1, 0, 0, 12, 16, 16},
      {"aes256_odd", 2, 0, 0, 12, 13, 17},
      {"aes256_long", 2, 0, 0, 12, 20, 1000},
      {"iv_1_byte", 0, 0, 0, 1, 0, 64},
      {"iv_60_bytes", 2, 0, 0, 60, 5, 100},
      {"iv_128_bytes", 1, 0, 0, 128, 0, 31},
      {"tag_4", 0, 6, 0, 12, 0, 48},
      {"tag_12", 2, 4, 0, 12, 3, 255},
      {"flip_ciphertext", 2, 0, 1, 12, 8, 50},
      {"flip_tag", 0, 0, 2, 12, 8, 50},
      {"flip_aad", 1, 0, 3, 12, 8, 50},
      {"flip_iv", 2, 1, 4, 16, 0, 50},
      {"truncate", 2, 0, 5, 12, 0, 129},
      {"unroll_width", 2, 0, 0, 12, 0, 8 * 16 * 4 + 15},
  };
  const size_t key_sizes[] = {16, 24, 32};
  for (const Case& c : cases) {
    const uint8_t shape = static_cast<uint8_t>(c.key_index | c.tag_index << 2 | c.mutation << 5);
    w.Write(c.name,
            Cat({{shape, static_cast<uint8_t>(c.iv_bytes - 1), static_cast<uint8_t>(c.aad_bytes)},
                 U16(77),
                 Pattern(key_sizes[c.key_index], 1),
                 Pattern(c.iv_bytes, 2),
                 Pattern(c.aad_bytes, 3),
                 Pattern(c.plaintext_bytes, 4)}));
  }
  w.Write("empty", {});
}

// stream_wire_fuzzer: cut count | cuts | a stream request's wire bytes.
void StreamWire(Writer w) {
  auto input = [](Bytes cuts, const std::string& message) {
    Bytes out = {static_cast<uint8_t>(cuts.size())};
    out.insert(out.end(), cuts.begin(), cuts.end());
    out.insert(out.end(), message.begin(), message.end());
    return out;
  };
  v1::SealStreamRequest start;
  start.mutable_start()->set_key(kKeyName);
  start.mutable_start()->set_associated_data("ctx");
  start.mutable_start()->set_segment_size(65536);
  w.Write("start", input({}, start.SerializeAsString()));
  w.Write("start_cut", input({1, 3, 5}, start.SerializeAsString()));
  v1::SealStreamRequest chunk;
  chunk.set_plaintext_chunk(std::string(200, 'p'));
  w.Write("chunk", input({}, chunk.SerializeAsString()));
  w.Write("chunk_cut", input({1, 1, 50, 100}, chunk.SerializeAsString()));
  w.Write("start_then_chunk", input({7}, start.SerializeAsString() + chunk.SerializeAsString()));
  w.Write("chunk_then_start", input({}, chunk.SerializeAsString() + start.SerializeAsString()));
  // Unknown fields: varint 9, fixed64 10, fixed32 11, bytes 12, then the chunk.
  const std::string unknown = std::string("\x48\x96\x01\x51") + std::string(8, 'x') + "\x5d" +
                              std::string(4, 'y') + "\x62\x02zz";
  w.Write("unknown_fields", input({2}, unknown + chunk.SerializeAsString()));
  w.Write("empty", input({}, ""));
  w.Write("group", input({}, "\x0b\x0c"));
  w.Write("short_length", input({},
                                "\x12\x05"
                                "abc"));
}

}  // namespace
}  // namespace sealbox::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus CORPUS_DIR\n");
    return 2;
  }
  using namespace sealbox::fuzz;
  const std::filesystem::path root = argv[1];
  Unary(root / "unary_open_fuzzer");
  Stream(root / "stream_open_fuzzer");
  Keystore(root / "keystore_open_fuzzer");
  Rpcs(root / "rpc_fuzzer");
  Differential(root / "aes_gcm_differential_fuzzer");
  StreamWire(root / "stream_wire_fuzzer");
  return 0;
}
