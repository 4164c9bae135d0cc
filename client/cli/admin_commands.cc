#include "client/cli/admin_commands.h"

#include <string.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "client/cli/admin_output.h"
#include "client/cli/channel.h"
#include "client/cli/input.h"
#include "client/cli/output.h"
#include "client/cli/token_scope.h"
#include "google/protobuf/util/json_util.h"
#include "sealbox/v1/admin.grpc.pb.h"

namespace sealbox::client {
namespace {

namespace v1 = ::sealbox::v1;

const FlagSpec kYesFlag{"--yes", "-y", "", "do not ask for confirmation on a terminal"};

// Calls one Admin method and prints its response: JSON with --json, else `print`.
template <typename Request, typename Response, typename Print>
Outcome CallAdmin(const Invocation& invocation, const std::string& what,
                  grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*, const Request&,
                                                          Response*),
                  const Request& request, Print print) {
  absl::StatusOr<std::unique_ptr<Connection>> connection = Connection::Create(invocation.global);
  if (!connection.ok()) return Outcome::Error(std::string(connection.status().message()));
  auto stub = v1::Admin::NewStub((*connection)->channel());
  grpc::ClientContext context;
  (*connection)->Prepare(context, CallKind::kUnary);
  Response response;
  grpc::Status status = (stub.get()->*method)(&context, request, &response);
  if (!status.ok()) return (*connection)->Failed(what, status, context);
  std::cout << (invocation.global.json ? JsonOf(response) : print(response)) << std::flush;
  return Outcome::Ok();
}

// Asks before an irreversible change, but only a person at a terminal.
Outcome Confirm(const Invocation& invocation, const std::string& question) {
  if (invocation.Has("--yes") || isatty(STDIN_FILENO) != 1) return Outcome::Ok();
  std::fprintf(stderr, "%s [y/N] ", question.c_str());
  std::string answer;
  std::getline(std::cin, answer);
  answer = absl::AsciiStrToLower(absl::StripAsciiWhitespace(answer));
  if (answer == "y" || answer == "yes") return Outcome::Ok();
  return Outcome::Error("not confirmed; nothing changed");
}

// A key version: "3" (or "v3", as the key listing shows it).
Outcome ParseVersion(const std::string& text, const std::string& what, uint32_t& version) {
  absl::string_view digits = text;
  if (!digits.empty() && (digits[0] == 'v' || digits[0] == 'V')) digits.remove_prefix(1);
  if (!absl::SimpleAtoi(digits, &version) || version == 0 || digits[0] == '+' || digits[0] == '-') {
    return Outcome::Usage(absl::StrCat(what, " must be a key version number, not '", text, "'"));
  }
  return Outcome::Ok();
}

std::string KeyPath(const Invocation& invocation) {
  return absl::StrCat(invocation.args[0], "/", invocation.args[1]);
}

v1::KeyRef KeyRefOf(const Invocation& invocation) {
  v1::KeyRef ref;
  ref.set_tenant(invocation.args[0]);
  ref.set_key(invocation.args[1]);
  return ref;
}

Outcome RunTenantCreate(const Invocation& invocation) {
  v1::CreateTenantRequest request;
  request.set_name(invocation.args[0]);
  return CallAdmin(
      invocation, "create tenant " + request.name(), &v1::Admin::Stub::CreateTenant, request,
      [](const v1::Tenant& t) { return absl::StrCat("created tenant ", t.name(), "\n"); });
}

Outcome RunTenantDelete(const Invocation& invocation) {
  v1::DeleteTenantRequest request;
  request.set_name(invocation.args[0]);
  if (Outcome confirmed = Confirm(
          invocation,
          absl::StrCat("Delete tenant ", request.name(),
                       " with all its keys and tokens? Its data can never be decrypted again."));
      !confirmed.ok()) {
    return confirmed;
  }
  return CallAdmin(invocation, "delete tenant " + request.name(), &v1::Admin::Stub::DeleteTenant,
                   request, [&](const v1::DeleteTenantResponse&) {
                     return absl::StrCat("deleted tenant ", request.name(), "\n");
                   });
}

Outcome RunTenantList(const Invocation& invocation) {
  return CallAdmin(invocation, "list tenants", &v1::Admin::Stub::ListTenants,
                   v1::ListTenantsRequest(), [](const v1::ListTenantsResponse& response) {
                     if (response.tenants().empty()) return std::string("no tenants\n");
                     std::string text;
                     for (const v1::Tenant& t : response.tenants()) {
                       absl::StrAppend(&text, DescribeTenant(t));
                     }
                     return text;
                   });
}

Outcome RunTokenIssue(const Invocation& invocation) {
  v1::IssueTokenRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_description(invocation.Get("--description"));
  if (invocation.Has("--operations")) {
    if (absl::Status s = ParseOperations(invocation.Get("--operations"), request); !s.ok()) {
      return Outcome::Usage(std::string(s.message()));
    }
  }
  if (invocation.Has("--keys")) ParseKeyPatterns(invocation.Get("--keys"), request);
  for (const auto& [flag, field] : {std::make_pair("--ttl", request.mutable_ttl()),
                                    std::make_pair("--max-ttl", request.mutable_max_ttl())}) {
    if (!invocation.Has(flag)) continue;
    absl::StatusOr<absl::Duration> lifetime = ParseLifetime(invocation.Get(flag));
    if (!lifetime.ok()) {
      return Outcome::Usage(absl::StrCat(flag, ": ", lifetime.status().message()));
    }
    SetDuration(*lifetime, *field);
  }
  // The token alone on stdout, so TOKEN=$(sealbox admin token issue T) works.
  return CallAdmin(invocation, "issue token for " + request.tenant(), &v1::Admin::Stub::IssueToken,
                   request, [&](const v1::IssueTokenResponse& response) {
                     const v1::TokenInfo& info = response.info();
                     std::string expiry =
                         info.has_expire_time()
                             ? absl::StrCat(", expires ",
                                            FormatUnixTime(info.expire_time().seconds()))
                             : "";
                     std::fprintf(stderr,
                                  "sealbox: issued token %s for tenant %s (may %s%s); it is "
                                  "shown only once, store it now\n",
                                  info.id().c_str(), request.tenant().c_str(),
                                  DescribeScope(info).c_str(), expiry.c_str());
                     return absl::StrCat(response.token(), "\n");
                   });
}

Outcome RunAdminTokenIssue(const Invocation& invocation) {
  v1::IssueAdminTokenRequest request;
  request.set_description(invocation.Get("--description"));
  request.set_read_only(invocation.Has("--read-only"));
  if (invocation.Has("--ttl")) {
    absl::StatusOr<absl::Duration> ttl = ParseLifetime(invocation.Get("--ttl"));
    if (!ttl.ok()) return Outcome::Usage(absl::StrCat("--ttl: ", ttl.status().message()));
    SetDuration(*ttl, *request.mutable_ttl());
  }
  return CallAdmin(invocation, "issue admin token", &v1::Admin::Stub::IssueAdminToken, request,
                   [&](const v1::IssueTokenResponse& response) {
                     std::fprintf(stderr,
                                  "sealbox: issued %sadmin token %s; it is shown only once, "
                                  "store it now\n",
                                  request.read_only() ? "read-only " : "",
                                  response.info().id().c_str());
                     return absl::StrCat(response.token(), "\n");
                   });
}

Outcome RunAdminTokenRevoke(const Invocation& invocation) {
  v1::RevokeAdminTokenRequest request;
  request.set_token_id(invocation.args[0]);
  return CallAdmin(invocation, absl::StrCat("revoke admin token ", request.token_id()),
                   &v1::Admin::Stub::RevokeAdminToken, request,
                   [&](const v1::RevokeTokenResponse&) {
                     return absl::StrCat("revoked admin token ", request.token_id(), "\n");
                   });
}

Outcome RunAdminTokenList(const Invocation& invocation) {
  return CallAdmin(invocation, "list admin tokens", &v1::Admin::Stub::ListAdminTokens,
                   v1::ListAdminTokensRequest(), [](const v1::ListAdminTokensResponse& response) {
                     return DescribeAdminTokens(response);
                   });
}

Outcome RunTokenRevoke(const Invocation& invocation) {
  v1::RevokeTokenRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_token_id(invocation.args[1]);
  return CallAdmin(invocation,
                   absl::StrCat("revoke token ", request.token_id(), " of ", request.tenant()),
                   &v1::Admin::Stub::RevokeToken, request, [&](const v1::RevokeTokenResponse&) {
                     return absl::StrCat("revoked token ", request.token_id(), " of tenant ",
                                         request.tenant(), "\n");
                   });
}

Outcome RunKeyCreate(const Invocation& invocation) {
  v1::CreateKeyRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_key(invocation.args[1]);
  request.set_exportable(invocation.Has("--exportable"));
  if (invocation.Has("--algorithm")) {
    std::string name = absl::StrReplaceAll(absl::AsciiStrToLower(invocation.Get("--algorithm")),
                                           {{"-", ""}, {"_", ""}});
    if (name == "aes128" || name == "aes128gcm") {
      request.set_algorithm(v1::AES_128_GCM);
    } else if (name == "aes256" || name == "aes256gcm") {
      request.set_algorithm(v1::AES_256_GCM);
    } else {
      return Outcome::Usage(absl::StrCat("--algorithm must be aes128 or aes256, not '",
                                         invocation.Get("--algorithm"), "'"));
    }
  }
  return CallAdmin(invocation, "create key " + KeyPath(invocation), &v1::Admin::Stub::CreateKey,
                   request, DescribeKey);
}

Outcome RunKeyImport(const Invocation& invocation) {
  if (!invocation.Has("--material-file")) {
    return Outcome::Usage("--material-file FILE is required");
  }
  const std::string path = invocation.Get("--material-file");
  absl::StatusOr<std::string> material = ReadWholeFile(path, 1 << 20);
  if (!material.ok()) {
    return Outcome::Error(absl::StrCat("--material-file: ", material.status().message()));
  }
  if (material->size() != 16 && material->size() != 32) {
    size_t size = material->size();
    explicit_bzero(material->data(), material->size());
    return Outcome::Usage(
        absl::StrCat("--material-file must hold exactly 16 or 32 raw bytes (not hex or base64); ",
                     path, " holds ", size));
  }
  v1::ImportKeyRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_key(invocation.args[1]);
  request.mutable_material()->swap(*material);
  Outcome outcome = CallAdmin(invocation, "import key " + KeyPath(invocation),
                              &v1::Admin::Stub::ImportKey, request, DescribeKey);
  explicit_bzero(request.mutable_material()->data(), request.material().size());
  return outcome;
}

// Writes `bytes` to `path` (through a temporary file), or says why it could not.
Outcome WriteFileOrFail(const std::string& path, absl::string_view bytes, absl::string_view flag) {
  absl::StatusOr<std::unique_ptr<Output>> out = Output::Create(path);
  absl::Status written = out.ok() ? (*out)->Write(bytes) : out.status();
  if (written.ok()) written = (*out)->Commit();
  if (!written.ok()) return Outcome::Error(absl::StrCat(flag, ": ", written.message()));
  return Outcome::Ok();
}

Outcome RunKeyImportParams(const Invocation& invocation) {
  v1::GetImportParametersRequest request;
  request.set_tenant(invocation.args[0]);
  if (invocation.Has("--ttl")) {
    absl::StatusOr<absl::Duration> ttl = ParseLifetime(invocation.Get("--ttl"));
    if (!ttl.ok()) return Outcome::Usage(absl::StrCat("--ttl: ", ttl.status().message()));
    request.mutable_ttl()->set_seconds(absl::ToInt64Seconds(*ttl));
  }
  const std::string pem_path =
      invocation.Has("--public-key-out") ? invocation.Get("--public-key-out") : "";
  Outcome written = Outcome::Ok();
  Outcome called =
      CallAdmin(invocation, "get import parameters of tenant " + invocation.args[0],
                &v1::Admin::Stub::GetImportParameters, request,
                [&](const v1::ImportParameters& params) -> std::string {
                  if (pem_path.empty()) {
                    return absl::StrCat(params.import_key_id(), "\n", params.public_key_pem());
                  }
                  written = WriteFileOrFail(pem_path, params.public_key_pem(), "--public-key-out");
                  return absl::StrCat(params.import_key_id(), "\n");
                });
  return called.ok() ? written : called;
}

Outcome RunKeyImportWrapped(const Invocation& invocation) {
  const bool from_export = invocation.Has("--export-file");
  if (from_export == invocation.Has("--wrapped-file")) {
    return Outcome::Usage("give --wrapped-file (with --import-key-id) or --export-file");
  }
  v1::ImportWrappedKeyRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_key(invocation.args[1]);
  request.set_exportable(invocation.Has("--exportable"));
  if (!from_export) {
    if (!invocation.Has("--import-key-id")) return Outcome::Usage("--import-key-id ID is required");
    request.set_import_key_id(invocation.Get("--import-key-id"));
    absl::StatusOr<std::string> wrapped = ReadWholeFile(invocation.Get("--wrapped-file"), 1 << 20);
    if (!wrapped.ok()) {
      return Outcome::Error(absl::StrCat("--wrapped-file: ", wrapped.status().message()));
    }
    request.set_wrapped_material(*std::move(wrapped));
    return CallAdmin(invocation, "import wrapped key " + KeyPath(invocation),
                     &v1::Admin::Stub::ImportWrappedKey, request, DescribeKey);
  }
  // Every version of an export (`sealbox admin key export`), in order, each as the
  // version number it had there, so that what was sealed there opens here.
  absl::StatusOr<std::string> text = ReadWholeFile(invocation.Get("--export-file"), 64 << 20);
  if (!text.ok()) return Outcome::Error(absl::StrCat("--export-file: ", text.status().message()));
  v1::ExportKeyResponse exported;
  if (!google::protobuf::util::JsonStringToMessage(*text, &exported).ok() ||
      exported.versions().empty()) {
    return Outcome::Usage(absl::StrCat("--export-file: ", invocation.Get("--export-file"),
                                       " is not what `sealbox admin key export` writes"));
  }
  request.set_import_key_id(exported.import_key_id());
  Outcome last = Outcome::Ok();
  for (const v1::WrappedKeyVersion& version : exported.versions()) {
    request.set_version(version.version());
    request.set_wrapped_material(version.wrapped_material());
    last = CallAdmin(
        invocation, absl::StrCat("import version ", version.version(), " of ", KeyPath(invocation)),
        &v1::Admin::Stub::ImportWrappedKey, request, [&](const v1::Key& key) -> std::string {
          // Only the last answer shows the key, with every version.
          return version.version() == exported.versions().rbegin()->version() ? DescribeKey(key)
                                                                              : std::string();
        });
    if (!last.ok()) return last;
  }
  return last;
}

Outcome RunKeyExport(const Invocation& invocation) {
  if (!invocation.Has("--public-key") || !invocation.Has("--import-key-id") ||
      !invocation.Has("--out")) {
    return Outcome::Usage("--public-key FILE, --import-key-id ID and --out FILE are required");
  }
  absl::StatusOr<std::string> pem = ReadWholeFile(invocation.Get("--public-key"), 64 << 10);
  if (!pem.ok()) return Outcome::Error(absl::StrCat("--public-key: ", pem.status().message()));
  v1::ExportKeyRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_key(invocation.args[1]);
  request.set_public_key(*std::move(pem));
  request.set_import_key_id(invocation.Get("--import-key-id"));
  Outcome written = Outcome::Ok();
  Outcome called =
      CallAdmin(invocation, "export key " + KeyPath(invocation), &v1::Admin::Stub::ExportKey,
                request, [&](const v1::ExportKeyResponse& response) -> std::string {
                  written = WriteFileOrFail(invocation.Get("--out"), JsonOf(response), "--out");
                  return absl::StrCat("exported ", response.versions_size(), " version(s) of ",
                                      KeyPath(invocation), " to ", invocation.Get("--out"), "\n");
                });
  return called.ok() ? written : called;
}

Outcome RunKeyRotate(const Invocation& invocation) {
  return CallAdmin(invocation, "rotate key " + KeyPath(invocation), &v1::Admin::Stub::RotateKey,
                   KeyRefOf(invocation), DescribeKey);
}

Outcome RunKekRotate(const Invocation& invocation) {
  return CallAdmin(invocation, "rotate the KEK", &v1::Admin::Stub::RotateKek,
                   v1::RotateKekRequest(), DescribeKekStatus);
}

Outcome RunKekStatus(const Invocation& invocation) {
  return CallAdmin(invocation, "get the KEK's status", &v1::Admin::Stub::GetKekStatus,
                   v1::GetKekStatusRequest(), DescribeKekStatus);
}

Outcome RunKeyDisable(const Invocation& invocation) {
  return CallAdmin(invocation, "disable key " + KeyPath(invocation), &v1::Admin::Stub::DisableKey,
                   KeyRefOf(invocation), DescribeKey);
}

Outcome RunKeyEnable(const Invocation& invocation) {
  return CallAdmin(invocation, "enable key " + KeyPath(invocation), &v1::Admin::Stub::EnableKey,
                   KeyRefOf(invocation), DescribeKey);
}

Outcome RunKeyGet(const Invocation& invocation) {
  return CallAdmin(invocation, "get key " + KeyPath(invocation), &v1::Admin::Stub::GetKey,
                   KeyRefOf(invocation), DescribeKey);
}

Outcome RunKeyList(const Invocation& invocation) {
  v1::ListKeysRequest request;
  request.set_tenant(invocation.args[0]);
  return CallAdmin(invocation, "list keys of " + request.tenant(), &v1::Admin::Stub::ListKeys,
                   request, [&](const v1::ListKeysResponse& response) {
                     if (response.keys().empty()) {
                       return absl::StrCat("tenant ", request.tenant(), " has no keys\n");
                     }
                     std::string text;
                     for (const v1::Key& key : response.keys())
                       absl::StrAppend(&text, DescribeKey(key));
                     return text;
                   });
}

Outcome RunKeyMinVersion(const Invocation& invocation) {
  v1::SetMinDecryptionVersionRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_key(invocation.args[1]);
  uint32_t version = 0;
  if (Outcome parsed = ParseVersion(invocation.args[2], "N", version); !parsed.ok()) {
    return parsed;
  }
  request.set_min_decryption_version(version);
  return CallAdmin(invocation, "set min decryption version of " + KeyPath(invocation),
                   &v1::Admin::Stub::SetMinDecryptionVersion, request, DescribeKey);
}

Outcome RunKeyRotationPeriod(const Invocation& invocation) {
  v1::SetRotationPeriodRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_key(invocation.args[1]);
  if (invocation.args[2] != "off") {
    absl::StatusOr<absl::Duration> period = ParseLifetime(invocation.args[2]);
    if (!period.ok()) return Outcome::Usage(std::string(period.status().message()));
    SetDuration(*period, *request.mutable_rotation_period());
  }
  return CallAdmin(invocation, "set rotation period of " + KeyPath(invocation),
                   &v1::Admin::Stub::SetRotationPeriod, request, DescribeKey);
}

Outcome RunKeyTrim(const Invocation& invocation) {
  v1::TrimKeyRequest request;
  request.set_tenant(invocation.args[0]);
  request.set_key(invocation.args[1]);
  uint32_t version = 0;
  if (Outcome parsed = ParseVersion(invocation.args[2], "N", version); !parsed.ok()) {
    return parsed;
  }
  request.set_min_available_version(version);
  if (Outcome confirmed = Confirm(
          invocation,
          absl::StrCat("Delete every version below ", version, " of key ", KeyPath(invocation),
                       "? Data sealed under them can never be decrypted again."));
      !confirmed.ok()) {
    return confirmed;
  }
  return CallAdmin(invocation, "trim key " + KeyPath(invocation), &v1::Admin::Stub::TrimKey,
                   request, DescribeKey);
}

// disable, enable, destroy: the same request, a different method.
Command VersionCommand(const std::string& verb, const std::string& summary, const std::string& help,
                       grpc::Status (v1::Admin::Stub::*method)(grpc::ClientContext*,
                                                               const v1::KeyVersionRef&, v1::Key*),
                       bool irreversible) {
  Command command{{"admin", "key", verb},
                  irreversible ? "TENANT KEY VERSION [--yes]" : "TENANT KEY VERSION",
                  summary,
                  help,
                  {},
                  3,
                  3,
                  nullptr};
  if (irreversible) command.flags.push_back(kYesFlag);
  command.run = [verb, method, irreversible](const Invocation& invocation) {
    v1::KeyVersionRef ref;
    ref.set_tenant(invocation.args[0]);
    ref.set_key(invocation.args[1]);
    uint32_t version = 0;
    if (Outcome parsed = ParseVersion(invocation.args[2], "VERSION", version); !parsed.ok()) {
      return parsed;
    }
    ref.set_version(version);
    std::string what = absl::StrCat(verb, " version ", version, " of key ", KeyPath(invocation));
    if (irreversible) {
      if (Outcome confirmed = Confirm(
              invocation, absl::StrCat("Destroy version ", version, " of key ", KeyPath(invocation),
                                       "? Data sealed under it can never be decrypted again."));
          !confirmed.ok()) {
        return confirmed;
      }
    }
    return CallAdmin(invocation, what, method, ref, DescribeKey);
  };
  return command;
}

}  // namespace

std::vector<Command> AdminCommands() {
  const std::string kNeedsAdmin = "Admin commands need the admin token (--token or SEALBOX_TOKEN).";
  std::vector<Command> commands = {
      {{"admin", "tenant", "create"},
       "NAME",
       "create a tenant",
       "Tenant names: 1-64 of [a-z0-9_-], starting with a letter. Then issue it a token\n"
       "and create a key:\n"
       "  sealbox admin token issue NAME\n"
       "  sealbox admin key create NAME default",
       {},
       1,
       1,
       RunTenantCreate},
      {{"admin", "tenant", "delete"},
       "NAME [--yes]",
       "delete a tenant with all its keys and tokens (irreversible)",
       "Everything sealed under the tenant's keys can never be decrypted again. On a\n"
       "terminal this asks first, unless --yes.",
       {kYesFlag},
       1,
       1,
       RunTenantDelete},
      {{"admin", "tenant", "list"},
       "",
       "list tenants with their keys and token ids",
       "",
       {},
       0,
       0,
       RunTenantList},
      {{"admin", "token", "issue"},
       "TENANT [--description TEXT] [--operations LIST] [--keys LIST] [--ttl D] [--max-ttl D]",
       "issue a bearer token for a tenant (printed once)",
       "Prints the token alone on stdout (its id goes to stderr), so that\n"
       "  export SEALBOX_TOKEN=$(sealbox admin token issue TENANT)\n"
       "works. The server keeps only a hash: the token cannot be shown again.\n"
       "\n"
       "Least privilege: --operations and --keys limit what the token may do, e.g. a\n"
       "service that may only seal under keys named orders-...:\n"
       "  sealbox admin token issue acme --operations seal --keys 'orders-*'\n"
       "Anything else is refused with PERMISSION_DENIED naming what is missing.\n"
       "With --ttl the token stops working after that long; its holder renews it\n"
       "before then with `sealbox token renew`, at most until --max-ttl from now.",
       {{"--description", "", "TEXT", "free text to recognise the token by later"},
        {"--operations", "", "LIST",
         "what it may do: some of seal,open,rewrap,datakey (default: all; each covers "
         "its stream and batch calls)"},
        {"--keys", "", "LIST",
         "which keys: names and prefix* patterns, e.g. 'orders-*,invoices' (default: all)"},
        {"--ttl", "", "D", "expire after D: 90s, 15m, 24h, 30d (default: never)"},
        {"--max-ttl", "", "D", "renewals may extend it until D from now (default: no limit)"}},
       1,
       1,
       RunTokenIssue},
      {{"admin", "token", "revoke"},
       "TENANT TOKEN_ID",
       "revoke a tenant token by its id",
       "Token ids are shown by `sealbox admin tenant list`.",
       {},
       2,
       2,
       RunTokenRevoke},
      {{"admin", "admin-token", "issue"},
       "[--description TEXT] [--read-only] [--ttl D]",
       "issue another admin token (printed once)",
       "Admin tokens live in the keystore: they work on every replica at once, with no\n"
       "restart, until revoked or expired. The token the server was started with\n"
       "(--admin-token-file) bootstraps them. To move off it:\n"
       "  export SEALBOX_TOKEN=$(sealbox admin admin-token issue --description ops)\n"
       "  sealbox admin admin-token revoke bootstrap\n"
       "A --read-only token may list and get, nothing else (for dashboards).",
       {{"--description", "", "TEXT", "free text to recognise the token by later"},
        {"--read-only", "", "", "may only call tenant list, key list, key get, admin-token list"},
        {"--ttl", "", "D", "expire after D: 90s, 15m, 24h, 30d (default: never)"}},
       0,
       0,
       RunAdminTokenIssue},
      {{"admin", "admin-token", "revoke"},
       "TOKEN_ID|bootstrap",
       "revoke an admin token, or retire the bootstrap one",
       "`bootstrap` retires the token the servers were started with, on every replica\n"
       "and across restarts; it needs another admin token that may change the keystore\n"
       "first. A new --admin-token-file brings a new bootstrap token.",
       {},
       1,
       1,
       RunAdminTokenRevoke},
      {{"admin", "admin-token", "list"},
       "",
       "list admin tokens (ids, never the tokens)",
       "",
       {},
       0,
       0,
       RunAdminTokenList},
      {{"admin", "key", "create"},
       "TENANT KEY [--algorithm aes128|aes256] [--exportable]",
       "create a key with a fresh random version 1",
       "Key names: 1-64 of [A-Za-z0-9_.-]. An --exportable key's versions may leave,\n"
       "wrapped for another sealbox (`admin key export`); without it they never do,\n"
       "and that cannot be changed.",
       {{"--algorithm", "", "ALG", "aes128 or aes256 (default aes256)"},
        {"--exportable", "", "", "its versions may be exported, wrapped"}},
       2,
       2,
       RunKeyCreate},
      {{"admin", "key", "import-params"},
       "TENANT [--public-key-out FILE] [--ttl D]",
       "an import key to wrap key material for (RSA-4096, CKM_RSA_AES_KEY_WRAP)",
       "Prints the import key's id, then its public key (PEM), or writes the PEM to\n"
       "--public-key-out. Wrap the material for it with RSA-OAEP-SHA-256 and AES key\n"
       "wrap with padding (docs/OPERATIONS.md shows the openssl commands), then\n"
       "`admin key import-wrapped`. The private half stays in the keystore.",
       {{"--public-key-out", "", "FILE", "write the public key (PEM) here"},
        {"--ttl", "", "D", "how long a new import key lives (default 24h, at most 7d)"}},
       1,
       1,
       RunKeyImportParams},
      {{"admin", "key", "import-wrapped"},
       "TENANT KEY (--import-key-id ID --wrapped-file FILE | --export-file FILE)",
       "bring your own key, wrapped: as a new key or a new primary version",
       "--wrapped-file holds RSA-OAEP(one-time AES key) || AES-KWP(material) for the\n"
       "import key ID. --export-file takes what `admin key export` wrote on another\n"
       "server for this one's import key, and imports every version in order.",
       {{"--import-key-id", "", "ID", "the import key the material was wrapped for"},
        {"--wrapped-file", "", "FILE", "the wrapped material"},
        {"--export-file", "", "FILE", "an export from another sealbox"},
        {"--exportable", "", "", "a new key may itself be exported later"}},
       2,
       2,
       RunKeyImportWrapped},
      {{"admin", "key", "export"},
       "TENANT KEY --public-key FILE --import-key-id ID --out FILE",
       "an exportable key's versions, wrapped for another sealbox's import key",
       "Get the receiver's import key with `admin key import-params` there. Only keys\n"
       "created --exportable may leave; the refusal is audited. --out is JSON (the\n"
       "ExportKey response); import it there with `admin key import-wrapped\n"
       "--export-file`.",
       {{"--public-key", "", "FILE", "the receiver's import key (PEM)"},
        {"--import-key-id", "", "ID", "its id"},
        {"--out", "", "FILE", "where the export goes"}},
       2,
       2,
       RunKeyExport},
      {{"admin", "key", "import"},
       "TENANT KEY --material-file FILE",
       "bring your own key: create a key, or add a primary version, from raw bytes",
       "For development: the material travels unwrapped. In production use\n"
       "`admin key import-wrapped`.\n"
       "FILE holds the raw AES key, exactly 16 (AES-128) or 32 (AES-256) bytes, e.g.\n"
       "  head -c 32 /dev/urandom > key.bin\n"
       "If the key exists, the material becomes its new primary version and must match\n"
       "its algorithm.",
       {{"--material-file", "", "FILE", "the raw key bytes (required)"}},
       2,
       2,
       RunKeyImport},
      {{"admin", "kek", "rotate"},
       "",
       "rotate the keystore's KEK while serving (KEK sealed by an HSM only)",
       "A new KEK, sealed by the HSM key, is current at once on every replica; every\n"
       "record is rewrapped under it in the background, and the old KEK retired when\n"
       "none is left under it. Calls keep succeeding throughout. Follow it with\n"
       "`sealbox admin kek status`.",
       {},
       0,
       0,
       RunKekRotate},
      {{"admin", "kek", "status"},
       "",
       "the KEK's fingerprint, age, custody and rotation progress",
       "Read-only admin tokens may call it.",
       {},
       0,
       0,
       RunKekStatus},
      {{"admin", "key", "rotate"},
       "TENANT KEY",
       "add a fresh version and make it primary (older ones still open)",
       "New data is sealed under the new version. Migrate old unary ciphertexts with\n"
       "`sealbox rewrap`, then retire old versions with `admin key min-version`.",
       {},
       2,
       2,
       RunKeyRotate},
      {{"admin", "key", "disable-key"},
       "TENANT KEY",
       "stop the whole key from sealing or opening, until enable-key",
       "Every version at once, reversibly: for a key suspected compromised or used by\n"
       "mistake. Calls with it answer FAILED_PRECONDITION until `admin key enable-key`;\n"
       "its versions keep their own states, and scheduled rotation waits.",
       {},
       2,
       2,
       RunKeyDisable},
      {{"admin", "key", "enable-key"},
       "TENANT KEY",
       "let a disabled key seal and open again",
       "",
       {},
       2,
       2,
       RunKeyEnable},
      {{"admin", "key", "get"},
       "TENANT KEY",
       "show a key and its versions",
       "",
       {},
       2,
       2,
       RunKeyGet},
      {{"admin", "key", "list"}, "TENANT", "show every key of a tenant", "", {}, 1, 1, RunKeyList},
      {{"admin", "key", "min-version"},
       "TENANT KEY N",
       "stop versions below N from opening (they are kept)",
       "Versions below N fail to open with FAILED_PRECONDITION; lowering N again\n"
       "restores them.",
       {},
       3,
       3,
       RunKeyMinVersion},
      {{"admin", "key", "rotation-period"},
       "TENANT KEY PERIOD|off",
       "rotate a key automatically every PERIOD (e.g. 30d, 90d)",
       "The key is rotated PERIOD after its primary version was made (at once if that\n"
       "is already past), then every PERIOD. Every replica checks; exactly one rotates.\n"
       "`off` stops it. The server refuses periods below --min-rotation-period-seconds\n"
       "(1 hour by default).",
       {},
       3,
       3,
       RunKeyRotationPeriod},
      {{"admin", "key", "trim"},
       "TENANT KEY N [--yes]",
       "delete every version below N for good (irreversible)",
       "Keeps a key's history bounded: versions below N, which must already be below\n"
       "the minimum decryption version (`admin key min-version`), are deleted with\n"
       "their material, and the minimum can no longer go below N. On a terminal this\n"
       "asks first, unless --yes.",
       {kYesFlag},
       3,
       3,
       RunKeyTrim},
      VersionCommand("disable", "stop a version from sealing or opening, until enabled", "",
                     &v1::Admin::Stub::DisableKeyVersion, false),
      VersionCommand("enable", "allow a disabled version again", "",
                     &v1::Admin::Stub::EnableKeyVersion, false),
      VersionCommand("destroy", "erase a version's key material for good (irreversible)",
                     "Data sealed under the version can never be decrypted again. The primary\n"
                     "version cannot be destroyed: rotate first. On a terminal this asks first,\n"
                     "unless --yes.",
                     &v1::Admin::Stub::DestroyKeyVersion, true),
  };
  for (Command& command : commands) {
    command.help = command.help.empty() ? kNeedsAdmin : command.help + "\n\n" + kNeedsAdmin;
  }
  return commands;
}

}  // namespace sealbox::client
