#include "services/content/commit_service.h"

#include <fnmatch.h>

#include <algorithm>
#include <ctime>

#include "core/repo_path.h"
#include "core/util.h"
#include "git/commit_builder.h"
#include "git/gitmodules.h"
#include "git/pointer.h"
#include "git/ref_writer.h"

namespace hangar::services {

namespace {

constexpr uint64_t kMaxGitattributes = 1 << 20;
constexpr uint64_t kMaxGitmodules = 1 << 20;  // a copy's source checked as .gitmodules
constexpr size_t kMaxPreuploadFiles = 10000;

bool PatternMatches(std::string pattern, std::string_view path) {
  if (!pattern.empty() && pattern.front() == '/') pattern.erase(0, 1);
  std::string p(path);
  if (pattern.ends_with("/**")) {
    std::string dir = pattern.substr(0, pattern.size() - 3);
    return p.starts_with(dir + "/");
  }
  if (pattern.find('/') == std::string::npos) {
    size_t slash = p.rfind('/');
    std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
    return fnmatch(pattern.c_str(), base.c_str(), 0) == 0;
  }
  return fnmatch(pattern.c_str(), p.c_str(), FNM_PATHNAME) == 0;
}

}  // namespace

bool MatchesLfsAttribute(std::string_view gitattributes, std::string_view path) {
  bool lfs = false;
  size_t pos = 0;
  while (pos < gitattributes.size()) {
    std::string_view line = NextLine(gitattributes, pos);
    std::vector<std::string> words;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) words.emplace_back(line.substr(start, i - start));
    }
    if (words.size() < 2 || words[0].starts_with("#")) continue;
    std::optional<bool> says;
    for (size_t w = 1; w < words.size(); ++w) {
      const std::string& word = words[w];
      if (word == "filter=lfs") {
        says = true;
      } else if (word == "-filter" || word == "!filter" || word.starts_with("filter=")) {
        says = false;
      }
    }
    if (says && PatternMatches(words[0], path)) lfs = *says;
  }
  return lfs;
}

CommitService::CommitService(RepoService& repos, ContentService& content, LfsService& lfs)
    : repos_(repos), content_(content), lfs_(lfs) {}

Result<std::vector<PreuploadAnswer>> CommitService::Preupload(
    const Principal& who, const RepoId& id, std::string_view revision,
    const std::vector<PreuploadFile>& files, const std::optional<std::string>& git_attributes) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, repos_.Open(who, id, Access::Write));
  if (files.size() > kMaxPreuploadFiles) {
    return MakeError(ErrorCode::BadRequest, "too many files (max 10000)");
  }
  for (const auto& f : files) HANGAR_TRY(ValidateRepoPath(f.path));
  HANGAR_ASSIGN_OR_RETURN(auto commit, content_.ResolveRevision(repo, revision));
  std::string attributes;
  if (git_attributes) {
    attributes = *git_attributes;
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto text,
                            content_.ReadText(repo, commit, ".gitattributes", kMaxGitattributes));
    if (text) attributes = std::move(*text);
  }
  std::vector<PreuploadAnswer> out;
  out.reserve(files.size());
  for (const auto& f : files) {
    PreuploadAnswer a;
    a.path = f.path;
    a.lfs = f.size >= kLfsSizeThreshold || f.sample.find('\0') != std::string::npos ||
            MatchesLfsAttribute(attributes, f.path);
    auto existing = content_.Stat(repo, commit, f.path);
    if (existing) {
      a.oid = existing->git.oid;
    } else if (existing.error().code != ErrorCode::EntryNotFound) {
      return std::move(existing).error();
    }
    out.push_back(std::move(a));
  }
  return out;
}

namespace {

// Whether the last component of `path` is a .gitmodules file on some filesystem.
bool IsGitmodulesPath(std::string_view path) {
  size_t slash = path.rfind('/');
  return IsGitmodulesName(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// "refs/pr/<digits>".
bool IsPullRequestRef(std::string_view ref) {
  if (!ref.starts_with("refs/pr/")) return false;
  ref.remove_prefix(8);
  return !ref.empty() && ref.size() <= 9 &&
         std::all_of(ref.begin(), ref.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

Result<git::TreeChange> CommitService::Change(const RepoHandle& repo, const std::string& branch,
                                              CommitOperation& op) {
  HANGAR_TRY(ValidateRepoPath(op.path));
  git::TreeChange c;
  c.path = op.path;
  switch (op.kind) {
    case CommitOperation::Kind::File:
      if (IsGitmodulesPath(op.path)) HANGAR_TRY(git::CheckGitmodules(op.content));
      c.content = std::move(op.content);
      break;
    case CommitOperation::Kind::LfsFile: {
      // A .gitmodules is read by git, never smudged: it is a file, checked, or nothing.
      if (IsGitmodulesPath(op.path)) {
        return MakeError(ErrorCode::BadRequest, "invalid .gitmodules: it cannot be an LFS file");
      }
      HANGAR_ASSIGN_OR_RETURN(auto linked, lfs_.LinkedSize(repo.record.id, op.lfs_oid));
      if (!linked || (op.lfs_size && *linked != *op.lfs_size)) {
        std::string size = op.lfs_size ? " of size " + std::to_string(*op.lfs_size) : "";
        return MakeError(ErrorCode::Unprocessable, "LFS object " + op.lfs_oid.Hex() + size +
                                                       " was not uploaded to this repo");
      }
      c.content = git::FormatPointer(git::Pointer{op.lfs_oid, *linked});
      break;
    }
    case CommitOperation::Kind::CopyFile: {
      HANGAR_TRY(ValidateRepoPath(op.src_path));
      HANGAR_ASSIGN_OR_RETURN(Oid from,
                              content_.ResolveRevision(repo, op.src_revision.value_or(branch)));
      auto source = content_.Stat(repo, from, op.src_path);
      if (!source) {
        return MakeError(ErrorCode::EntryNotFound,
                         "copy source '" + op.src_path + "' not found: " + source.error().message);
      }
      if (IsGitmodulesPath(op.path)) {
        HANGAR_ASSIGN_OR_RETURN(auto text,
                                content_.ReadText(repo, from, op.src_path, kMaxGitmodules));
        if (!text) {
          return MakeError(ErrorCode::BadRequest,
                           "a copy to .gitmodules needs a file of at most 1 MiB as its source");
        }
        HANGAR_TRY(git::CheckGitmodules(*text));
      }
      c.blob = source->git.oid;
      break;
    }
    case CommitOperation::Kind::DeletedFile:
      c.kind = git::TreeChange::Kind::DeleteFile;
      break;
    case CommitOperation::Kind::DeletedFolder:
      c.kind = git::TreeChange::Kind::DeleteFolder;
      break;
  }
  return c;
}

Result<CommitOutcome> CommitService::Commit(const Principal& who, const RepoId& id,
                                            std::string_view branch, CommitInput input) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, repos_.Open(who, id, Access::Write));
  if (input.summary.empty()) return MakeError(ErrorCode::BadRequest, "the commit summary is empty");
  if (input.operations.empty()) return MakeError(ErrorCode::BadRequest, "no operations to commit");
  git::CommitRequest req;
  req.branch = std::string(branch);
  if (req.branch.starts_with("refs/heads/")) req.branch.erase(0, 11);
  // Besides branches, an open pull request's ref takes commits (hf-api.md §7.6); tags and
  // other refs do not.
  if (req.branch.starts_with("refs/") && !IsPullRequestRef(req.branch)) {
    return MakeError(ErrorCode::RevisionNotFound,
                     "cannot commit to '" + req.branch + "': not a branch or pull request");
  }
  if (input.create_pr && req.branch.starts_with("refs/")) {
    return MakeError(ErrorCode::BadRequest, "create_pr needs a branch to start from");
  }
  if (opener_ && IsPullRequestRef(req.branch)) {
    HANGAR_TRY(opener_->CheckOpen(repo, std::stoi(req.branch.substr(8))));
  }
  req.expected_parent = input.parent_commit;
  req.detached = input.create_pr;
  for (auto& op : input.operations) {
    HANGAR_ASSIGN_OR_RETURN(git::TreeChange c, Change(repo, req.branch, op));
    req.changes.push_back(std::move(c));
  }
  req.author = git::Signature{who.name, who.name + "@users.noreply.hangar",
                              static_cast<int64_t>(std::time(nullptr)), 0};
  req.message = input.summary;
  if (!input.description.empty()) req.message += "\n\n" + input.description;
  if (!req.message.ends_with('\n')) req.message += '\n';
  HANGAR_ASSIGN_OR_RETURN(auto commit, git::CommitChanges(repo.git_path, req));
  CommitOutcome out{commit, std::nullopt};
  if (input.create_pr) {
    // The branch did not move: no metadata to refresh.
    if (opener_) {
      HANGAR_ASSIGN_OR_RETURN(out.pull_request,
                              opener_->OpenPullRequest(who, repo, req.branch, commit, input.summary,
                                                       input.description));
    } else {
      HANGAR_ASSIGN_OR_RETURN(out.pull_request, git::CreatePullRequestRef(repo.git_path, commit));
    }
    return out;
  }
  // A pull request's ref too: its listeners record the commit on the pull request.
  repos_.AfterPush(repo);
  return out;
}

}  // namespace hangar::services
