#include "git/history.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <functional>
#include <unordered_map>

#include "core/repo_id.h"
#include "core/sha256.h"
#include "git/command.h"

namespace hangar::git {

namespace {

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
// GIT_DIR is "." (the working directory), so a relative `repo` works too.
// Errors: RepoNotFound when `repo` has no HEAD.
Result<Command> Git(const std::string& repo, std::string_view subcommand) {
  struct stat st;
  if (::stat((repo + "/HEAD").c_str(), &st) != 0)
    return MakeError(ErrorCode::RepoNotFound, "repository not found");
  Command cmd(subcommand);
  cmd.Env("GIT_DIR", ".").Env("GIT_LITERAL_PATHSPECS", "1").Dir(repo).Timeout(kTimeout);
  return cmd;
}

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

// The error for a git run that exited with `code`, classified by its stderr.
Error Failed(const Command& cmd, int code, std::string_view err) {
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
Result<Captured> Capture(Command& cmd, size_t max_bytes, std::string_view input = {},
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
bool ParseNum(std::string_view s, T& out, int base = 10) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

// "<a@b>" → "a@b".
std::string_view Unbracket(std::string_view email) {
  if (email.starts_with('<') && email.ends_with('>')) return email.substr(1, email.size() - 2);
  return email;
}

Error Malformed(std::string_view what) {
  return MakeError(ErrorCode::Internal, "unexpected output from git " + std::string(what));
}

Result<Oid> ParseOid(std::string_view hex) {
  auto oid = Oid::ParseHex(hex);
  if (!oid) return Malformed("(object id '" + std::string(hex.substr(0, 64)) + "')");
  return *oid;
}

SignatureInfo FromLetter(std::string_view letter, std::string_view key, std::string_view signer) {
  using S = SignatureInfo::Status;
  SignatureInfo sig{S::Error, std::string(key), std::string(signer)};
  char c = letter.empty() ? '?' : letter.front();
  switch (c) {
    case 'N': sig.status = S::None; break;
    case 'G': case 'U': sig.status = S::Good; break;  // U: good, trust unknown
    case 'E': sig.status = S::UnknownKey; break;
    case 'B': sig.status = S::Bad; break;
    case 'X': case 'Y': sig.status = S::ExpiredKey; break;
    case 'R': sig.status = S::RevokedKey; break;
    default: break;
  }
  return sig;
}

// The verdict in gpg's machine-readable status lines ("[GNUPG:] GOODSIG <key> <uid>").
SignatureInfo FromGpgStatus(std::string_view status) {
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
    static const std::pair<std::string_view, S> kVerdicts[] = {
        {"GOODSIG", S::Good},       {"BADSIG", S::Bad},
        {"EXPSIG", S::ExpiredKey},  {"EXPKEYSIG", S::ExpiredKey},
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
Result<LogEntry> ParseEntry(std::span<const std::string_view> f, bool with_signature) {
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

std::string EntryFormat(bool with_signature) {
  std::string format = "--format=" + std::string(kEntryFormat);
  if (with_signature) format += kSignatureFormat;
  return format;
}

void AddGnupgHome(Command& cmd, const std::string& gnupg_home) {
  if (!gnupg_home.empty()) cmd.Env("GNUPGHOME", gnupg_home);
}

// A repository path as a literal pathspec: "" stays "" (everything); trailing '/' dropped.
Result<std::string> CleanPath(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.empty()) return std::string();
  HANGAR_TRY(ValidateRepoPath(path));
  return std::string(path);
}

}  // namespace

std::string_view SignatureStatusName(SignatureInfo::Status status) {
  switch (status) {
    case SignatureInfo::Status::None: return "none";
    case SignatureInfo::Status::Good: return "good";
    case SignatureInfo::Status::UnknownKey: return "unknown_key";
    case SignatureInfo::Status::Bad: return "bad";
    case SignatureInfo::Status::ExpiredKey: return "expired_key";
    case SignatureInfo::Status::RevokedKey: return "revoked_key";
    case SignatureInfo::Status::Error: return "error";
  }
  return "error";
}

Result<LogPage> Log(const std::string& repo, const Oid& start, std::string_view path,
                    size_t skip, size_t limit, const SignatureCheck& check) {
  HANGAR_ASSIGN_OR_RETURN(std::string pathspec, CleanPath(path));
  limit = std::min(limit, kMaxLogLimit);
  LogPage page;
  if (limit == 0) return page;
  // One more than asked tells whether another page follows. A plain pathspec (no
  // --follow) lets git answer from the commit-graph's changed-path Bloom filters.
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "log"));
  cmd.Arg("-z").Arg(EntryFormat(check.verify)).Arg("--no-color").Arg("--no-show-signature");
  cmd.Arg("--skip=" + std::to_string(skip)).Arg("--max-count=" + std::to_string(limit + 1));
  cmd.Arg(start.Hex()).Dashes();
  if (!pathspec.empty()) cmd.PathArg(pathspec);
  if (check.verify) AddGnupgHome(cmd, check.gnupg_home);
  cmd.MaxOutput(kMaxLogOutput);
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run());
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  Fields fields(out.stdout_data);
  const size_t n = kEntryFields + (check.verify ? kSignatureFields : 0);
  std::vector<std::string_view> f(n);
  while (!fields.empty()) {
    if (!fields.Next(f)) return Malformed("log (incomplete record)");
    if (page.entries.size() == limit) {
      page.has_more = true;
      break;
    }
    HANGAR_ASSIGN_OR_RETURN(LogEntry e, ParseEntry(f, check.verify));
    page.entries.push_back(std::move(e));
  }
  return page;
}

Result<std::vector<SignatureInfo>> VerifyCommits(const std::string& repo,
                                             std::span<const Oid> commits,
                                             const std::string& gnupg_home) {
  std::vector<SignatureInfo> result(commits.size());
  if (commits.empty()) return result;
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "log"));
  cmd.Arg("--no-walk=unsorted").Arg("-z").Arg("--format=%H" + std::string(kSignatureFormat));
  for (const Oid& c : commits) cmd.Arg(c.Hex());
  cmd.Dashes();
  AddGnupgHome(cmd, gnupg_home);
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run());
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  std::unordered_map<Oid, SignatureInfo> by_id;
  Fields fields(out.stdout_data);
  std::string_view f[1 + kSignatureFields];
  while (fields.Next(f)) {
    HANGAR_ASSIGN_OR_RETURN(Oid id, ParseOid(f[0]));
    by_id[id] = FromLetter(f[1], f[2], f[3]);
  }
  for (size_t i = 0; i < commits.size(); ++i) {
    auto it = by_id.find(commits[i]);
    if (it == by_id.end()) return Malformed("log (a commit is missing)");
    result[i] = it->second;
  }
  return result;
}

Result<uint64_t> CountCommits(const std::string& repo, const Oid& start) {
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "rev-list"));
  cmd.Arg("--count").Arg(start.Hex()).Dashes().MaxOutput(64);
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run());
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  std::string_view s(out.stdout_data);
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  uint64_t n = 0;
  if (!ParseNum(s, n)) return Malformed("rev-list --count");
  return n;
}

Result<std::optional<uint64_t>> CountCommitsAfter(const std::string& repo, const Oid& base,
                                                  const Oid& start) {
  // "<only in base>\t<only in start>": base is an ancestor exactly when the first is 0.
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "rev-list"));
  cmd.Arg("--count").Arg("--left-right").Arg(base.Hex() + "..." + start.Hex()).Dashes();
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.MaxOutput(64).Run());
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  std::string_view s(out.stdout_data);
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  size_t tab = s.find('\t');
  uint64_t left = 0, right = 0;
  if (tab == s.npos || !ParseNum(s.substr(0, tab), left) || !ParseNum(s.substr(tab + 1), right))
    return Malformed("rev-list --left-right --count");
  if (left != 0) return std::optional<uint64_t>();
  return std::optional<uint64_t>(right);
}

// ---- ShowCommit ----------------------------------------------------------------------

namespace {

// The last `limit` or fewer bytes of `text` that end at a line end.
std::string CutAtLine(std::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  size_t nl = text.rfind('\n', limit == 0 ? 0 : limit - 1);
  return nl == text.npos ? std::string() : std::string(text.substr(0, nl + 1));
}

// Reads a "--numstat -z" entry: "A\tD\tpath\0" or, for renames, "A\tD\t\0old\0new\0".
// nullopt at the empty field that ends the list, or at the end of the output.
std::optional<FileDiff> NextNumstat(Fields& fields) {
  auto f = fields.Next();
  if (!f || f->empty()) return std::nullopt;
  size_t t1 = f->find('\t'), t2 = t1 == f->npos ? f->npos : f->find('\t', t1 + 1);
  if (t2 == f->npos) return std::nullopt;
  FileDiff d;
  std::string_view add = f->substr(0, t1), del = f->substr(t1 + 1, t2 - t1 - 1);
  d.binary = add == "-" && del == "-";
  if (!d.binary) ParseNum(add, d.additions), ParseNum(del, d.deletions);
  d.path = f->substr(t2 + 1);
  if (d.path.empty()) {  // a rename: old and new path follow
    auto from = fields.Next(), to = fields.Next();
    if (!from || !to) return std::nullopt;
    d.old_path = *from, d.path = *to;
    d.change = FileDiff::Change::Renamed;
  }
  return d;
}

// Fills `d`'s change kind, modes and patch from its "diff --git" section of the patch.
void ApplySection(std::string_view section, FileDiff& d) {
  auto mode = [](std::string_view s) {
    uint32_t m = 0;
    ParseNum(s.substr(0, s.find(' ')), m, 8);
    return m;
  };
  size_t pos = 0;
  while (pos < section.size()) {
    size_t nl = section.find('\n', pos);
    std::string_view line = section.substr(pos, nl == section.npos ? nl : nl - pos);
    if (line.starts_with("@@")) {
      d.patch = section.substr(pos);
      return;
    }
    if (line.starts_with("new file mode ")) {
      d.change = FileDiff::Change::Added, d.new_mode = mode(line.substr(14));
    } else if (line.starts_with("deleted file mode ")) {
      d.change = FileDiff::Change::Deleted, d.old_mode = mode(line.substr(18));
    } else if (line.starts_with("old mode ")) {
      d.old_mode = mode(line.substr(9));
    } else if (line.starts_with("new mode ")) {
      d.new_mode = mode(line.substr(9));
    } else if (line.starts_with("index ") && Contains(line.substr(6), " ")) {
      d.old_mode = d.new_mode = mode(line.substr(line.rfind(' ') + 1));
    } else if (line.starts_with("Binary files ")) {
      d.binary = true;
    }
    if (nl == section.npos) break;
    pos = nl + 1;
  }
}

// Splits a patch into its "diff --git" sections.
std::vector<std::string_view> Sections(std::string_view patch) {
  std::vector<std::string_view> out;
  constexpr std::string_view kStart = "diff --git ";
  size_t start = patch.find(kStart);
  while (start != patch.npos) {
    size_t next = patch.find("\ndiff --git ", start);
    size_t end = next == patch.npos ? patch.size() : next + 1;
    out.push_back(patch.substr(start, end - start));
    start = next == patch.npos ? next : next + 1;
  }
  return out;
}

}  // namespace

Result<CommitDetail> ShowCommit(const std::string& repo, const Oid& commit,
                                const DiffLimits& limits, const SignatureCheck& check) {
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "show"));
  cmd.Arg("-z").Arg(EntryFormat(check.verify) + "%x00%B").Arg("--numstat").Arg("--patch");
  cmd.Arg("-M").Arg("--root").Arg("--diff-merges=first-parent").Arg("--no-color");
  cmd.Arg("--no-ext-diff").Arg("--no-textconv").Arg("--no-show-signature");
  cmd.Arg("--src-prefix=a/").Arg("--dst-prefix=b/").Arg(commit.Hex()).Dashes();
  if (check.verify) AddGnupgHome(cmd, check.gnupg_home);
  // Room for the message and the numstat list besides the patches kept.
  const size_t cap = limits.max_total_bytes + limits.max_file_bytes + (8 << 20);
  HANGAR_ASSIGN_OR_RETURN(Captured out, Capture(cmd, cap));
  if (!out.cut && out.exit_code != 0) return Failed(cmd, out.exit_code, out.err);

  Fields fields(out.out);
  const size_t n = kEntryFields + (check.verify ? kSignatureFields : 0) + 1;
  std::vector<std::string_view> f(n);
  if (!fields.Next(f)) return Malformed("show (incomplete header)");
  CommitDetail detail;
  HANGAR_ASSIGN_OR_RETURN(detail.commit, ParseEntry(f, check.verify));
  detail.message = f.back();
  fields.Skip('\n');
  std::vector<FileDiff> files;
  while (auto d = NextNumstat(fields)) files.push_back(std::move(*d));
  std::vector<std::string_view> sections = Sections(fields.rest());

  detail.total_files = files.size();
  detail.truncated = out.cut || files.size() > limits.max_files;
  size_t total = 0;
  for (size_t i = 0; i < files.size() && i < limits.max_files; ++i) {
    FileDiff& d = files[i];
    if (i < sections.size()) ApplySection(sections[i], d);
    const bool last_cut = out.cut && i + 1 >= sections.size();
    size_t room = std::min(limits.max_file_bytes, limits.max_total_bytes - total);
    if (d.patch.size() > room || last_cut) {
      d.patch = CutAtLine(d.patch, room);
      d.truncated = true;
      detail.truncated = true;
    }
    total += d.patch.size();
    detail.files.push_back(std::move(d));
  }
  return detail;
}

// ---- Blame, Grep, Archive --------------------------------------------------------------

Result<BlameResult> Blame(const std::string& repo, const Oid& commit, std::string_view path,
                          const BlameLimits& limits) {
  HANGAR_ASSIGN_OR_RETURN(std::string file, CleanPath(path));
  if (file.empty()) return MakeError(ErrorCode::BadRequest, "blame needs a file path");
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "blame"));
  cmd.Arg("--porcelain").Arg(commit.Hex()).Dashes().PathArg(file).Timeout(kBlameTimeout);
  // Porcelain output is each line plus a ~50-byte header, and ~300 bytes per commit.
  const size_t cap = limits.max_bytes + limits.max_lines * 400 + 4096;
  HANGAR_ASSIGN_OR_RETURN(Captured out, Capture(cmd, cap));
  const std::string too_large = "file is too large to blame (limit " +
                                std::to_string(limits.max_lines) + " lines, " +
                                std::to_string(limits.max_bytes) + " bytes)";
  if (out.cut) return MakeError(ErrorCode::PayloadTooLarge, too_large);
  if (out.exit_code != 0) {
    if (Contains(out.err, "no such path"))
      return MakeError(ErrorCode::EntryNotFound, "file '" + file + "' not found in commit " +
                                                     commit.Hex().substr(0, 12));
    return Failed(cmd, out.exit_code, out.err);
  }
  BlameResult result;
  std::unordered_map<Oid, uint32_t> index;
  std::string_view s(out.out);
  size_t bytes = 0;
  auto next_line = [&s]() {
    size_t nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    s.remove_prefix(nl == s.npos ? s.size() : nl + 1);
    return line;
  };
  while (!s.empty()) {
    // "<oid> <orig line> <final line>[ <lines in group>]"
    std::string_view head = next_line();
    if (head.size() < 41) return Malformed("blame (line header)");
    HANGAR_ASSIGN_OR_RETURN(Oid id, ParseOid(head.substr(0, 40)));
    BlameLine line;
    std::string_view nums = head.substr(41);
    size_t sp = nums.find(' ');
    if (!ParseNum(nums.substr(0, sp), line.orig_number)) return Malformed("blame (numbers)");
    nums.remove_prefix(sp == nums.npos ? nums.size() : sp + 1);
    if (!ParseNum(nums.substr(0, nums.find(' ')), line.number))
      return Malformed("blame (numbers)");
    auto [it, added] = index.try_emplace(id, static_cast<uint32_t>(result.commits.size()));
    if (added) result.commits.push_back(BlameCommit{id, {}, {}});
    BlameCommit& c = result.commits[it->second];
    line.commit = it->second;
    for (;;) {  // key-value lines of a commit's first appearance, then the text
      if (s.empty()) return Malformed("blame (missing line text)");
      std::string_view kv = next_line();
      if (kv.starts_with('\t')) {
        line.text = kv.substr(1);
        break;
      }
      std::string_view key = kv.substr(0, kv.find(' '));
      std::string_view value = kv.substr(std::min(kv.size(), key.size() + 1));
      if (key == "author") c.author.name = value;
      if (key == "author-time") ParseNum(value, c.author.time);
      if (key == "summary") c.summary = value;
      if (key == "author-mail") c.author.email = Unbracket(value);
    }
    bytes += line.text.size() + 1;
    result.lines.push_back(std::move(line));
    if (result.lines.size() > limits.max_lines || bytes > limits.max_bytes + 1)
      return MakeError(ErrorCode::PayloadTooLarge, too_large);
  }
  return result;
}

namespace {

// `text` cut to at most `max` bytes without splitting a UTF-8 sequence.
std::string_view CutUtf8(std::string_view text, size_t max) {
  if (text.size() <= max) return text;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

}  // namespace

Result<GrepResult> Grep(const std::string& repo, const Oid& commit, std::string_view pattern,
                        const GrepOptions& options) {
  if (pattern.empty()) return MakeError(ErrorCode::BadRequest, "the search pattern is empty");
  if (pattern.size() > kMaxPatternBytes)
    return MakeError(ErrorCode::BadRequest, "the search pattern is longer than " +
                                                std::to_string(kMaxPatternBytes) + " bytes");
  if (pattern.find_first_of(std::string_view("\n\r\0", 3)) != pattern.npos)
    return MakeError(ErrorCode::BadRequest, "the search pattern may not contain line breaks");
  HANGAR_ASSIGN_OR_RETURN(std::string pathspec, CleanPath(options.path));
  // The pattern comes on stdin (-f -): never an argument, so a leading '-' is harmless.
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "grep"));
  cmd.Arg("-n").Arg("-z").Arg("-I").Arg("--no-color").Arg("--full-name");
  cmd.Arg(options.fixed_string ? "-F" : "-E");
  if (options.ignore_case) cmd.Arg("-i");
  cmd.Arg("-f").Arg("-").Arg(commit.Hex()).Dashes();
  if (!pathspec.empty()) cmd.PathArg(pathspec);
  // Stop reading once a match past the maximum has arrived (lines end with '\n').
  size_t newlines = 0, scanned = 0;
  auto enough = [&](std::string_view out) {
    for (; scanned < out.size(); ++scanned) newlines += out[scanned] == '\n';
    return newlines > options.max_matches;
  };
  const size_t cap = (options.max_matches + 1) * (options.max_line_bytes + 4096) + (1 << 20);
  std::string input = std::string(pattern) + "\n";
  HANGAR_ASSIGN_OR_RETURN(Captured out, Capture(cmd, cap, input, enough));
  if (!out.cut && out.exit_code == 1) return GrepResult{};  // no match
  if (!out.cut && out.exit_code != 0) {
    std::string_view err(out.err);
    if (err.starts_with("fatal: ") && out.exit_code == 128 && !Contains(err, "bad object")) {
      while (!err.empty() && err.back() == '\n') err.remove_suffix(1);
      return MakeError(ErrorCode::BadRequest, "invalid search pattern: " +
                                                  std::string(err.substr(7)));
    }
    return Failed(cmd, out.exit_code, out.err);
  }
  GrepResult result;
  result.truncated = out.cut;
  const std::string prefix = commit.Hex() + ":";
  std::string_view s(out.out);
  for (;;) {  // "<commit>:<path>\0<line>\0<text>\n"
    size_t nul1 = s.find('\0');
    size_t nul2 = nul1 == s.npos ? s.npos : s.find('\0', nul1 + 1);
    size_t nl = nul2 == s.npos ? s.npos : s.find('\n', nul2 + 1);
    if (nl == s.npos) break;  // the end, or a record cut by the bound
    if (result.matches.size() == options.max_matches) {
      result.truncated = true;
      break;
    }
    GrepMatch m;
    std::string_view name = s.substr(0, nul1);
    if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
    m.path = name;
    if (!ParseNum(s.substr(nul1 + 1, nul2 - nul1 - 1), m.line)) return Malformed("grep");
    std::string_view text = s.substr(nul2 + 1, nl - nul2 - 1);
    std::string_view kept = CutUtf8(text, options.max_line_bytes);
    m.text = kept;
    m.text_truncated = kept.size() < text.size();
    result.matches.push_back(std::move(m));
    s.remove_prefix(nl + 1);
  }
  return result;
}

Result<std::unique_ptr<ByteSource>> Archive(const std::string& repo, const Oid& commit,
                                            ArchiveFormat format, std::string_view prefix) {
  if (prefix.size() < 2 || prefix.back() != '/')
    return MakeError(ErrorCode::BadRequest, "archive prefix must end with '/'");
  HANGAR_TRY(ValidateRepoPath(prefix.substr(0, prefix.size() - 1)));
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "archive"));
  cmd.Arg(format == ArchiveFormat::Zip ? "--format=zip" : "--format=tar.gz");
  cmd.Arg("--prefix=" + std::string(prefix)).Arg(commit.Hex()).Timeout(kArchiveTimeout);
  HANGAR_ASSIGN_OR_RETURN(auto proc, cmd.Start());
  proc->CloseStdin();
  return std::unique_ptr<ByteSource>(std::make_unique<ProcessSource>(std::move(proc)));
}

// ---- Refs and tags ----------------------------------------------------------------------

namespace {

constexpr std::string_view kRefFormat =
    "--format=%(refname)%00%(objecttype)%00%(objectname)%00%(*objecttype)%00"
    "%(*objectname)%00%(committerdate:unix)%00%(*committerdate:unix)%00"
    "%(contents:subject)%00%(*contents:subject)%00%(taggername)%00%(taggeremail)%00"
    "%(taggerdate:unix)%00";
constexpr size_t kRefFields = 12;

// A tag name as git check-ref-format would take it under refs/tags/.
Result<void> ValidateTagName(std::string_view name) {
  auto bad = [&](std::string_view why) {
    return MakeError(ErrorCode::BadRequest, "invalid tag name: " + std::string(why));
  };
  if (name.empty() || name.size() > 255) return bad("it must be 1 to 255 bytes");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || std::string_view(" ~^:?*[\\").find(c) != std::string_view::npos)
      return bad("it contains a character git does not allow in ref names");
  }
  if (name.front() == '-' || name.front() == '/' || name.back() == '/' || name.back() == '.' ||
      Contains(name, "..") || Contains(name, "//") || Contains(name, "@{") ||
      name.ends_with(".lock"))
    return bad("it is not a valid ref name");
  return {};
}

}  // namespace

Result<std::vector<RefInfo>> ListRefs(const std::string& repo) {
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "for-each-ref"));
  cmd.Arg(kRefFormat).Arg("--sort=refname").MaxOutput(kMaxLogOutput);
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run());
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  std::vector<RefInfo> refs;
  Fields fields(out.stdout_data);
  std::string_view f[kRefFields];
  for (;;) {
    fields.Skip('\n');  // each record ends with a newline after its last field
    if (!fields.Next(f)) break;
    RefInfo r;
    r.name = f[0];
    r.annotated = f[1] == "tag";
    HANGAR_ASSIGN_OR_RETURN(r.object, ParseOid(f[2]));
    std::string_view type = r.annotated ? f[3] : f[1];
    if (type != "commit") continue;  // refs to trees and blobs
    HANGAR_ASSIGN_OR_RETURN(r.commit, r.annotated ? ParseOid(f[4]) : Result<Oid>(r.object));
    ParseNum(r.annotated ? f[6] : f[5], r.commit_time);
    r.subject = r.annotated ? f[8] : f[7];
    if (r.annotated) {
      r.tag_subject = f[7];
      Person tagger{std::string(f[9]), std::string(Unbracket(f[10])), 0};
      ParseNum(f[11], tagger.time);
      r.tagger = std::move(tagger);
    }
    refs.push_back(std::move(r));
  }
  return refs;
}

Result<std::string> RefsVersion(const std::string& repo) {
  namespace fs = std::filesystem;
  // Every ref update renames a new file into place, so a changed ref changes its entry.
  auto identity = [](const std::string& path, std::string& out) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return;
    out += path + '\0' + std::to_string(st.st_ino) + ' ' + std::to_string(st.st_size) + ' ' +
           std::to_string(st.st_ctim.tv_sec) + '.' + std::to_string(st.st_ctim.tv_nsec) + ' ' +
           std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec) + '\n';
  };
  std::error_code ec;
  if (!fs::is_directory(repo + "/refs", ec))
    return MakeError(ErrorCode::RepoNotFound, "repository not found");
  std::vector<std::string> loose;
  for (fs::recursive_directory_iterator it(repo + "/refs", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file(ec)) loose.push_back(it->path().string());
  }
  if (ec) return MakeError(ErrorCode::Internal, "listing refs of " + repo + ": " + ec.message());
  std::sort(loose.begin(), loose.end());
  std::string state;
  identity(repo + "/packed-refs", state);
  for (const auto& path : loose) identity(path, state);
  return Sha256::Of(state).Hex();
}

Result<TagInfo> ShowTag(const std::string& repo, std::string_view name,
                        const SignatureCheck& check) {
  HANGAR_TRY(ValidateTagName(name));
  const std::string ref = "refs/tags/" + std::string(name);
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "for-each-ref"));
  cmd.Arg(
      "--format=%(refname)%00%(objecttype)%00%(objectname)%00%(object)%00%(type)%00"
      "%(taggername)%00%(taggeremail)%00%(taggerdate:unix)%00%(contents)%00"
      "%(contents:signature)%00");
  cmd.EndOfOptions().UserArg(ref).MaxOutput(kMaxLogOutput);
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run());
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  // The pattern also matches refs below it ("v1/x"): take the exact one.
  Fields fields(out.stdout_data);
  std::string_view f[10];
  bool found = false;
  for (fields.Skip('\n'); fields.Next(f); fields.Skip('\n')) {
    if (f[0] == ref) {
      found = true;
      break;
    }
  }
  if (!found)
    return MakeError(ErrorCode::RevisionNotFound, "tag '" + std::string(name) + "' not found");
  if (f[1] != "tag")
    return MakeError(ErrorCode::RevisionNotFound,
                     "tag '" + std::string(name) + "' is a lightweight tag, not an annotated one");
  TagInfo tag;
  tag.name = name;
  HANGAR_ASSIGN_OR_RETURN(tag.id, ParseOid(f[2]));
  HANGAR_ASSIGN_OR_RETURN(tag.target, ParseOid(f[3]));
  tag.target_type = f[4];
  tag.tagger = Person{std::string(f[5]), std::string(Unbracket(f[6])), 0};
  ParseNum(f[7], tag.tagger.time);
  std::string_view message = f[8], signature = f[9];
  if (!signature.empty() && message.ends_with(signature)) message.remove_suffix(signature.size());
  tag.message = message;
  if (!check.verify) return tag;
  if (signature.empty()) {
    tag.signature = SignatureInfo{};
    return tag;
  }
  // gpg's status lines come on stderr; exit status 1 just means "not good".
  HANGAR_ASSIGN_OR_RETURN(Command verify, Git(repo, "verify-tag"));
  verify.Arg("--raw").Arg(tag.id.Hex()).MaxOutput(1 << 20);
  AddGnupgHome(verify, check.gnupg_home);
  HANGAR_ASSIGN_OR_RETURN(Output v, verify.Run());
  tag.signature = FromGpgStatus(v.stderr_data);
  return tag;
}

}  // namespace hangar::git
