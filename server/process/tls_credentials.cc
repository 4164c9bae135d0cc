#include "server/process/tls_credentials.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "crypto/secret/secure_wipe.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "server/process/flag_file.h"

namespace sealbox::server {
namespace {

// The first certificate in `pem`, or null.
X509* FirstCertificate(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return nullptr;
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

absl::Status CheckFiles(const ServerConfig& config) {
  absl::StatusOr<std::string> cert_pem = ReadFlagFile(config.tls_cert_file, "tls-cert");
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::string> key_pem = ReadFlagFile(config.tls_key_file, "tls-key");
  if (!key_pem.ok()) return key_pem.status();

  X509* cert = FirstCertificate(*cert_pem);
  BIO* key_bio = BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size()));
  EVP_PKEY* key =
      key_bio == nullptr ? nullptr : PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  crypto::SecureWipe(key_pem->data(), key_pem->size());

  absl::Status status;
  if (cert == nullptr) {
    status = absl::InvalidArgumentError(
        absl::StrCat("--tls-cert: no PEM certificate in ", config.tls_cert_file));
  } else if (key == nullptr) {
    status = absl::InvalidArgumentError(
        absl::StrCat("--tls-key: no unencrypted PEM private key in ", config.tls_key_file));
  } else if (X509_check_private_key(cert, key) != 1) {
    status = absl::InvalidArgumentError(absl::StrCat(
        "--tls-key ", config.tls_key_file, " is not the key of --tls-cert ", config.tls_cert_file));
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  if (!status.ok() || config.client_ca_file.empty()) return status;

  absl::StatusOr<std::string> ca_pem = ReadFlagFile(config.client_ca_file, "client-ca");
  if (!ca_pem.ok()) return ca_pem.status();
  X509* ca = FirstCertificate(*ca_pem);
  if (ca == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--client-ca: no PEM certificate in ", config.client_ca_file));
  }
  X509_free(ca);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ListenerCredentials(
    const ServerConfig& config) {
  if (!config.tls()) return grpc::InsecureServerCredentials();
  if (absl::Status checked = CheckFiles(config); !checked.ok()) return checked;

  const auto interval = static_cast<unsigned int>(absl::ToInt64Seconds(config.tls_reload_interval));
  auto files = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      config.tls_key_file, config.tls_cert_file, config.client_ca_file, interval);
  grpc::experimental::TlsServerCredentialsOptions options(files);
  options.watch_identity_key_cert_pairs();
  if (config.client_ca_file.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace sealbox::server
