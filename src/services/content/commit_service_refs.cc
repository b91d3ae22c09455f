// CommitService's branch and tag rules (hf-api.md §6.5, §6.6): names, starting points,
// the default branch; git/ref_writer.h does the ref writes.

#include <ctime>

#include "git/commit_builder.h"
#include "git/ref_writer.h"
#include "services/content/commit_service.h"

namespace hangar::services {

namespace {

Result<void> CheckName(std::string_view what, std::string_view name) {
  if (git::IsValidShortRefName(name)) return {};
  return MakeError(ErrorCode::BadRequest,
                   "invalid " + std::string(what) + " name '" + std::string(name) + "'");
}

}  // namespace

Result<Oid> CommitService::CreateBranch(const Principal& who, const RepoId& id,
                                        const BranchInput& in) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, repos_.Open(who, id, Access::Write));
  HANGAR_TRY(CheckName("branch", in.name));
  Result<Oid> start = Oid();
  if (in.empty) {
    if (in.starting_point) {
      return MakeError(ErrorCode::BadRequest, "emptyBranch and startingPoint exclude each other");
    }
    git::Signature author{who.name, who.name + "@users.noreply.hangar",
                          static_cast<int64_t>(std::time(nullptr)), 0};
    start = git::CommitEmptyRoot(repo.git_path, author, "Empty branch " + in.name + "\n");
  } else {
    start = content_.ResolveRevision(repo, in.starting_point.value_or("HEAD"));
  }
  if (!start) return std::move(start).error();
  HANGAR_TRY(git::CreateRef(repo.git_path, "refs/heads/" + in.name, *start, in.overwrite));
  // Every ref change is told as a push (webhooks, push mirrors hear of it).
  repos_.AfterPush(repo);
  return *start;
}

Result<void> CommitService::DeleteBranch(const Principal& who, const RepoId& id,
                                         std::string_view name) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, repos_.Open(who, id, Access::Write));
  HANGAR_TRY(CheckName("branch", name));
  if (name == repo.record.default_branch) {
    return MakeError(ErrorCode::Forbidden,
                     "'" + std::string(name) + "' is the default branch and cannot be deleted");
  }
  HANGAR_TRY(git::DeleteRef(repo.git_path, "refs/heads/" + std::string(name)));
  repos_.AfterPush(repo);
  return {};
}

Result<Oid> CommitService::CreateTag(const Principal& who, const RepoId& id,
                                     std::string_view revision, std::string_view tag,
                                     const std::optional<std::string>& message) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, repos_.Open(who, id, Access::Write));
  HANGAR_TRY(CheckName("tag", tag));
  HANGAR_ASSIGN_OR_RETURN(auto target, content_.ResolveRevision(repo, revision));
  std::string name(tag);
  if (message) {
    git::Signature tagger{who.name, who.name + "@users.noreply.hangar",
                          static_cast<int64_t>(std::time(nullptr)), 0};
    HANGAR_TRY(git::CreateAnnotatedTag(repo.git_path, name, target, tagger, *message));

  } else {
    HANGAR_TRY(git::CreateRef(repo.git_path, "refs/tags/" + name, target, false));
  }
  repos_.AfterPush(repo);
  return target;
}

Result<void> CommitService::DeleteTag(const Principal& who, const RepoId& id,
                                      std::string_view tag) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, repos_.Open(who, id, Access::Write));
  HANGAR_TRY(CheckName("tag", tag));
  HANGAR_TRY(git::DeleteRef(repo.git_path, "refs/tags/" + std::string(tag)));
  repos_.AfterPush(repo);
  return {};
}

}  // namespace hangar::services
