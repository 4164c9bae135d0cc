#include "server/keystore/etcd/etcd_client.h"

#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace sealbox::server::etcd {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read the ", what, " ", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty()) return absl::InvalidArgumentError(absl::StrCat("the ", what, " ", path, " is empty"));
  return text;
}

grpc::ChannelArguments ChannelArgs() {
  grpc::ChannelArguments args;
  // Keystore values are small, but a page of a Range can hold thousands.
  args.SetMaxReceiveMessageSize(64 << 20);
  // Find a dead member without waiting for TCP (a partition sends no RST). etcd
  // refuses pings more often than every 5 s (--grpc-keepalive-min-time).
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  // gRPC's default reconnect backoff grows to two minutes; a keystore should be
  // back within a second of etcd.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1'000);
  return args;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Create(EtcdOptions options) {
  if (options.endpoints.empty()) return absl::InvalidArgumentError("no etcd endpoints");
  bool tls = !options.ca_file.empty() || !options.cert_file.empty();
  std::vector<std::string> addresses;
  for (absl::string_view endpoint : options.endpoints) {
    if (absl::ConsumePrefix(&endpoint, "https://")) {
      tls = true;
    } else {
      absl::ConsumePrefix(&endpoint, "http://");
    }
    while (absl::ConsumeSuffix(&endpoint, "/")) {
    }
    const size_t colon = endpoint.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == endpoint.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "etcd endpoint \"", endpoint, "\" is not HOST:PORT (or http(s)://HOST:PORT)"));
    }
    addresses.emplace_back(endpoint);
  }
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "an etcd client certificate needs its key, and a key its certificate");
  }
  if (options.user.empty() != options.password.empty()) {
    return absl::InvalidArgumentError(
        options.user.empty() ? "an etcd password needs an etcd user"
                             : "an etcd user needs a password");
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (tls) {
    grpc::SslCredentialsOptions ssl;
    if (!options.ca_file.empty()) {
      auto ca = ReadPem(options.ca_file, "etcd CA file");
      if (!ca.ok()) return ca.status();
      ssl.pem_root_certs = *std::move(ca);
    }
    if (!options.cert_file.empty()) {
      auto cert = ReadPem(options.cert_file, "etcd client certificate");
      if (!cert.ok()) return cert.status();
      auto key = ReadPem(options.key_file, "etcd client key");
      if (!key.ok()) return key.status();
      ssl.pem_cert_chain = *std::move(cert);
      ssl.pem_private_key = *std::move(key);
    }
    credentials = grpc::SslCredentials(ssl);
  }
  std::unique_ptr<EtcdClient> client(new EtcdClient(std::move(options)));
  for (const std::string& address : addresses) {
    Endpoint& e = client->endpoints_.emplace_back();
    e.address = address;
    e.channel = grpc::CreateCustomChannel(address, credentials, ChannelArgs());
    e.kv = etcdserverpb::KV::NewStub(e.channel);
    e.watch = etcdserverpb::Watch::NewStub(e.channel);
    e.auth = etcdserverpb::Auth::NewStub(e.channel);
  }
  return client;
}

std::string EtcdClient::Endpoints() const {
  std::vector<std::string> addresses;
  for (const Endpoint& e : endpoints_) addresses.push_back(e.address);
  return absl::StrJoin(addresses, ",");
}

bool EtcdClient::EndpointDown(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

bool EtcdClient::TokenExpired(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAUTHENTICATED &&
         absl::StrContains(status.error_message(), "invalid auth token");
}

// What failed is etcd's, not the caller's: a member down or overloaded is
// UNAVAILABLE (try later); a compacted revision stays OUT_OF_RANGE; anything else
// (a refused login or permission, a request too large) is FAILED_PRECONDITION, a
// problem of configuration that retrying does not fix.
absl::Status EtcdClient::FromGrpc(const grpc::Status& status, size_t endpoint) const {
  const std::string message = absl::StrCat("etcd at ", endpoints_[endpoint].address,
                                           ": ", status.error_message());
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return absl::OkStatus();
    case grpc::StatusCode::OUT_OF_RANGE:
      return absl::OutOfRangeError(message);
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::INTERNAL:
      return absl::UnavailableError(message);
    default:
      return absl::FailedPreconditionError(message);
  }
}

absl::Status EtcdClient::Authenticate(size_t endpoint, const std::string& stale_token) {
  absl::MutexLock lock(&token_mu_);
  if (token_ != stale_token) return absl::OkStatus();  // another call renewed it
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.request_timeout));
  etcdserverpb::AuthenticateRequest request;
  request.set_name(options_.user);
  request.set_password(options_.password);
  etcdserverpb::AuthenticateResponse response;
  grpc::Status status = endpoints_[endpoint].auth->Authenticate(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, endpoint);
  token_ = response.token();
  return absl::OkStatus();
}

absl::Status EtcdClient::Prepare(grpc::ClientContext& context, size_t endpoint,
                                 bool stream) {
  if (!stream) {
    context.set_deadline(absl::ToChronoTime(absl::Now() + options_.request_timeout));
  }
  if (options_.user.empty()) return absl::OkStatus();
  std::string token;
  {
    absl::MutexLock lock(&token_mu_);
    token = token_;
  }
  if (token.empty()) {
    if (absl::Status s = Authenticate(endpoint, ""); !s.ok()) return s;
    absl::MutexLock lock(&token_mu_);
    token = token_;
  }
  context.AddMetadata("token", token);
  return absl::OkStatus();
}

absl::StatusOr<etcdserverpb::RangeResponse> EtcdClient::Range(
    const etcdserverpb::RangeRequest& request) {
  const size_t first = current_.load();
  absl::Status last = absl::UnavailableError("no etcd endpoint");
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const size_t endpoint = (first + i) % endpoints_.size();
    for (int login = 0; login < 2; ++login) {
      grpc::ClientContext context;
      if (absl::Status s = Prepare(context, endpoint, false); !s.ok()) {
        last = s;
        break;
      }
      etcdserverpb::RangeResponse response;
      grpc::Status status = endpoints_[endpoint].kv->Range(&context, request, &response);
      if (status.ok()) {
        current_.store(endpoint);
        return response;
      }
      last = FromGrpc(status, endpoint);
      if (!TokenExpired(status)) break;
      absl::MutexLock lock(&token_mu_);
      token_.clear();  // log in again, then retry this endpoint once
    }
    if (!absl::IsUnavailable(last)) return last;
  }
  return last;
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(
    const etcdserverpb::TxnRequest& request) {
  const size_t endpoint = current_.load();
  for (int login = 0; login < 2; ++login) {
    grpc::ClientContext context;
    if (absl::Status s = Prepare(context, endpoint, false); !s.ok()) return s;
    etcdserverpb::TxnResponse response;
    grpc::Status status = endpoints_[endpoint].kv->Txn(&context, request, &response);
    if (status.ok()) return response;
    // An expired token is refused before the Txn is proposed: safe to send again.
    if (TokenExpired(status) && login == 0) {
      absl::MutexLock lock(&token_mu_);
      token_.clear();
      continue;
    }
    if (EndpointDown(status)) EndpointFailed(endpoint);
    return FromGrpc(status, endpoint);
  }
  return absl::UnavailableError("etcd: no login");
}

absl::StatusOr<EtcdClient::WatchStream> EtcdClient::Watch() {
  WatchStream watch;
  watch.endpoint = current_.load();
  watch.context = std::make_unique<grpc::ClientContext>();
  if (absl::Status s = Prepare(*watch.context, watch.endpoint, true); !s.ok()) return s;
  // A member cut off from the cluster's leader ends the stream, rather than
  // holding a watch that silently sees nothing.
  watch.context->AddMetadata("hasleader", "true");
  watch.stream = endpoints_[watch.endpoint].watch->Watch(watch.context.get());
  if (watch.stream == nullptr) return absl::UnavailableError("etcd: cannot open a watch");
  return watch;
}

void EtcdClient::EndpointFailed(size_t endpoint) {
  size_t expected = endpoint;
  current_.compare_exchange_strong(expected, (endpoint + 1) % endpoints_.size());
}

}  // namespace sealbox::server::etcd
