#pragma once
// Helpers shared by git/history.cc and git/history_diff.cc: running git with bounded
// output, NUL-separated fields, and parsing of log entries and signatures. Not part of
// the public API.

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/repo_path.h"
#include "git/command.h"
#include "git/history.h"

namespace hangar::git::history_internal {

using namespace std::chrono_literals;

constexpr auto kTimeout = 30s;
constexpr auto kBlameTimeout = 120s;
constexpr auto kArchiveTimeout = 3600s;  // the whole download, at the client's pace
constexpr size_t kMaxLogOutput = 32 << 20;
constexpr size_t kMaxPatternBytes = 1000;

// Fields of a LogEntry as NUL-separated placeholders, then the optional signature ones.
constexpr std::string_view kEntryFormat =
    "%H%x00%P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%s";
constexpr size_t kEntryFields = 9;
constexpr std::string_view kSignatureFormat = "%x00%G?%x00%GK%x00%GS";
constexpr size_t kSignatureFields = 3;

// A git command run inside bare repository `repo`, literal pathspecs, default timeout.
// GIT_DIR is "." (the working directory), so a relative `repo` works too. The server
// account's global and system git config are ignored: a `git lfs install` there would make
// git archive run the LFS smudge filter (which fails in a bare repo) on LFS files.
// Errors: RepoNotFound when `repo` has no HEAD.
inline Result<Command> Git(const std::string& repo, std::string_view subcommand) {
  struct stat st;
  if (::stat((repo + "/HEAD").c_str(), &st) != 0)
    return MakeError(ErrorCode::RepoNotFound, "repository not found");
  Command cmd(subcommand);
  cmd.Env("GIT_DIR", ".")
      .Env("GIT_LITERAL_PATHSPECS", "1")
      .Env("GIT_CONFIG_GLOBAL", "/dev/null")
      .Env("GIT_CONFIG_NOSYSTEM", "1")
      .Dir(repo)
      .Timeout(kTimeout);
  return cmd;
}

inline bool Contains(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

// The error for a git run that exited with `code`, classified by its stderr.
inline Error Failed(const Command& cmd, int code, std::string_view err) {
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.remove_suffix(1);
  if (Contains(err, "not a git repository"))
    return MakeError(ErrorCode::RepoNotFound, "repository not found");
  if (Contains(err, "bad object") || Contains(err, "unknown revision") ||
      Contains(err, "bad revision") || Contains(err, "not a valid object name") ||
      Contains(err, "Not a valid object name"))
    return MakeError(ErrorCode::RevisionNotFound, "commit not found in the repository");
  return MakeError(ErrorCode::Internal, cmd.ToString() + " exited with status " +
                                            std::to_string(code) + ": " + std::string(err));
}

// Stdout of a streamed run, read up to a bound.
struct Captured {
  std::string out;
  std::string err;
  int exit_code = 0;
  bool cut = false;  // reading stopped early (bound or `enough`); the child was killed
};

// Runs `cmd` with `input` on stdin and reads at most `max_bytes` of stdout, stopping early
// once `enough(out)` is true. Unlike Command::Run, hitting the bound is not an error.
inline Result<Captured> Capture(Command& cmd, size_t max_bytes, std::string_view input = {},
                                const std::function<bool(std::string_view)>& enough = nullptr) {
  HANGAR_ASSIGN_OR_RETURN(auto proc, cmd.Start());
  if (!input.empty()) HANGAR_TRY(proc->WriteStdin(input));
  proc->CloseStdin();
  Captured c;
  char buf[64 << 10];
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, proc->ReadStdout(buf));
    if (n == 0) break;
    size_t take = std::min(n, max_bytes - c.out.size());
    c.out.append(buf, take);
    if (take < n || (enough && enough(c.out))) {
      c.cut = true;
      proc->Kill();
      break;
    }
  }
  HANGAR_ASSIGN_OR_RETURN(c.exit_code, proc->Wait());
  c.err = proc->Stderr();
  return c;
}

// Reads NUL-terminated fields off a buffer.
class Fields {
 public:
  explicit Fields(std::string_view s) : s_(s) {}
  // The next field; nullopt when no complete field is left.
  std::optional<std::string_view> Next() {
    size_t nul = s_.find('\0');
    if (nul == s_.npos) return std::nullopt;
    std::string_view f = s_.substr(0, nul);
    s_.remove_prefix(nul + 1);
    return f;
  }
  // Fills `out` with the next out.size() fields; false when they are not all there.
  bool Next(std::span<std::string_view> out) {
    for (auto& f : out) {
      auto n = Next();
      if (!n) return false;
      f = *n;
    }
    return true;
  }
  void Skip(char c) {
    while (!s_.empty() && s_.front() == c) s_.remove_prefix(1);
  }
  bool empty() const { return s_.empty(); }
  std::string_view rest() const { return s_; }

 private:
  std::string_view s_;
};

template <typename T>
inline bool ParseNum(std::string_view s, T& out, int base = 10) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// "<a@b>" → "a@b".
inline std::string_view Unbracket(std::string_view email) {
  if (email.starts_with('<') && email.ends_with('>')) return email.substr(1, email.size() - 2);
  return email;
}

inline Error Malformed(std::string_view what) {
  return MakeError(ErrorCode::Internal, "unexpected output from git " + std::string(what));
}

inline Result<Oid> ParseOid(std::string_view hex) {
  auto oid = Oid::ParseHex(hex);
  if (!oid) return Malformed("(object id '" + std::string(hex.substr(0, 64)) + "')");
  return *oid;
}

inline SignatureInfo FromLetter(std::string_view letter, std::string_view key,
                                std::string_view signer) {
  using S = SignatureInfo::Status;
  SignatureInfo sig{S::Error, std::string(key), std::string(signer)};
  char c = letter.empty() ? '?' : letter.front();
  switch (c) {
    case 'N':
      sig.status = S::None;
      break;
    case 'G':
    case 'U':
      sig.status = S::Good;
      break;  // U: good, trust unknown
    case 'E':
      sig.status = S::UnknownKey;
      break;
    case 'B':
      sig.status = S::Bad;
      break;
    case 'X':
    case 'Y':
      sig.status = S::ExpiredKey;
      break;
    case 'R':
      sig.status = S::RevokedKey;
      break;
    default:
      break;
  }
  return sig;
}

// The verdict in gpg's machine-readable status lines ("[GNUPG:] GOODSIG <key> <uid>").
inline SignatureInfo FromGpgStatus(std::string_view status) {
  using S = SignatureInfo::Status;
  constexpr std::string_view kPrefix = "[GNUPG:] ";
  SignatureInfo sig{S::Error, "", ""};
  bool no_pubkey = false, errsig = false;
  while (!status.empty()) {
    size_t nl = status.find('\n');
    std::string_view line = status.substr(0, nl);
    status.remove_prefix(nl == status.npos ? status.size() : nl + 1);
    if (!line.starts_with(kPrefix)) continue;
    line.remove_prefix(kPrefix.size());
    std::string_view word = line.substr(0, line.find(' '));
    std::string_view args = line.substr(std::min(line.size(), word.size() + 1));
    std::string_view key = args.substr(0, args.find(' '));
    std::string_view uid = args.substr(std::min(args.size(), key.size() + 1));
    static const std::pair<std::string_view, S> kVerdicts[] = {{"GOODSIG", S::Good},
                                                               {"BADSIG", S::Bad},
                                                               {"EXPSIG", S::ExpiredKey},
                                                               {"EXPKEYSIG", S::ExpiredKey},
                                                               {"REVKEYSIG", S::RevokedKey}};
    for (const auto& [w, s] : kVerdicts) {
      if (word == w) return SignatureInfo{s, std::string(key), std::string(uid)};
    }
    if (word == "ERRSIG") errsig = true, sig.key_id = key;
    if (word == "NO_PUBKEY") no_pubkey = true, sig.key_id = key;
  }
  if (no_pubkey || errsig) sig.status = no_pubkey ? S::UnknownKey : S::Error;
  return sig;
}

// A LogEntry from kEntryFormat's fields (then kSignatureFormat's, when `with_signature`).
inline Result<LogEntry> ParseEntry(std::span<const std::string_view> f, bool with_signature) {
  LogEntry e;
  HANGAR_ASSIGN_OR_RETURN(e.id, ParseOid(f[0]));
  std::string_view parents = f[1];
  while (!parents.empty()) {
    std::string_view p = parents.substr(0, parents.find(' '));
    HANGAR_ASSIGN_OR_RETURN(Oid parent, ParseOid(p));
    e.parents.push_back(parent);
    parents.remove_prefix(std::min(parents.size(), p.size() + 1));
  }
  e.author = Person{std::string(f[2]), std::string(f[3]), 0};
  e.committer = Person{std::string(f[5]), std::string(f[6]), 0};
  if (!ParseNum(f[4], e.author.time) || !ParseNum(f[7], e.committer.time))
    return Malformed("log (dates)");
  e.subject = f[8];
  if (with_signature) e.signature = FromLetter(f[9], f[10], f[11]);
  return e;
}

// The subject git log's %s prints for commit message `message`: leading blank lines
// skipped, the first paragraph's lines trimmed at their ends and joined by one space.
std::string LogSubject(std::string_view message);

// The LogEntry of each of `commits` (no signature), read in process as git log's
// kEntryFormat prints them; nullopt when git must render them (a commit missing or
// unreadable, a message in another encoding than UTF-8). log_entries.cc.
std::optional<std::vector<LogEntry>> ReadLogEntries(const std::string& repo,
                                                    std::span<const Oid> commits);

// The message of `commit` as stored, its first kMaxShownMessage bytes (git2_util.h);
// nullopt when it cannot be read in process. log_entries.cc.
std::optional<std::string> ReadCommitMessage(const std::string& repo, const Oid& commit);

inline std::string EntryFormat(bool with_signature) {
  std::string format = "--format=" + std::string(kEntryFormat);
  if (with_signature) format += kSignatureFormat;
  return format;
}

inline void AddGnupgHome(Command& cmd, const std::string& gnupg_home) {
  if (!gnupg_home.empty()) cmd.Env("GNUPGHOME", gnupg_home);
}

// `text` cut to at most `max` bytes without splitting a UTF-8 sequence.
inline std::string_view CutUtf8(std::string_view text, size_t max) {
  if (text.size() <= max) return text;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

// A repository path as a literal pathspec: "" stays "" (everything); trailing '/' dropped.
inline Result<std::string> CleanPath(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return std::string();
  HANGAR_TRY(ValidateReadPath(path));
  return std::string(path);
}

}  // namespace hangar::git::history_internal
