#include "git/history.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "core/sha256.h"
#include "core/util.h"
#include "git/history_internal.h"
#include "git/path_log.h"

namespace hangar::git {

using namespace history_internal;

std::string_view SignatureStatusName(SignatureInfo::Status status) {
  switch (status) {
    case SignatureInfo::Status::None:
      return "none";
    case SignatureInfo::Status::Good:
      return "good";
    case SignatureInfo::Status::UnknownKey:
      return "unknown_key";
    case SignatureInfo::Status::Bad:
      return "bad";
    case SignatureInfo::Status::ExpiredKey:
      return "expired_key";
    case SignatureInfo::Status::RevokedKey:
      return "revoked_key";
    case SignatureInfo::Status::Error:
      return "error";
  }
  return "error";
}

namespace {

// Up to `count` commits of the history of `start` after the first `skip`, newest first, as
// `git log` would list them.
Result<std::vector<Oid>> RevList(const std::string& repo, const Oid& start, size_t skip,
                                 size_t count) {
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "rev-list"));
  cmd.Arg("--skip=" + std::to_string(skip)).Arg("--max-count=" + std::to_string(count));
  cmd.Arg(start.Hex()).Dashes();
  HANGAR_ASSIGN_OR_RETURN(Output out, cmd.Run());
  if (!out.ok()) return Failed(cmd, out.exit_code, out.stderr_data);
  std::vector<Oid> ids;
  size_t pos = 0;
  while (pos < out.stdout_data.size()) {
    std::string_view line = NextLine(out.stdout_data, pos);
    auto id = Oid::ParseHex(line);
    if (!id) return Malformed("rev-list (not a commit id)");
    ids.push_back(*id);
  }
  return ids;
}

}  // namespace

Result<LogPage> Log(const std::string& repo, const Oid& start, std::string_view path, size_t skip,
                    size_t limit, const SignatureCheck& check) {
  HANGAR_ASSIGN_OR_RETURN(std::string pathspec, CleanPath(path));
  limit = std::min(limit, kMaxLogLimit);
  LogPage page;
  if (limit == 0) return page;
  // One more than asked tells whether another page follows. A path's history comes from
  // the commit-graph walk (git/path_log.h) when the repository allows it; those commits
  // are then read in process (ReadLogEntries), or rendered by git in the given order when
  // signatures are checked or a message needs re-encoding. Else git log walks (and uses
  // the Bloom filters too, but pays ~3 µs per commit of the whole history for a rare path).
  std::optional<std::vector<Oid>> found;
  if (!pathspec.empty()) found = PathLog(repo, start, pathspec, skip, limit + 1);
  // The whole history too is read in process when it can: then a commit message is read
  // only as far as Hangar shows it (git2_util.h BoundedMessage), whatever a push brought.
  if (pathspec.empty() && !check.verify) {
    HANGAR_ASSIGN_OR_RETURN(found, RevList(repo, start, skip, limit + 1));
  }
  if (found && found->empty()) return page;
  if (found && !check.verify) {  // rendered in process when possible: no git child
    const size_t shown = std::min(found->size(), limit);
    if (auto entries = ReadLogEntries(repo, std::span<const Oid>(found->data(), shown))) {
      page.entries = std::move(*entries);
      page.has_more = found->size() > limit;
      return page;
    }
  }
  HANGAR_ASSIGN_OR_RETURN(Command cmd, Git(repo, "log"));
  cmd.Arg("-z").Arg(EntryFormat(check.verify)).Arg("--no-color").Arg("--no-show-signature");
  if (found) {
    page.has_more = found->size() > limit;
    if (page.has_more) found->pop_back();
    cmd.Arg("--no-walk=unsorted");
    for (const Oid& c : *found) cmd.Arg(c.Hex());
    cmd.Dashes();
  } else {
    cmd.Arg("--skip=" + std::to_string(skip)).Arg("--max-count=" + std::to_string(limit + 1));
    cmd.Arg(start.Hex()).Dashes();
    if (!pathspec.empty()) cmd.PathArg(pathspec);
  }
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
  if (found && page.entries.size() != found->size()) return Malformed("log (a commit is missing)");
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

// ---- Refs and tags ----------------------------------------------------------------------

namespace {

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
