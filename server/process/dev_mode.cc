#include "server/process/dev_mode.h"

#include <openssl/rand.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "crypto/secret/secure_wipe.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "sealbox/v1/admin.grpc.pb.h"

namespace sealbox::server {
namespace {

std::string Path(const std::string& name) { return absl::StrCat(kDevDataDir, "/", name); }

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Writes a secret file readable by its owner only.
absl::Status WriteSecretFile(const std::string& path, const std::string& contents) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
    out << contents;
    if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  if (chmod(path.c_str(), 0600) != 0) {
    return absl::InternalError(absl::StrCat("cannot chmod 0600 ", path));
  }
  return absl::OkStatus();
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes));
  return absl::BytesToHexString(raw);
}

// Reads the file, or creates it with `fresh` first.
absl::StatusOr<std::string> ReadOrCreate(const std::string& path, const std::string& fresh) {
  if (!Exists(path)) {
    if (absl::Status s = WriteSecretFile(path, fresh + "\n"); !s.ok()) return s;
  }
  absl::StatusOr<std::string> contents = ReadFile(path);
  if (!contents.ok()) return contents.status();
  return std::string(absl::StripTrailingAsciiWhitespace(*contents));
}

}  // namespace

absl::Status PrepareDevConfig(ServerConfig& config) {
  if (!Exists(kDevDataDir) && mkdir(kDevDataDir, 0700) != 0) {
    return absl::InternalError(absl::StrCat("cannot create ", kDevDataDir));
  }
  absl::StatusOr<std::string> kek_hex = ReadOrCreate(Path("kek"), RandomHex(32));
  if (!kek_hex.ok()) return kek_hex.status();
  std::string kek_bytes = absl::HexStringToBytes(*kek_hex);
  absl::StatusOr<Kek> kek = Kek::FromBytes(absl::Span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(kek_bytes.data()), kek_bytes.size()));
  crypto::SecureWipe(kek_bytes.data(), kek_bytes.size());
  crypto::SecureWipe(kek_hex->data(), kek_hex->size());
  if (!kek.ok()) return kek.status();
  config.kek = *std::move(kek);
  absl::StatusOr<std::string> admin =
      ReadOrCreate(Path("admin-token"), absl::StrCat("sbxadmin_", RandomHex(24)));
  if (!admin.ok()) return admin.status();
  config.admin_token = *admin;
  config.data_dir = kDevDataDir;
  config.create_keystore = true;
  return absl::OkStatus();
}

absl::Status SetUpDemoTenant(const std::string& admin_token, int port) {
  auto channel =
      grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  auto admin = v1::Admin::NewStub(channel);
  auto call = [&](auto method, const auto& request, auto* response) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", absl::StrCat("Bearer ", admin_token));
    return ((*admin).*method)(&context, request, response);
  };

  v1::CreateTenantRequest tenant;
  tenant.set_name("demo");
  v1::Tenant created;
  grpc::Status status = call(&v1::Admin::Stub::CreateTenant, tenant, &created);
  if (!status.ok() && status.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
    return absl::InternalError(absl::StrCat("creating tenant demo: ", status.error_message()));
  }
  v1::CreateKeyRequest key;
  key.set_tenant("demo");
  key.set_key("default");
  key.set_algorithm(v1::AES_256_GCM);
  v1::Key key_created;
  status = call(&v1::Admin::Stub::CreateKey, key, &key_created);
  if (!status.ok() && status.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
    return absl::InternalError(absl::StrCat("creating key demo/default: ", status.error_message()));
  }
  std::string token_path = Path("demo-token");
  if (!Exists(token_path)) {
    v1::IssueTokenRequest issue;
    issue.set_tenant("demo");
    issue.set_description("dev mode demo token");
    v1::IssueTokenResponse issued;
    status = call(&v1::Admin::Stub::IssueToken, issue, &issued);
    if (!status.ok()) {
      return absl::InternalError(absl::StrCat("issuing a demo token: ", status.error_message()));
    }
    if (absl::Status s = WriteSecretFile(token_path, issued.token() + "\n"); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::string> token = ReadFile(token_path);
  if (!token.ok()) return token.status();
  std::string demo_token(absl::StripTrailingAsciiWhitespace(*token));

  std::printf(
      "\nsealbox is running in DEV MODE on 127.0.0.1:%d (loopback only, no TLS).\n"
      "Data, KEK and tokens are in ./%s (dev only: never use these in production).\n\n"
      "  tenant: demo   key: default   token: %s\n"
      "  admin token: %s\n\n"
      "First call with the sealbox CLI (tools/dev serve puts it in ./%s/bin):\n"
      "  export PATH=\"$PWD/%s/bin:$PATH\" SEALBOX_TOKEN=%s\n"
      "  echo 'hello, sealbox' | sealbox seal --key default > hello.sealed\n"
      "  sealbox open --key default < hello.sealed\n\n"
      "Or with grpcurl (reflection is on; every call by hand: docs/GRPCURL.md):\n"
      "  grpcurl -plaintext -expand-headers -H 'authorization: Bearer ${SEALBOX_TOKEN}' \\\n"
      "    -d '{\"key\":\"default\",\"plaintext\":\"aGVsbG8=\"}' 127.0.0.1:%d "
      "sealbox.v1.Crypto/Seal\n\n",
      port, kDevDataDir, demo_token.c_str(), admin_token.c_str(), kDevDataDir, kDevDataDir,
      demo_token.c_str(), port);
  std::fflush(stdout);
  return absl::OkStatus();
}

}  // namespace sealbox::server
