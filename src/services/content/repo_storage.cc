#include "services/content/repo_storage.h"

#include <algorithm>
#include <ctime>
#include <unordered_map>
#include <unordered_set>

#include "core/log.h"
#include "core/util.h"
#include "git/history_rewrite.h"

namespace hangar::services {

namespace {

constexpr size_t kMaxSquashMessage = 64 * 1024;

Error Bad(std::string message) { return MakeError(ErrorCode::BadRequest, std::move(message)); }

}  // namespace

RepoStorageService::RepoStorageService(RepoService& repos, ContentService& content,
                                       db::LfsStore& lfs, std::chrono::milliseconds scan_timeout)
    : repos_(repos), content_(content), lfs_(lfs), scan_timeout_(scan_timeout) {}

Result<std::vector<Oid>> RepoStorageService::Tips(const RepoHandle& repo) {
  HANGAR_ASSIGN_OR_RETURN(auto refs, content_.Refs(repo));
  std::vector<Oid> tips;
  for (const auto& r : refs) tips.push_back(r.target);
  return tips;
}

Result<Oid> RepoStorageService::SuperSquash(const Principal& who, const RepoId& id,
                                            const std::string& branch, const std::string& message) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Write));
  if (message.size() > kMaxSquashMessage) return Bad("the message is over 64 KiB");
  if (auto problem = ShownTextProblem(message, true))
    return Bad("the message " + std::string(*problem));
  std::string name = branch;
  if (name.starts_with("refs/heads/")) name.erase(0, 11);
  if (name.empty() || name.starts_with("refs/")) {
    return MakeError(ErrorCode::RevisionNotFound,
                     "'" + branch.substr(0, 100) + "' is not a branch");
  }
  const std::string refname = "refs/heads/" + name;
  auto head = content_.ResolveRevision(repo, refname);
  if (!head) {
    return MakeError(ErrorCode::RevisionNotFound,
                     "branch '" + name.substr(0, 100) + "' not found in " + id.Id());
  }
  std::string text = TrimBlanks(message).empty() ? "Super-squash branch '" + name + "'" : message;
  if (!text.ends_with('\n')) text += '\n';
  git::Signature sig{who.name, who.name + "@users.noreply.hangar",
                     static_cast<int64_t>(std::time(nullptr)), 0};
  HANGAR_ASSIGN_OR_RETURN(Oid squashed, git::SquashInto(repo.git_path, refname, *head, sig, text));
  repos_.AfterPush(repo);
  return squashed;
}

Result<LfsFilePage> RepoStorageService::ListLfsFiles(const Principal& who, const RepoId& id,
                                                     const std::string& cursor, int limit) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Write));
  std::optional<Sha256> after;
  if (!cursor.empty()) {
    after = Sha256::ParseHex(cursor);
    if (!after) return Bad("malformed cursor");
  }
  HANGAR_ASSIGN_OR_RETURN(auto links, lfs_.ListForRepo(repo.record.id, after, limit + 1));
  LfsFilePage page;
  if (static_cast<int>(links.size()) > limit) {
    links.resize(limit);
    page.next_cursor = links.back().oid.Hex();
  }
  if (links.empty()) return page;
  HANGAR_ASSIGN_OR_RETURN(auto tips, Tips(repo));
  HANGAR_ASSIGN_OR_RETURN(auto found, git::LfsAppearances(repo.git_path, tips, scan_timeout_));
  std::unordered_map<Sha256, const git::LfsAppearance*> by_oid;
  for (const auto& a : found) by_oid.emplace(a.pointer.oid, &a);
  for (auto& link : links) {
    LfsFile f{std::move(link), std::nullopt};
    if (auto it = by_oid.find(f.link.oid); it != by_oid.end()) f.first = *it->second;
    page.items.push_back(std::move(f));
  }
  return page;
}

Result<db::LfsPurgeRecord> RepoStorageService::Purge(const Principal& who, const RepoId& id,
                                                     const std::vector<Sha256>& oids,
                                                     bool rewrite_history) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Admin));
  if (repo.record.is_mirror) {
    return MakeError(ErrorCode::Forbidden, id.Id() + " is a mirror: it changes only when it syncs");
  }
  if (oids.empty()) return Bad("no LFS objects to delete");
  if (oids.size() > kMaxPurgeObjects) {
    return Bad("at most " + std::to_string(kMaxPurgeObjects) + " LFS objects per call");
  }
  std::vector<Sha256> unique;
  std::unordered_set<Sha256> seen;
  for (const auto& o : oids) {
    if (seen.insert(o).second) unique.push_back(o);
  }
  // Every object first: an unknown one refuses the whole call, before anything changes.
  for (const auto& o : unique) {
    HANGAR_ASSIGN_OR_RETURN(auto linked, lfs_.IsLinked(repo.record.id, o));
    if (!linked) {
      return MakeError(ErrorCode::NotFound,
                       "LFS object " + o.Hex() + " is not stored in " + id.Id());
    }
  }
  db::LfsPurgeRecord record;
  record.repo_id = repo.record.id;
  record.user_name = who.name;
  record.oids = unique;
  record.rewrite = rewrite_history;
  record.created_at = static_cast<int64_t>(std::time(nullptr));
  if (rewrite_history) {
    HANGAR_ASSIGN_OR_RETURN(auto tips, Tips(repo));
    HANGAR_ASSIGN_OR_RETURN(auto found, git::LfsAppearances(repo.git_path, tips, scan_timeout_));
    std::unordered_set<Oid> drop;
    for (const auto& a : found) {
      if (seen.count(a.pointer.oid)) drop.insert(a.blobs.begin(), a.blobs.end());
    }
    if (!drop.empty()) {
      auto moved = git::RewriteWithout(repo.git_path, drop);
      if (!moved) {
        // Refs moved before a conflict keep their new commits, of the same content; the
        // objects stay linked, so nothing dangles. The caller may ask again.
        repos_.AfterPush(repo);
        return std::move(moved).error();
      }
      for (const auto& m : *moved) {
        record.refs += m.name + " " + m.from.Hex() + " " + m.to.Hex() + "\n";
      }
      repos_.AfterPush(repo);
      // A ref made or moved while the rewrite ran may still hold a pointer: nothing is
      // unlinked then, so nothing dangles. Asking again rewrites it too.
      HANGAR_ASSIGN_OR_RETURN(auto after, Tips(repo));
      HANGAR_ASSIGN_OR_RETURN(auto left,
                              git::PointersBetween(repo.git_path, after, {}, scan_timeout_));
      for (const auto& p : left) {
        if (seen.count(p.oid)) {
          return MakeError(ErrorCode::Conflict,
                           "a ref pushed during the rewrite still holds LFS object " + p.oid.Hex() +
                               "; nothing was deleted: retry");
        }
      }
    }
  }
  for (const auto& o : unique) HANGAR_TRY(lfs_.Unlink(repo.record.id, o));
  HANGAR_ASSIGN_OR_RETURN(record.id, lfs_.RecordPurge(record));
  Log("services")
      ->info("repo {}: {} LFS object(s) deleted by {}{}", id.UrlPath(), unique.size(), who.name,
             rewrite_history ? ", history rewritten" : "");
  return record;
}

Result<std::vector<db::LfsPurgeRecord>> RepoStorageService::Purges(const Principal& who,
                                                                   const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Admin));
  return lfs_.ListPurges(repo.record.id, 100);
}

}  // namespace hangar::services
