#include "client/cli/help.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/cli/options.h"

namespace sealbox::client {
namespace {

constexpr size_t kFlagColumn = 26;
constexpr size_t kWidth = 80;

// `text` filled into lines of kWidth, continuation lines indented to kFlagColumn.
std::string Wrap(absl::string_view text, size_t column) {
  std::string out;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (column > kFlagColumn && column + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, "\n", std::string(kFlagColumn, ' '));
      column = kFlagColumn;
    } else if (column > kFlagColumn) {
      out += ' ';
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
  }
  return out;
}

std::string FlagLines(const std::vector<FlagSpec>& flags) {
  std::string text;
  for (const FlagSpec& flag : flags) {
    std::string left = "  ";
    if (!flag.short_name.empty()) absl::StrAppend(&left, flag.short_name, ", ");
    absl::StrAppend(&left, flag.name);
    if (!flag.value_name.empty()) absl::StrAppend(&left, " ", flag.value_name);
    left += left.size() + 2 <= kFlagColumn ? std::string(kFlagColumn - left.size(), ' ')
                                           : std::string("\n") + std::string(kFlagColumn, ' ');
    absl::StrAppend(&text, left, Wrap(flag.help, kFlagColumn), "\n");
  }
  return text;
}

// "Encrypt data ..." from the summary "encrypt data ...".
std::string Sentence(const std::string& summary) {
  std::string text = summary;
  if (!text.empty()) text[0] = absl::ascii_toupper(static_cast<unsigned char>(text[0]));
  return text + ".";
}

bool StartsWithWords(const Command& command, const std::vector<std::string>& words) {
  if (command.words.size() < words.size()) return false;
  return std::equal(words.begin(), words.end(), command.words.begin());
}

constexpr char kTransport[] =
    "Transport: plaintext to loopback addresses (localhost, 127.0.0.0/8, [::1],\n"
    "unix:PATH); TLS to any other, verified against the system roots or --tls-ca;\n"
    "mutual TLS with --tls-cert and --tls-key. --insecure allows plaintext to a\n"
    "non-loopback server; any --tls-* flag forces TLS even on loopback.\n";

constexpr char kExamples[] =
    "Examples:\n"
    "  export SEALBOX_TOKEN=...            # a tenant token\n"
    "  sealbox seal --key default -i report.pdf -o report.pdf.sealed\n"
    "  sealbox open --key default -i report.pdf.sealed -o report.pdf\n"
    "  printf 'card 4111' | sealbox seal --key default --aad user:42 | base64\n"
    "  pg_dump db | sealbox seal --key backups -o db.sql.sealed   # streamed\n";

constexpr char kExitCodes[] =
    "Exit codes:\n"
    "  0  success\n"
    "  1  other failure: the server refused or failed the call, or a local file\n"
    "     could not be read or written\n"
    "  2  usage error: unknown command or flag, missing or malformed argument\n"
    "  3  decryption failed: wrong key or --aad, damaged or truncated ciphertext,\n"
    "     or input that is not a sealbox ciphertext\n"
    "  4  authentication or permission refused (missing, wrong or revoked token)\n"
    "  5  not found: tenant, key, key version or token\n"
    "  6  server unavailable: cannot connect, TLS handshake failed, shutting down\n"
    "Errors are one line on stderr: sealbox: <what>: <gRPC status code>: <message>\n";

}  // namespace

std::string UsageLine(const Command& command) {
  std::string line = absl::StrCat("sealbox ", absl::StrJoin(command.words, " "));
  if (!command.synopsis.empty()) absl::StrAppend(&line, " ", command.synopsis);
  return line;
}

std::string TopLevelHelp(const std::vector<Command>& commands) {
  std::string text =
      "sealbox: encrypt and decrypt data with a sealbox server, and manage its tenants,\n"
      "tokens and keys.\n"
      "\n"
      "Usage: sealbox [global flags] COMMAND [flags] [args]\n"
      "\n"
      "Data commands (with a tenant token):\n";
  // Admin commands are shown grouped: "admin key create|import|...".
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> verbs;
  for (const Command& command : commands) {
    if (command.words.size() == 1) {
      std::string name = command.words[0];
      absl::StrAppend(&text, "  ", name, std::string(10 - std::min<size_t>(name.size(), 8), ' '),
                      command.summary, "\n");
      continue;
    }
    std::string group = absl::StrJoin(command.words.begin(), command.words.end() - 1, " ");
    if (verbs[group].empty()) groups.push_back(group);
    verbs[group].push_back(command.words.back());
  }
  absl::StrAppend(&text, "\nAdmin commands (with the admin token):\n");
  for (const std::string& group : groups) {
    absl::StrAppend(&text, "  ", group, std::string(14 - std::min<size_t>(group.size(), 12), ' '),
                    absl::StrJoin(verbs[group], "|"), "\n");
  }
  std::vector<FlagSpec> global = GlobalFlags();
  global.push_back({"--help", "-h", "", "help for sealbox, or for the command before it"});
  absl::StrAppend(&text, "\nGlobal flags (before or after the command):\n", FlagLines(global),
                  "\nEnvironment: SEALBOX_SERVER, SEALBOX_TOKEN (the flags win).\n\n", kTransport,
                  "\n", kExamples, "\n", kExitCodes,
                  "\nRun 'sealbox COMMAND --help' for a command's flags: 'sealbox seal --help',\n"
                  "'sealbox admin --help', 'sealbox admin key create --help'.\n");
  return text;
}

std::string GroupHelp(const std::vector<std::string>& words, const std::vector<Command>& commands) {
  std::string text = absl::StrCat("Commands under 'sealbox ", absl::StrJoin(words, " "), "':\n");
  for (const Command& command : commands) {
    if (!StartsWithWords(command, words)) continue;
    absl::StrAppend(&text, "  ", UsageLine(command), "\n      ", command.summary, "\n");
  }
  absl::StrAppend(&text, "\nRun 'sealbox ", absl::StrJoin(words, " "),
                  " ... --help' for one command; 'sealbox --help' for global flags and exit "
                  "codes.\n");
  return text;
}

std::string CommandHelp(const Command& command) {
  std::string text =
      absl::StrCat("Usage: ", UsageLine(command), "\n\n", Sentence(command.summary), "\n");
  if (!command.help.empty()) absl::StrAppend(&text, "\n", command.help, "\n");
  if (!command.flags.empty()) absl::StrAppend(&text, "\nFlags:\n", FlagLines(command.flags));
  absl::StrAppend(&text,
                  "\nGlobal flags (--server, --token, --tls-*, --insecure, --timeout, --json)\n"
                  "and exit codes: see 'sealbox --help'.\n");
  return text;
}

}  // namespace sealbox::client
