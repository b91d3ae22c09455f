#include "git/ref_writer.h"

#include <git2.h>

#include <algorithm>
#include <charconv>

#include "git/git2_util.h"

namespace hangar::git {

using namespace internal;  // NOLINT: RAII handles and conversions of this module

namespace {

constexpr int kMaxPullRequestAttempts = 16;

// The commit `target` must exist: refs never point at missing objects.
Result<void> CheckCommit(git_repository* repo, const Oid& target) {
  git_oid id = ToGit(target);
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, repo, &id);
  if (rc == GIT_ENOTFOUND) {
    return MakeError(ErrorCode::RevisionNotFound, "commit " + target.Hex() + " not found");
  }
  if (rc < 0) return Git2Error(rc, "commit lookup");
  git_commit_free(raw);
  return {};
}

// The highest n of the refs/pr/<n> in `repo`, 0 when there are none.
Result<int> HighestPullRequest(git_repository* repo) {
  git_reference_iterator* raw = nullptr;
  int rc = git_reference_iterator_glob_new(&raw, repo, "refs/pr/*");
  if (rc < 0) return Git2Error(rc, "list pull-request refs");
  ReferenceIteratorPtr it(raw);
  int highest = 0;
  const char* name = nullptr;
  while ((rc = git_reference_next_name(&name, it.get())) == 0) {
    std::string_view n = std::string_view(name).substr(8);  // after "refs/pr/"
    int value = 0;
    if (n.empty() || n.front() == '0' || n.size() > 9) continue;  // not one Hangar made
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), value);
    if (ec == std::errc() && end == n.data() + n.size() && value > highest) highest = value;
  }
  if (rc != GIT_ITEROVER) return Git2Error(rc, "list pull-request refs");
  return highest;
}

}  // namespace

bool IsValidShortRefName(std::string_view name) {
  // "@" means HEAD to git; a name under "refs/" would read as another kind of ref
  // (refs/heads/refs/pr/5 shadows pull request 5 in revision lookups).
  if (name.empty() || name.front() == '-' || name == "HEAD" || name == "@" ||
      name.starts_with("refs/")) {
    return false;
  }
  EnsureLibgit2();
  std::string full = "refs/heads/" + std::string(name);
  int valid = 0;
  return git_reference_name_is_valid(&valid, full.c_str()) == 0 && valid;
}

Result<void> CreateRef(const std::string& repo_path, const std::string& refname, const Oid& target,
                       bool overwrite) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(repo_path));
  HANGAR_TRY(CheckCommit(repo, target));
  git_oid id = ToGit(target);
  git_reference* raw = nullptr;
  int rc =
      git_reference_create(&raw, repo, refname.c_str(), &id, overwrite ? 1 : 0, "hangar: create");
  if (rc == GIT_EEXISTS) return MakeError(ErrorCode::Conflict, "'" + refname + "' already exists");
  if (rc == GIT_EINVALIDSPEC) {
    return MakeError(ErrorCode::BadRequest, "invalid ref name '" + refname + "'");
  }
  if (rc < 0) return Git2Error(rc, "create " + refname);
  git_reference_free(raw);
  return {};
}

Result<Oid> CreateAnnotatedTag(const std::string& repo_path, const std::string& name,
                               const Oid& target, const Signature& tagger,
                               const std::string& message) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(repo_path));
  git_oid id = ToGit(target);
  git_object* raw_obj = nullptr;
  int rc = git_object_lookup(&raw_obj, repo, &id, GIT_OBJECT_COMMIT);
  if (rc == GIT_ENOTFOUND) {
    return MakeError(ErrorCode::RevisionNotFound, "commit " + target.Hex() + " not found");
  }
  if (rc < 0) return Git2Error(rc, "commit lookup");
  ObjectPtr obj(raw_obj);
  git_signature* raw_sig = nullptr;
  rc = git_signature_new(&raw_sig, tagger.name.c_str(), tagger.email.c_str(), tagger.time,
                         tagger.offset_minutes);
  if (rc < 0) return MakeError(ErrorCode::BadRequest, "invalid tagger name");
  SignaturePtr sig(raw_sig);
  std::string text = message.ends_with('\n') ? message : message + "\n";
  git_oid out;
  rc = git_tag_create(&out, repo, name.c_str(), obj.get(), sig.get(), text.c_str(), 0);
  if (rc == GIT_EEXISTS) return MakeError(ErrorCode::Conflict, "tag '" + name + "' already exists");
  if (rc == GIT_EINVALIDSPEC) {
    return MakeError(ErrorCode::BadRequest, "invalid tag name '" + name + "'");
  }
  if (rc < 0) return Git2Error(rc, "create tag " + name);
  return FromGit(&out);
}

Result<void> DeleteRef(const std::string& repo_path, const std::string& refname) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(repo_path));
  // git_reference_remove succeeds on a missing ref; look it up so a missing one is a 404,
  // and git_reference_delete removes it only if it still has the value read.
  git_reference* raw = nullptr;
  int rc = git_reference_lookup(&raw, repo, refname.c_str());
  if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
    return MakeError(ErrorCode::RevisionNotFound, "'" + refname + "' not found");
  }
  if (rc < 0) return Git2Error(rc, "read " + refname);
  ReferencePtr ref(raw);
  rc = git_reference_delete(ref.get());
  if (rc == GIT_ENOTFOUND) {
    return MakeError(ErrorCode::RevisionNotFound, "'" + refname + "' not found");
  }
  if (rc == GIT_EMODIFIED || rc == GIT_ELOCKED) {
    return MakeError(ErrorCode::Conflict, "'" + refname + "' changed meanwhile; retry");
  }
  if (rc < 0) return Git2Error(rc, "delete " + refname);
  return {};
}

Result<int> CreatePullRequestRef(const std::string& repo_path, const Oid& target, int at_least) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(repo_path));
  HANGAR_ASSIGN_OR_RETURN(auto highest, HighestPullRequest(repo));
  const int first = std::max(highest + 1, at_least);
  git_oid id = ToGit(target);
  for (int n = first; n < first + kMaxPullRequestAttempts && n <= kMaxPullRequestNumber; ++n) {
    std::string refname = "refs/pr/" + std::to_string(n);
    git_reference* raw = nullptr;
    int rc = git_reference_create(&raw, repo, refname.c_str(), &id, 0, "hangar: pull request");
    if (rc == 0) {
      git_reference_free(raw);
      return n;
    }
    // Another request took n (or holds its lock): try the next number.
    if (rc != GIT_EEXISTS && rc != GIT_ELOCKED) return Git2Error(rc, "create " + refname);
  }
  return MakeError(ErrorCode::Conflict, "could not allocate a pull-request number; retry");
}

Result<int> HighestPullRequestRef(const std::string& repo_path) {
  EnsureLibgit2();
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenCached(repo_path));
  return HighestPullRequest(repo);
}

}  // namespace hangar::git
