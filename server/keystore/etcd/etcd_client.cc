#include "server/keystore/etcd/etcd_client.h"

#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "crypto/secret/secure_wipe.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"
#include "grpcpp/support/channel_arguments.h"
#include "server/keystore/etcd/etcd_prober.h"

namespace sealbox::server::etcd {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read the ", what, " ", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty())
    return absl::InvalidArgumentError(absl::StrCat("the ", what, " ", path, " is empty"));
  return text;
}

// While looking for a member that answers (FindAnsweringMember): how often every
// member is dialled afresh, how long most attempts may take, and how long one in
// kPatientEvery may (a member behind a slow link).
constexpr absl::Duration kProbeInterval = absl::Milliseconds(10);
constexpr absl::Duration kQuickProbe = absl::Milliseconds(250);
constexpr absl::Duration kPatientProbe = absl::Seconds(4);
constexpr int kPatientEvery = 40;

// `own_pool`: a channel that shares no connection with the others (gRPC pools
// subchannels of equal channels process-wide), so it dials now. `connect_timeout`,
// when not zero: how long a connection attempt may take (a probe's attempt must end
// with the probe: a channel going away does not stop the TCP connect it began, and
// hundreds left waiting on dropped SYNs all complete at once when the network heals).
grpc::ChannelArguments ChannelArgs(bool own_pool, absl::Duration connect_timeout) {
  grpc::ChannelArguments args;
  if (own_pool) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
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
  if (connect_timeout > absl::ZeroDuration()) {
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
                static_cast<int>(absl::ToInt64Milliseconds(connect_timeout)));
  }
  return args;
}

}  // namespace

struct EtcdClient::Endpoint {
  std::string address;  // HOST:PORT
  mutable absl::Mutex mu;
  // Replaced by FindAnsweringMember; calls in flight keep the one they started on.
  std::shared_ptr<const Connection> connection ABSL_GUARDED_BY(mu);
};

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
  const bool has_password = !options.password.empty() || !options.password_file.empty();
  if (options.user.empty() == has_password) {
    return absl::InvalidArgumentError(options.user.empty() ? "an etcd password needs an etcd user"
                                                           : "an etcd user needs a password");
  }
  std::unique_ptr<EtcdClient> client(new EtcdClient(std::move(options)));
  const EtcdOptions& o = client->options_;
  if (!o.password_file.empty()) {
    if (auto password = client->Password(); !password.ok()) return password.status();
  }
  client->credentials_ = grpc::InsecureChannelCredentials();
  if (tls) {
    // Read now, so that a bad file stops startup with a clear error; then watched.
    if (!o.ca_file.empty()) {
      if (auto ca = ReadPem(o.ca_file, "etcd CA file"); !ca.ok()) return ca.status();
    }
    if (!o.cert_file.empty()) {
      if (auto cert = ReadPem(o.cert_file, "etcd client certificate"); !cert.ok()) {
        return cert.status();
      }
      auto key = ReadPem(o.key_file, "etcd client key");
      if (!key.ok()) return key.status();
      crypto::SecureWipe(key->data(), key->size());
    }
    const auto interval = static_cast<unsigned int>(
        std::max<int64_t>(1, absl::ToInt64Seconds(o.tls_reload_interval)));
    grpc::experimental::TlsChannelCredentialsOptions tls_options;
    std::shared_ptr<grpc::experimental::CertificateProviderInterface> files;
    if (!o.cert_file.empty()) {
      files = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
          o.key_file, o.cert_file, o.ca_file, interval);
      tls_options.watch_identity_key_cert_pairs();
    } else if (!o.ca_file.empty()) {
      files =
          std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(o.ca_file, interval);
    }
    if (files != nullptr) tls_options.set_certificate_provider(files);
    // Without a CA file: the system's roots.
    if (!o.ca_file.empty()) tls_options.watch_root_certs();
    tls_options.set_certificate_verifier(
        std::make_shared<grpc::experimental::HostNameCertificateVerifier>());
    client->credentials_ = grpc::experimental::TlsCredentials(tls_options);
  }
  for (const std::string& address : addresses) {
    auto endpoint = std::make_unique<Endpoint>();
    endpoint->address = address;
    client->endpoints_.push_back(std::move(endpoint));
  }
  for (size_t i = 0; i < client->endpoints_.size(); ++i) {
    client->Adopt(i, client->Connect(i, /*own_pool=*/false, absl::ZeroDuration()));
  }
  client->current_.store(0);
  return client;
}

EtcdClient::EtcdClient(EtcdOptions options)
    : options_(std::move(options)), prober_(std::make_unique<Prober>(this)) {}

EtcdClient::~EtcdClient() = default;

std::shared_ptr<EtcdClient::Connection> EtcdClient::Connect(size_t endpoint, bool own_pool,
                                                            absl::Duration connect_timeout) const {
  auto connection = std::make_shared<Connection>();
  connection->channel = grpc::CreateCustomChannel(endpoints_[endpoint]->address, credentials_,
                                                  ChannelArgs(own_pool, connect_timeout));
  connection->kv = etcdserverpb::KV::NewStub(connection->channel);
  connection->watch = etcdserverpb::Watch::NewStub(connection->channel);
  connection->auth = etcdserverpb::Auth::NewStub(connection->channel);
  return connection;
}

std::shared_ptr<const EtcdClient::Connection> EtcdClient::ConnectionOf(size_t endpoint) const {
  const Endpoint& e = *endpoints_[endpoint];
  absl::MutexLock lock(&e.mu);
  return e.connection;
}

void EtcdClient::Adopt(size_t endpoint, std::shared_ptr<const Connection> connection) {
  Endpoint& e = *endpoints_[endpoint];
  {
    absl::MutexLock lock(&e.mu);
    e.connection = std::move(connection);
  }
  current_.store(endpoint);
}

std::string EtcdClient::Endpoints() const {
  std::vector<std::string> addresses;
  for (const auto& e : endpoints_) addresses.push_back(e->address);
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
  const std::string message =
      absl::StrCat("etcd at ", endpoints_[endpoint]->address, ": ", status.error_message());
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

absl::StatusOr<std::string> EtcdClient::Password() const {
  if (options_.password_file.empty()) return options_.password;
  std::ifstream in(options_.password_file, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the etcd password file ", options_.password_file));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string password(absl::StripTrailingAsciiWhitespace(text));
  crypto::SecureWipe(text.data(), text.size());
  if (password.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the etcd password file ", options_.password_file, " is empty"));
  }
  return password;
}

absl::Status EtcdClient::Authenticate(size_t endpoint, const std::string& stale_token) {
  absl::MutexLock lock(&token_mu_);
  if (token_ != stale_token) return absl::OkStatus();  // another call renewed it
  absl::StatusOr<std::string> password = Password();
  if (!password.ok()) return password.status();
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.request_timeout));
  etcdserverpb::AuthenticateRequest request;
  request.set_name(options_.user);
  request.set_password(*password);
  crypto::SecureWipe(password->data(), password->size());
  etcdserverpb::AuthenticateResponse response;
  grpc::Status status = ConnectionOf(endpoint)->auth->Authenticate(&context, request, &response);
  std::string& sent = *request.mutable_password();
  crypto::SecureWipe(sent.data(), sent.size());
  if (!status.ok()) return FromGrpc(status, endpoint);
  token_ = response.token();
  return absl::OkStatus();
}

std::string EtcdClient::Token() {
  absl::MutexLock lock(&token_mu_);
  return token_;
}

absl::Status EtcdClient::Prepare(grpc::ClientContext& context, size_t endpoint, bool stream,
                                 absl::Duration timeout) {
  if (!stream) context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  if (options_.user.empty()) return absl::OkStatus();
  std::string token = Token();
  if (token.empty()) {
    if (absl::Status s = Authenticate(endpoint, ""); !s.ok()) return s;
    token = Token();
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
      if (absl::Status s = Prepare(context, endpoint, false, options_.request_timeout); !s.ok()) {
        last = s;
        break;
      }
      etcdserverpb::RangeResponse response;
      grpc::Status status = ConnectionOf(endpoint)->kv->Range(&context, request, &response);
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

absl::StatusOr<int64_t> EtcdClient::CurrentRevision(const std::string& key,
                                                    absl::Duration timeout) {
  const size_t endpoint = current_.load();
  etcdserverpb::RangeRequest request;
  request.set_key(key);
  request.set_count_only(true);  // linearizable: etcd's default
  for (int login = 0; login < 2; ++login) {
    grpc::ClientContext context;
    if (absl::Status s = Prepare(context, endpoint, false, timeout); !s.ok()) return s;
    etcdserverpb::RangeResponse response;
    grpc::Status status = ConnectionOf(endpoint)->kv->Range(&context, request, &response);
    if (status.ok()) return response.header().revision();
    if (TokenExpired(status) && login == 0) {
      absl::MutexLock lock(&token_mu_);
      token_.clear();
      continue;
    }
    return FromGrpc(status, endpoint);
  }
  return absl::UnavailableError("etcd: no login");
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(const etcdserverpb::TxnRequest& request) {
  return Txn(request, options_.request_timeout);
}

absl::StatusOr<etcdserverpb::TxnResponse> EtcdClient::Txn(const etcdserverpb::TxnRequest& request,
                                                          absl::Duration timeout) {
  const size_t endpoint = current_.load();
  for (int login = 0; login < 2; ++login) {
    grpc::ClientContext context;
    if (absl::Status s = Prepare(context, endpoint, false, timeout); !s.ok()) {
      return s;
    }
    etcdserverpb::TxnResponse response;
    std::shared_ptr<const Connection> connection = ConnectionOf(endpoint);
    grpc::Status status = connection->kv->Txn(&context, request, &response);
    if (status.ok()) return response;
    // An expired token is refused before the Txn is proposed: safe to send again.
    if (TokenExpired(status) && login == 0) {
      absl::MutexLock lock(&token_mu_);
      token_.clear();
      continue;
    }
    if (EndpointDown(status)) EndpointFailed(endpoint, connection.get());
    return FromGrpc(status, endpoint);
  }
  return absl::UnavailableError("etcd: no login");
}

absl::StatusOr<EtcdClient::WatchStream> EtcdClient::Watch(grpc::ClientContext* context) {
  WatchStream watch;
  watch.endpoint = current_.load();
  watch.connection = ConnectionOf(watch.endpoint);
  if (absl::Status s = Prepare(*context, watch.endpoint, true, absl::ZeroDuration()); !s.ok()) {
    return s;
  }
  // A member cut off from the cluster's leader ends the stream, rather than
  // holding a watch that silently sees nothing.
  context->AddMetadata("hasleader", "true");
  // Waits for a connection (an endpoint that drops packets: until the context is
  // cancelled).
  watch.stream = watch.connection->watch->Watch(context);
  if (watch.stream == nullptr) return absl::UnavailableError("etcd: cannot open a watch");
  return watch;
}

void EtcdClient::EndpointFailed(size_t endpoint, const Connection* connection) {
  // A call that began before FindAnsweringMember replaced the connection says
  // nothing of the new one.
  if (ConnectionOf(endpoint).get() != connection) return;
  size_t expected = endpoint;
  current_.compare_exchange_strong(expected, (endpoint + 1) % endpoints_.size());
}

std::optional<size_t> EtcdClient::FindAnsweringMember(const std::string& key, absl::Duration within,
                                                      const absl::Notification& stop) {
  absl::MutexLock lock(&prober_mu_);
  prober_->Begin(key);
  std::optional<size_t> found;
  const absl::Time deadline = absl::Now() + within;
  for (int round = 0; !stop.HasBeenNotified() && absl::Now() < deadline; ++round) {
    // Most attempts are short, to find a member soon after the network is back; one
    // in kPatientEvery may take longer, for a member behind a slow link.
    const absl::Duration timeout = round % kPatientEvery == 0 ? kPatientProbe : kQuickProbe;
    for (size_t e = 0; e < endpoints_.size(); ++e) prober_->Launch(e, timeout);
    if (auto answer = prober_->WaitForAnswer(kProbeInterval)) {
      Adopt(answer->first, std::move(answer->second));
      // The others may be waiting out a reconnect backoff: the network is back.
      for (size_t e = 0; e < endpoints_.size(); ++e) {
        grpc::experimental::ChannelResetConnectionBackoff(ConnectionOf(e)->channel.get());
      }
      found = answer->first;
      break;
    }
  }
  prober_->Begin("");  // no answer after this one
  prober_->CancelAll();
  return found;
}

void EtcdClient::TidyProbes() {
  absl::MutexLock lock(&prober_mu_);
  prober_->Tidy();
}

}  // namespace sealbox::server::etcd
