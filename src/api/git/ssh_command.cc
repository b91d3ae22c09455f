#include "api/git/ssh_command.h"

#include <vector>

namespace hangar::api {

namespace {

constexpr size_t kMaxCommand = 4096;

// `s` cut to 64 characters with control characters replaced, for error messages.
std::string Shown(std::string_view s) {
  std::string out(s.substr(0, 64));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

bool BareChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '~' || c == '/' || c == '-';
}

// Splits `command` into words: bare words, or single-quoted ones with git's sq_quote escapes
// ('\'' and '\!' between quoted runs). Errors: BadRequest.
Result<std::vector<std::string>> Words(std::string_view command) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < command.size()) {
    if (command[i] == ' ') {
      ++i;
      continue;
    }
    std::string word;
    if (command[i] != '\'') {
      while (i < command.size() && command[i] != ' ') {
        if (!BareChar(command[i])) return Bad("malformed command: unexpected character");
        word += command[i++];
      }
    } else {
      while (true) {
        // At an opening quote: copy up to the closing one.
        size_t close = command.find('\'', i + 1);
        if (close == std::string_view::npos) return Bad("malformed quoting");
        word.append(command.substr(i + 1, close - i - 1));
        i = close + 1;
        if (i == command.size() || command[i] == ' ') break;
        // '\'' or '\!' continues the word with that character, then another quoted run.
        if (command.size() - i < 3 || command[i] != '\\' ||
            (command[i + 1] != '\'' && command[i + 1] != '!') || command[i + 2] != '\'') {
          return Bad("malformed quoting");
        }
        word += command[i + 1];
        i += 2;
      }
    }
    if (word.find('\0') != std::string::npos) return Bad("malformed command: NUL byte");
    words.push_back(std::move(word));
  }
  return words;
}

}  // namespace

Result<RepoId> ParseGitRepoPath(std::string_view path) {
  std::string_view p = path;
  if (p.starts_with('/')) p.remove_prefix(1);
  if (p.ends_with('/')) p.remove_suffix(1);
  if (p.ends_with(".git")) p.remove_suffix(4);
  std::vector<std::string_view> parts;
  while (true) {
    size_t slash = p.find('/');
    parts.push_back(p.substr(0, slash));
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  RepoType type = RepoType::Model;
  if (parts.size() == 3) {
    if (parts[0] == "models") {
      type = RepoType::Model;
    } else if (parts[0] == "datasets") {
      type = RepoType::Dataset;
    } else if (parts[0] == "spaces") {
      type = RepoType::Space;
    } else {
      return Bad("not a repository path: '" + Shown(path) + "'");
    }
    parts.erase(parts.begin());
  }
  if (parts.size() != 2) return Bad("not a repository path: '" + Shown(path) + "'");
  auto id = RepoId::Parse(type, parts[0], parts[1]);
  if (!id) return Bad("not a repository path: '" + Shown(path) + "': " + id.error().message);
  return id;
}

Result<SshCommand> ParseSshCommand(std::string_view command) {
  if (command.size() > kMaxCommand) return Bad("command too long");
  HANGAR_ASSIGN_OR_RETURN(auto words, Words(command));
  // "git upload-pack" is how some clients spell it (git's own `git-shell` accepts both).
  if (words.size() >= 2 && words[0] == "git") {
    words[1] = "git-" + words[1];
    words.erase(words.begin());
  }
  if (words.empty()) return Bad("no command");
  SshCommand out;
  size_t want_args = 1;
  const std::string& verb = words[0];
  if (verb == "git-upload-pack") {
    out.verb = SshVerb::UploadPack;
  } else if (verb == "git-receive-pack") {
    out.verb = SshVerb::ReceivePack;
  } else if (verb == "git-lfs-authenticate") {
    out.verb = SshVerb::LfsAuthenticate;
    want_args = 2;
  } else if (verb == "git-lfs-transfer") {
    out.verb = SshVerb::LfsTransfer;
    want_args = 2;
  } else {
    return Bad("unknown command '" + Shown(verb) + "'");
  }
  if (words.size() != want_args + 1) {
    return Bad("'" + verb + "' takes " +
               (want_args == 1 ? "a repository path" : "a repository path and an operation"));
  }
  HANGAR_ASSIGN_OR_RETURN(out.repo, ParseGitRepoPath(words[1]));
  if (want_args == 2) {
    if (words[2] != "upload" && words[2] != "download") {
      return Bad("operation must be 'upload' or 'download', not '" + Shown(words[2]) + "'");
    }
    out.operation = words[2];
  }
  return out;
}

}  // namespace hangar::api
