// ShowCommit, Blame, Grep and Archive (git/history.h); the log and refs are in history.cc.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <unordered_map>
#include <vector>

#include "git/history.h"
#include "git/history_internal.h"
#include "git/search_snapshot.h"

namespace hangar::git {

using namespace history_internal;

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

// Reads the numstat list and the patch that follows it from `fields` into detail.files,
// bounded by `limits`; `cut` says git's output was cut short.
void FillFiles(Fields& fields, bool cut, const DiffLimits& limits, CommitDetail& detail) {
  std::vector<FileDiff> files;
  while (auto d = NextNumstat(fields)) files.push_back(std::move(*d));
  std::vector<std::string_view> sections = Sections(fields.rest());
  detail.total_files = files.size();
  detail.truncated = cut || files.size() > limits.max_files;
  size_t total = 0;
  for (size_t i = 0; i < files.size() && i < limits.max_files; ++i) {
    FileDiff& d = files[i];
    if (i < sections.size()) ApplySection(sections[i], d);
    const bool last_cut = cut && i + 1 >= sections.size();
    size_t room = std::min(limits.max_file_bytes, limits.max_total_bytes - total);
    if (d.patch.size() > room || last_cut) {
      d.patch = CutAtLine(d.patch, room);
      d.truncated = true;
      detail.truncated = true;
    }
    total += d.patch.size();
    detail.files.push_back(std::move(d));
  }
}

}  // namespace

Result<CommitDetail> ShowCommit(const std::string& repo, const Oid& commit,
                                const DiffLimits& limits, const SignatureCheck& check) {
  // The commit and its message are read in process when they can be (a message only as
  // far as Hangar shows it, whatever a push brought: git2_util.h); git then prints only
  // the id, the signature check when asked, and the diff.
  std::optional<std::vector<LogEntry>> entry;
  std::optional<std::string> message;
  entry = ReadLogEntries(repo, std::span<const Oid>(&commit, 1));
  if (entry) message = ReadCommitMessage(repo, commit);
  const bool in_process = entry && message;
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "show"));
  cmd.Arg("-z")
      .Arg(in_process ? "--format=%H" + std::string(check.verify ? kSignatureFormat : "") + "%x00"
                      : EntryFormat(check.verify) + "%x00%B")
      .Arg("--numstat")
      .Arg("--patch");
  cmd.Arg("-M").Arg("--root").Arg("--diff-merges=first-parent").Arg("--no-color");
  cmd.Arg("--no-ext-diff").Arg("--no-textconv").Arg("--no-show-signature");
  cmd.Arg("--src-prefix=a/").Arg("--dst-prefix=b/").Arg(commit.Hex()).Dashes();
  if (check.verify) AddGnupgHome(cmd, check.gnupg_home);
  // Room for the message and the numstat list besides the patches kept.
  const size_t cap = limits.max_total_bytes + limits.max_file_bytes + (8 << 20);
  HANGAR_ASSIGN_OR_RETURN(Captured out, Capture(cmd, cap));
  if (!out.cut && out.exit_code != 0) return Failed(cmd, out.exit_code, out.err);

  Fields fields(out.out);
  const size_t sig = check.verify ? kSignatureFields : 0;
  const size_t n = (in_process ? 1 : kEntryFields) + sig + 1;
  std::vector<std::string_view> f(n);
  if (!fields.Next(f)) return Malformed("show (incomplete header)");
  CommitDetail detail;
  if (in_process) {
    detail.commit = std::move((*entry)[0]);
    detail.message = std::move(*message);
    if (check.verify) detail.commit.signature = FromLetter(f[1], f[2], f[3]);
  } else {
    HANGAR_ASSIGN_OR_RETURN(detail.commit, ParseEntry(f, check.verify));
    detail.message = f.back();
  }
  fields.Skip('\n');
  FillFiles(fields, out.cut, limits, detail);
  return detail;
}

Result<CommitDetail> CompareCommits(const std::string& repo, const Oid& base, const Oid& head,
                                    const DiffLimits& limits) {
  CommitDetail detail;
  // Head's entry when it reads in process (else only its id: the diff is what matters).
  auto entry = ReadLogEntries(repo, std::span<const Oid>(&head, 1));
  if (entry) detail.commit = std::move((*entry)[0]);
  detail.commit.id = head;
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "diff"));
  cmd.Arg("-z").Arg("--numstat").Arg("--patch").Arg("-M").Arg("--no-color");
  cmd.Arg("--no-ext-diff").Arg("--no-textconv");
  cmd.Arg("--src-prefix=a/").Arg("--dst-prefix=b/").Arg(base.Hex() + "..." + head.Hex()).Dashes();
  const size_t cap = limits.max_total_bytes + limits.max_file_bytes + (8 << 20);
  HANGAR_ASSIGN_OR_RETURN(Captured out, Capture(cmd, cap));
  if (!out.cut && out.exit_code != 0) {
    // A commit it does not know, or two without a merge base.
    if (Contains(out.err, "Invalid symmetric difference") || Contains(out.err, "no merge base") ||
        Contains(out.err, "bad revision") || Contains(out.err, "unknown revision")) {
      return MakeError(ErrorCode::RevisionNotFound,
                       "no common history between " + base.Hex() + " and " + head.Hex());
    }
    return Failed(cmd, out.exit_code, out.err);
  }
  Fields fields(out.out);
  FillFiles(fields, out.cut, limits, detail);
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
      return MakeError(ErrorCode::EntryNotFound,
                       "file '" + file + "' not found in commit " + commit.Hex().substr(0, 12));
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
    if (!ParseNum(nums.substr(0, nums.find(' ')), line.number)) return Malformed("blame (numbers)");
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

// git grep -E copies out bounded repetitions (glibc regex), so "((.*){99}){99}" costs
// minutes of CPU and "((a*)*){30000}" crashes git. A pattern's cost here is its length with
// each "{m,n}" counting its operand max(m, n) times, nested counts multiplied; it may
// exceed the length by kMaxRegexCopies.
constexpr uint64_t kMaxRegexCopies = 256;

Result<void> CheckRegexCost(std::string_view re) {
  auto too_costly = [] {
    return MakeError(ErrorCode::BadRequest,
                     "the regular expression repeats too much: {m,n} may add at most " +
                         std::to_string(kMaxRegexCopies) + " copies in all");
  };
  std::vector<uint64_t> opened;  // cost before each open '('
  uint64_t cost = 0, last = 0;   // total so far; cost of the last atom or group
  for (size_t i = 0; i < re.size(); ++i) {
    char c = re[i];
    if (c == '\\') {
      ++i;
      last = 1;
    } else if (c == '[') {  // a bracket expression is one atom
      size_t j = i + 1;
      if (j < re.size() && re[j] == '^') ++j;
      if (j < re.size() && re[j] == ']') ++j;
      while (j < re.size() && re[j] != ']') {  // [:alpha:] inside does not end it
        size_t close = re.compare(j, 2, "[:") == 0 ? re.find(":]", j + 2) : re.npos;
        j = close == re.npos ? j + 1 : close + 2;
      }
      i = j;
      last = 1;
    } else if (c == '(') {
      opened.push_back(cost);
      continue;
    } else if (c == ')' && !opened.empty()) {
      last = cost - opened.back();
      cost = opened.back();
      opened.pop_back();
    } else if (c == '{') {
      size_t end = re.find('}', i);
      if (end == re.npos) {
        last = 1;
      } else {
        uint64_t n = 0, max = 0;
        for (size_t j = i + 1; j < end; ++j) {
          if (re[j] >= '0' && re[j] <= '9')
            n = std::min<uint64_t>(n * 10 + (re[j] - '0'), 1 << 20);
          else
            n = 0;
          max = std::max(max, n);
        }
        cost -= last;  // the operand, now counted max times
        last *= std::max<uint64_t>(max, 1);
        i = end;
      }
    } else {
      last = 1;
    }
    cost += last;
    if (cost > re.size() + kMaxRegexCopies) return too_costly();
  }
  return {};
}

}  // namespace

// How long a search of a snapshot may run before it answers Unavailable.
constexpr std::chrono::seconds kSnapshotSearchTime{10};

Result<GrepResult> Grep(const std::string& repo, const Oid& commit, std::string_view pattern,
                        const GrepOptions& options) {
  if (pattern.empty()) return MakeError(ErrorCode::BadRequest, "the search pattern is empty");
  if (pattern.size() > kMaxPatternBytes)
    return MakeError(ErrorCode::BadRequest, "the search pattern is longer than " +
                                                std::to_string(kMaxPatternBytes) + " bytes");
  if (pattern.find_first_of(std::string_view("\n\r\0", 3)) != pattern.npos)
    return MakeError(ErrorCode::BadRequest, "the search pattern may not contain line breaks");
  if (!options.fixed_string) HANGAR_TRY(CheckRegexCost(pattern));
  HANGAR_ASSIGN_OR_RETURN(std::string pathspec, CleanPath(options.path));
  // The tree's search snapshot answers when it can (search_snapshot.h). Not when the
  // repository has info/attributes: git grep -I would honour their binary settings.
  std::error_code ec;
  if (std::filesystem::file_size(repo + "/info/attributes", ec) == 0 || ec) {
    auto snap = SearchSnapshot::Open(repo, commit);
    if (snap) {
      GrepOptions scoped = options;
      scoped.path = pathspec;
      HANGAR_ASSIGN_OR_RETURN(
          auto found,
          (*snap)->Search(pattern, scoped, std::chrono::steady_clock::now() + kSnapshotSearchTime));
      if (found) return std::move(*found);
      // Else a backreference or a very long line: git grep answers, under its timeout.
    } else if (snap.error().code == ErrorCode::BadRequest) {
      return std::move(snap).error();
    }
  }
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
      return MakeError(ErrorCode::BadRequest,
                       "invalid search pattern: " + std::string(err.substr(7)));
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

}  // namespace hangar::git
