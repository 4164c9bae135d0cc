// A stand-in sealbox server for the CLI's tests: the real API, a toy "cipher".
//
//   fake_server PORT_FILE [CERT KEY]
//
// Listens on 127.0.0.1 at a free port (TLS when CERT and KEY are given), writes the
// port to PORT_FILE and serves until killed. NOT encryption: it only keeps the
// shapes the CLI depends on, in formats the tests can check.
//
//   unary:  0x01 | u32 aad length | aad | plaintext XOR 0x5a
//   stream: 0x02 | u32 aad length | aad | (plaintext XOR 0x5a)... | "END!"
//
// Tokens: "tenant-token" for Crypto, "admin-token" for Admin. Key "missing" and
// tenant "ghost" do not exist. Unary answers carry checksums as the server's do;
// under key "corrupt" their output CRC32C is wrong, under key "unchecked" they say
// the request's checksums were not verified (a server older than checksums). Unary plaintext is
// limited to 1 MiB, as in the server. OpenStream releases plaintext before it has seen "END!", so a
// truncated stream fails after some plaintext went out, as the real one can.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <type_traits>

#include "crypto/crc32c/crc32c.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/server_context.h"
#include "proto/sealbox/v1/error_reason.h"
#include "sealbox/v1/admin.grpc.pb.h"
#include "sealbox/v1/data.grpc.pb.h"

namespace {

namespace v1 = ::sealbox::v1;

constexpr size_t kUnaryLimit = 1 << 20;
constexpr char kTrailer[] = "END!";

grpc::Status DecryptionFailed() {
  return v1::StatusWithReason(grpc::StatusCode::INVALID_ARGUMENT, "decryption failed",
                              v1::DECRYPTION_FAILED);
}

grpc::Status CheckToken(grpc::ServerContext* context, const std::string& want) {
  auto found = context->client_metadata().find("authorization");
  if (found == context->client_metadata().end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing bearer token");
  }
  std::string got(found->second.data(), found->second.size());
  if (got == "Bearer " + want) return grpc::Status::OK;
  if (got == "Bearer tenant-token" || got == "Bearer admin-token") {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "wrong kind of token");
  }
  return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "unknown token");
}

std::string Xor(const std::string& bytes) {
  std::string out = bytes;
  for (char& c : out) c ^= 0x5a;
  return out;
}

std::string Header(char format, const std::string& aad) {
  std::string header(1, format);
  uint32_t n = aad.size();
  for (int shift = 24; shift >= 0; shift -= 8) header += static_cast<char>(n >> shift);
  return header + aad;
}

// Checks a request's checksums and sets the answer's, with the key behaviours above.
// Like the server, a checksum is "verified" only when the request carried it.
template <typename Request, typename Response>
grpc::Status Checksums(const Request& request, const std::string& input,
                       const google::protobuf::UInt32Value* input_crc32c, const std::string& output,
                       Response& response, void (Response::*set_verified_input)(bool)) {
  using sealbox::crypto::Crc32c;
  if ((input_crc32c != nullptr && input_crc32c->value() != Crc32c(input)) ||
      (request.has_associated_data_crc32c() &&
       request.associated_data_crc32c().value() != Crc32c(request.associated_data()))) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "checksum mismatch");
  }
  const bool answered = request.key() != "unchecked";
  (response.*set_verified_input)(answered && input_crc32c != nullptr);
  response.set_verified_associated_data_crc32c(answered && request.has_associated_data_crc32c());
  uint32_t crc = Crc32c(output);
  if (request.key() == "corrupt") crc ^= 1;
  if constexpr (std::is_same_v<Response, v1::OpenResponse>) {
    response.set_plaintext_crc32c(crc);
  } else {
    response.set_ciphertext_crc32c(crc);
  }
  return grpc::Status::OK;
}

const google::protobuf::UInt32Value* IfSet(bool has, const google::protobuf::UInt32Value& field) {
  return has ? &field : nullptr;
}

grpc::Status CheckKey(const std::string& key) {
  if (key == "missing")
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "key \"missing\" not found");
  return grpc::Status::OK;
}

class FakeCrypto final : public v1::Crypto::Service {
  grpc::Status Seal(grpc::ServerContext* context, const v1::SealRequest* request,
                    v1::SealResponse* response) override {
    if (auto s = CheckToken(context, "tenant-token"); !s.ok()) return s;
    if (auto s = CheckKey(request->key()); !s.ok()) return s;
    if (request->plaintext().size() > kUnaryLimit) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "plaintext over the unary limit");
    }
    response->set_ciphertext(Header(1, request->associated_data()) + Xor(request->plaintext()));
    response->set_key_version(1);
    return Checksums(*request, request->plaintext(),
                     IfSet(request->has_plaintext_crc32c(), request->plaintext_crc32c()),
                     response->ciphertext(), *response,
                     &v1::SealResponse::set_verified_plaintext_crc32c);
  }

  grpc::Status Open(grpc::ServerContext* context, const v1::OpenRequest* request,
                    v1::OpenResponse* response) override {
    if (auto s = CheckToken(context, "tenant-token"); !s.ok()) return s;
    if (auto s = CheckKey(request->key()); !s.ok()) return s;
    std::string header = Header(1, request->associated_data());
    if (request->ciphertext().compare(0, header.size(), header) != 0) return DecryptionFailed();
    response->set_plaintext(Xor(request->ciphertext().substr(header.size())));
    response->set_key_version(1);
    return Checksums(*request, request->ciphertext(),
                     IfSet(request->has_ciphertext_crc32c(), request->ciphertext_crc32c()),
                     response->plaintext(), *response,
                     &v1::OpenResponse::set_verified_ciphertext_crc32c);
  }

  grpc::Status Rewrap(grpc::ServerContext* context, const v1::RewrapRequest* request,
                      v1::RewrapResponse* response) override {
    if (auto s = CheckToken(context, "tenant-token"); !s.ok()) return s;
    std::string header = Header(1, request->associated_data());
    if (request->ciphertext().compare(0, header.size(), header) != 0) return DecryptionFailed();
    response->set_ciphertext(request->ciphertext());
    response->set_key_version(2);
    response->set_previous_key_version(1);
    return Checksums(*request, request->ciphertext(),
                     IfSet(request->has_ciphertext_crc32c(), request->ciphertext_crc32c()),
                     response->ciphertext(), *response,
                     &v1::RewrapResponse::set_verified_ciphertext_crc32c);
  }

  grpc::Status SealStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::SealStreamResponse, v1::SealStreamRequest>* stream) override {
    if (auto s = CheckToken(context, "tenant-token"); !s.ok()) return s;
    v1::SealStreamRequest request;
    if (!stream->Read(&request) || !request.has_start()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "first message must be start");
    }
    if (auto s = CheckKey(request.start().key()); !s.ok()) return s;
    v1::SealStreamResponse response;
    response.set_key_version(1);
    response.set_ciphertext_chunk(Header(2, request.start().associated_data()));
    stream->Write(response);
    while (stream->Read(&request)) {
      response.set_ciphertext_chunk(Xor(request.plaintext_chunk()));
      stream->Write(response);
    }
    response.set_ciphertext_chunk(kTrailer);
    stream->Write(response);
    return grpc::Status::OK;
  }

  grpc::Status OpenStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::OpenStreamResponse, v1::OpenStreamRequest>* stream) override {
    if (auto s = CheckToken(context, "tenant-token"); !s.ok()) return s;
    v1::OpenStreamRequest request;
    if (!stream->Read(&request) || !request.has_start()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "first message must be start");
    }
    if (auto s = CheckKey(request.start().key()); !s.ok()) return s;
    std::string header = Header(2, request.start().associated_data());
    std::string pending;  // bytes not yet released: the header, then a possible trailer
    bool header_checked = false;
    v1::OpenStreamResponse response;
    response.set_key_version(1);
    while (stream->Read(&request)) {
      pending += request.ciphertext_chunk();
      if (!header_checked) {
        if (pending.size() < header.size()) continue;
        if (pending.compare(0, header.size(), header) != 0) return DecryptionFailed();
        pending.erase(0, header.size());
        header_checked = true;
      }
      if (pending.size() > 4) {
        response.set_plaintext_chunk(Xor(pending.substr(0, pending.size() - 4)));
        stream->Write(response);
        pending.erase(0, pending.size() - 4);
      }
    }
    if (!header_checked || pending != kTrailer) return DecryptionFailed();
    return grpc::Status::OK;
  }
};

v1::Key SampleKey(const std::string& tenant, const std::string& name) {
  v1::Key key;
  key.set_tenant(tenant);
  key.set_name(name);
  key.set_algorithm(v1::AES_256_GCM);
  key.set_primary_version(2);
  key.set_min_decryption_version(1);
  for (uint32_t n : {1u, 2u}) {
    v1::KeyVersion* version = key.add_versions();
    version->set_version(n);
    version->set_state(v1::ENABLED);
    version->mutable_create_time()->set_seconds(1700000000 + n);
  }
  return key;
}

grpc::Status CheckTenant(const std::string& tenant) {
  if (tenant == "ghost")
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "tenant \"ghost\" not found");
  return grpc::Status::OK;
}

class FakeAdmin final : public v1::Admin::Service {
  grpc::Status CreateTenant(grpc::ServerContext* context, const v1::CreateTenantRequest* request,
                            v1::Tenant* response) override {
    if (auto s = CheckToken(context, "admin-token"); !s.ok()) return s;
    response->set_name(request->name());
    return grpc::Status::OK;
  }
  grpc::Status ListTenants(grpc::ServerContext* context, const v1::ListTenantsRequest*,
                           v1::ListTenantsResponse* response) override {
    if (auto s = CheckToken(context, "admin-token"); !s.ok()) return s;
    v1::Tenant* tenant = response->add_tenants();
    tenant->set_name("acme");
    tenant->add_keys("default");
    v1::TokenInfo* token = tenant->add_tokens();
    token->set_id("t1");
    token->set_description("billing prod");
    token->mutable_create_time()->set_seconds(1700000000);
    return grpc::Status::OK;
  }
  grpc::Status IssueToken(grpc::ServerContext* context, const v1::IssueTokenRequest* request,
                          v1::IssueTokenResponse* response) override {
    if (auto s = CheckToken(context, "admin-token"); !s.ok()) return s;
    if (auto s = CheckTenant(request->tenant()); !s.ok()) return s;
    response->set_token("fresh-token");
    response->mutable_info()->set_id("t2");
    response->mutable_info()->set_description(request->description());
    return grpc::Status::OK;
  }
  grpc::Status GetKey(grpc::ServerContext* context, const v1::KeyRef* request,
                      v1::Key* response) override {
    if (auto s = CheckToken(context, "admin-token"); !s.ok()) return s;
    if (auto s = CheckTenant(request->tenant()); !s.ok()) return s;
    *response = SampleKey(request->tenant(), request->key());
    return grpc::Status::OK;
  }
  grpc::Status ImportKey(grpc::ServerContext* context, const v1::ImportKeyRequest* request,
                         v1::Key* response) override {
    if (auto s = CheckToken(context, "admin-token"); !s.ok()) return s;
    *response = SampleKey(request->tenant(), request->key());
    response->set_algorithm(request->material().size() == 16 ? v1::AES_128_GCM : v1::AES_256_GCM);
    response->mutable_versions(1)->set_imported(true);
    return grpc::Status::OK;
  }
  grpc::Status DestroyKeyVersion(grpc::ServerContext* context, const v1::KeyVersionRef* request,
                                 v1::Key* response) override {
    if (auto s = CheckToken(context, "admin-token"); !s.ok()) return s;
    *response = SampleKey(request->tenant(), request->key());
    if (request->version() == 2) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "the primary version cannot be destroyed");
    }
    response->mutable_versions(0)->set_state(v1::DESTROYED);
    return grpc::Status::OK;
  }
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::cerr << "usage: fake_server PORT_FILE [CERT KEY]\n";
    return 2;
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (argc == 4) {
    grpc::SslServerCredentialsOptions tls;
    tls.pem_key_cert_pairs.push_back({ReadFile(argv[3]), ReadFile(argv[2])});
    credentials = grpc::SslServerCredentials(tls);
  }
  FakeCrypto crypto;
  FakeAdmin admin;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", credentials, &port);
  builder.RegisterService(&crypto);
  builder.RegisterService(&admin);
  builder.SetMaxReceiveMessageSize(8 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::cerr << "fake_server: cannot listen\n";
    return 1;
  }
  // Written whole, then renamed: a test polling for the file never reads half of it.
  std::string temp = std::string(argv[1]) + ".tmp";
  std::ofstream(temp) << port << "\n";
  std::rename(temp.c_str(), argv[1]);
  server->Wait();
}
