#include "services/repo/repo_service.h"

#include "core/log.h"
#include "core/ttl_cache.h"
#include "core/util.h"
#include "git/repo_writer.h"
#include "services/repo/card_index.h"
#include "services/repo/model_card.h"

namespace hangar::services {

namespace {

// README.md's bytes read for the card index; larger ones index as empty.
constexpr uint64_t kMaxReadmeBytes = 16 << 20;

// Repo rows are read on every request; they change only through this service (or another
// replica), so a short TTL bounds staleness across replicas.
constexpr size_t kRepoCacheMax = 100000;

std::string CacheKey(const RepoId& id) {
  return std::string(RepoTypeName(id.type)) + "/" + id.ns + "/" + id.name;
}

}  // namespace

// The change feed's topic of repo rows changed (keys: CacheKey).
constexpr std::string_view kRepoTopic = "repo";

struct RepoService::Cache {
  explicit Cache(int64_t ttl_ms) : rows(kRepoCacheMax, ttl_ms) {}
  TtlCache<db::RepoRecord> rows;         // keyed by CacheKey
  db::ChangeFeed::Subscription changes;  // evicts from rows
};

RepoService::RepoService(db::RepoStore& repos, AccessPolicy& access, git::RepoReader& reader,
                         std::filesystem::path repos_root, RepoServiceOptions options)
    : repos_(repos),
      access_(access),
      reader_(reader),
      repos_root_(std::move(repos_root)),
      changes_(options.changes),
      cache_(std::make_unique<Cache>(options.row_cache_ttl_ms)) {
  if (changes_)
    cache_->changes = db::EvictOnChange(*changes_, std::string(kRepoTopic), cache_->rows);
}

RepoService::~RepoService() = default;

std::string RepoService::GitPath(const RepoId& id) const {
  return (repos_root_ / RepoCollection(id.type) / id.ns / (id.name + ".git")).string();
}

Result<db::RepoRecord> RepoService::FindCached(const RepoId& id) {
  const std::string key = CacheKey(id);
  const int64_t now = NowUnixMillis();
  if (auto hit = cache_->rows.Get(key, now)) return std::move(*hit);
  auto rec = repos_.Find(id);
  if (rec) cache_->rows.Put(key, *rec, now);
  return rec;
}

void RepoService::Invalidate(const RepoId& id) {
  std::string key = CacheKey(id);
  cache_->rows.Erase(key);
  if (changes_) changes_->Publish(kRepoTopic, key);
}

void RepoService::InvalidateAll() { cache_->rows.Clear(); }

Result<int64_t> RepoService::RefreshTrending() {
  HANGAR_ASSIGN_OR_RETURN(int64_t changed, repos_.RefreshTrending(NowUnix() / 86400));
  if (changed > 0) InvalidateAll();
  return changed;
}

Access RepoService::AccessTo(const Principal& who, const db::RepoRecord& rec) {
  // A credential bound to one repo knows of no other, public or not (issue 18).
  if (who.repo_scope != 0 && who.repo_scope != rec.id) return Access::None;
  if (who.deploy_key_id != 0) {
    // A deploy key is no member of anything: its own repo at its own level, nothing else.
    if (who.repo_scope == 0) return Access::None;
    return who.role == TokenRole::Write ? Access::Write : Access::Read;
  }
  // A cache's repo belongs to no local namespace, even one claimed later under its name;
  // who reads it is the cache's rule (MissingRepos::Read, asked first by Open).
  if (rec.is_mirror && missing_ != nullptr && missing_->Caches(rec.id)) {
    return who.is_admin ? Access::Admin : Access::Read;
  }
  Access access = access_.NamespaceAccess(who, rec.ns);
  if (!rec.is_private && access < Access::Read) access = Access::Read;
  return access;
}

Result<RepoHandle> RepoService::Open(const Principal& who, const RepoId& id, Access needed) {
  return OpenChecked(who, id, needed, true);
}

Result<RepoHandle> RepoService::OpenMetadata(const Principal& who, const RepoId& id) {
  return OpenChecked(who, id, Access::Read, false);
}

Result<void> RepoService::CheckLinkHolder(int64_t repo_id, int64_t holder) {
  HANGAR_ASSIGN_OR_RETURN(db::RepoRecord rec, FindById(repo_id));
  // A deploy key's row goes with its repo; public files are anyone's.
  if (holder < 0 || (!rec.is_private && rec.gated.empty())) return {};
  Principal who;
  if (holder > 0) {
    HANGAR_ASSIGN_OR_RETURN(who, access_.ReaderOf(holder));
  }
  HANGAR_TRY(OpenChecked(who, rec.Id(), Access::Read, /*gate=*/true));
  return {};
}

Result<void> RepoService::CheckGate(const Principal& who, const db::RepoRecord& repo) {
  if (repo.gated.empty()) return {};
  // Its namespace's members (any role) and site admins; a deploy key is its admins' own.
  if (who.deploy_key_id != 0 || access_.NamespaceAccess(who, repo.ns) >= Access::Read) return {};
  const std::string what = std::string(RepoTypeName(repo.type)) + " " + repo.Id().Id();
  const std::string page = repo.Id().UrlPath();
  if (who.anonymous) {
    return MakeError(ErrorCode::GatedRepo, "Access to " + what +
                                               " is restricted: sign in and ask for access "
                                               "on its page, /" +
                                               page);
  }
  std::optional<db::AccessRequestRecord> request;
  if (gates_ != nullptr) {
    HANGAR_ASSIGN_OR_RETURN(request, gates_->Get(repo.id, who.user_id));
  }
  if (!request) {
    return MakeError(ErrorCode::GatedRepo, "Access to " + what +
                                               " is restricted and you are not in the authorized "
                                               "list: ask for access on its page, /" +
                                               page);
  }
  switch (request->status) {
    case db::AccessStatus::Accepted:
      return {};
    case db::AccessStatus::Pending:
      return MakeError(ErrorCode::GatedRepo, "Your request for access to " + what +
                                                 " is awaiting a review from its authors");
    case db::AccessStatus::Rejected:
      break;
  }
  return MakeError(ErrorCode::GatedRepo,
                   "Your request for access to " + what + " was rejected by its authors" +
                       (request->reason.empty() ? std::string() : ": " + request->reason));
}

Result<RepoHandle> RepoService::OpenChecked(const Principal& who, const RepoId& id, Access needed,
                                            bool gate) {
  auto rec = FindCached(id);
  if (!rec && rec.error().code == ErrorCode::RepoNotFound && missing_ != nullptr &&
      needed == Access::Read && who.repo_scope == 0) {
    // Not here: a pull-through cache may bring it (its own refusals are the answer).
    HANGAR_ASSIGN_OR_RETURN(bool made, missing_->Materialize(who, id));
    if (made) rec = FindCached(id);
  }
  if (!rec) {
    if (rec.error().code == ErrorCode::RepoNotFound) {
      return MakeError(ErrorCode::RepoNotFound, "Repository not found: " + id.UrlPath());
    }
    return std::move(rec).error();
  }
  if (rec->is_mirror && missing_ != nullptr) HANGAR_TRY(missing_->Read(who, *rec, needed));
  const Access access = AccessTo(who, *rec);
  if (access == Access::None) {
    return MakeError(ErrorCode::RepoNotFound, "Repository not found: " + id.UrlPath());
  }
  if (access < needed) {
    if (who.anonymous) {
      return MakeError(ErrorCode::Unauthorized,
                       "authentication required to write to " + id.UrlPath());
    }
    if (who.deploy_key_id != 0) {
      // token_name is "deploy key '<title>'" (SshKeyService::PrincipalFor).
      if (needed == Access::Write) {
        return MakeError(ErrorCode::Forbidden, who.token_name + " is read-only; " + id.UrlPath() +
                                                   " needs a read-write key");
      }
      return MakeError(ErrorCode::Forbidden, who.token_name + " cannot administer " + id.UrlPath());
    }
    if (!who.CanWrite()) {
      return MakeError(ErrorCode::Forbidden, "token '" + who.token_name + "' is read-only; " +
                                                 id.UrlPath() + " needs a write token");
    }
    if (needed == Access::Admin) {
      return MakeError(ErrorCode::Forbidden, "you are not an admin of " + id.UrlPath());
    }
    return MakeError(ErrorCode::Forbidden, "you do not have write access to " + id.UrlPath());
  }
  if (rec->is_mirror && needed == Access::Write) {
    return MakeError(ErrorCode::Forbidden, id.UrlPath() +
                                               " is a mirror of another repository and is "
                                               "read-only; it changes only when it syncs");
  }
  if (gate && needed == Access::Read) HANGAR_TRY(CheckGate(who, *rec));
  return RepoHandle{std::move(*rec), GitPath(id), access};
}

Result<db::RepoRecord> RepoService::FindById(int64_t id) { return repos_.FindById(id); }

Result<db::RepoRecord> RepoService::Create(const Principal& who, const RepoId& id, bool is_private,
                                           std::string_view sdk) {
  if (who.anonymous) {
    return MakeError(ErrorCode::Unauthorized, "authentication required to create a repo");
  }
  if (who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "a credential bound to one repo cannot create repos");
  }
  if (!who.CanWrite()) {
    return MakeError(ErrorCode::Forbidden, "token '" + who.token_name + "' is read-only");
  }
  if (access_.NamespaceAccess(who, id.ns) < Access::Write) {
    return MakeError(ErrorCode::Forbidden, "you cannot create repos in namespace '" + id.ns + "'");
  }
  if (!sdk.empty() && id.type != RepoType::Space) {
    return MakeError(ErrorCode::BadRequest, "'sdk' is for spaces only");
  }
  if (!sdk.empty() && sdk != "gradio" && sdk != "streamlit" && sdk != "docker" && sdk != "static") {
    return MakeError(ErrorCode::BadRequest,
                     "'sdk' is \"gradio\", \"streamlit\", \"docker\" or \"static\"");
  }
  db::RepoRecord rec;
  rec.type = id.type;
  rec.ns = id.ns;
  rec.name = id.name;
  rec.is_private = is_private;
  rec.sdk = std::string(sdk);
  auto created = repos_.Create(rec);
  if (!created) return created;
  // The row reserves the name; the git repository is built under a temporary name and
  // renamed into place, so neither a crash nor a failure leaves a half repository.
  std::string path = GitPath(id);
  if (std::filesystem::exists(path)) {
    // Left behind by a crash between an earlier delete's row removal and its rename.
    (void)git::DeleteRepo(path);
  }
  git::Signature sig{who.name, who.name + "@users.noreply.hangar", NowUnix(), 0};
  std::vector<std::pair<std::string, std::string>> files = {
      {".gitattributes", std::string(git::InitialGitattributes())}};
  auto head = git::InitBareRepo(path, files, sig, "initial commit");
  if (!head) {
    (void)repos_.Delete(id);
    return std::move(head).error();
  }
  (void)repos_.UpdateHead(created->id, head->Hex(), created->created_at);
  created->last_commit = head->Hex();
  Tell({.change = RepoChange::Created, .repo = *created, .git_path = path});
  return created;
}

Result<void> RepoService::Delete(const Principal& who, const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, Open(who, id, Access::Admin));
  HANGAR_TRY(repos_.Delete(id));
  Invalidate(id);
  Tell({.change = RepoChange::Deleted, .repo = repo.record});
  return git::DeleteRepo(repo.git_path);
}

Result<db::RepoRecord> RepoService::Move(const Principal& who, const RepoId& from,
                                         const RepoId& to) {
  if (from.type != to.type) {
    return MakeError(ErrorCode::BadRequest, "a repo cannot change type when moved");
  }
  HANGAR_ASSIGN_OR_RETURN(auto repo, Open(who, from, Access::Admin));
  if (who.repo_scope != 0) {
    return MakeError(ErrorCode::Forbidden, "a credential bound to one repo cannot move it");
  }
  if (access_.NamespaceAccess(who, to.ns) < Access::Write) {
    return MakeError(ErrorCode::Forbidden, "you cannot create repos in namespace '" + to.ns + "'");
  }
  auto moved = repos_.Move(from, to);
  if (!moved) return moved;
  Invalidate(from);
  Invalidate(to);
  auto git_moved = git::MoveRepo(repo.git_path, GitPath(to));
  if (!git_moved) {
    (void)repos_.Move(to, from);  // put the row back: the repository did not move
    return std::move(git_moved).error();
  }
  Tell({.change = RepoChange::Moved, .repo = *moved, .git_path = GitPath(to), .moved_from = from});
  return moved;
}

Result<void> RepoService::SetMirror(int64_t id, bool is_mirror) {
  HANGAR_ASSIGN_OR_RETURN(auto rec, repos_.FindById(id));
  HANGAR_TRY(repos_.SetMirror(id, is_mirror));
  Invalidate(rec.Id());
  return {};
}

Result<void> RepoService::SetPrivate(const Principal& who, const RepoId& id, bool is_private) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, Open(who, id, Access::Admin));
  HANGAR_TRY(repos_.SetPrivate(repo.record.id, is_private));
  Invalidate(id);
  repo.record.is_private = is_private;
  Tell({.change = RepoChange::ConfigUpdated,
        .repo = repo.record,
        .git_path = repo.git_path,
        .settings = {.is_private = is_private}});
  return {};
}

Result<void> RepoService::UpdateSettings(const Principal& who, const RepoId& id,
                                         const RepoSettings& settings) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, Open(who, id, Access::Admin));
  // Every field is checked before anything changes.
  if (settings.gated && !settings.gated->empty() && *settings.gated != "auto" &&
      *settings.gated != "manual") {
    return MakeError(ErrorCode::BadRequest,
                     "'gated' is \"auto\", \"manual\" or false, not \"" + *settings.gated + "\"");
  }
  if (settings.xet_enabled.value_or(false)) {
    return MakeError(ErrorCode::BadRequest,
                     "'xetEnabled': true is not supported: Hangar stores files with Git LFS "
                     "(only false)");
  }
  if (settings.is_private) HANGAR_TRY(repos_.SetPrivate(repo.record.id, *settings.is_private));
  if (settings.gated) HANGAR_TRY(repos_.SetGated(repo.record.id, *settings.gated));
  if (settings.is_private || settings.gated) {
    Invalidate(id);
    if (settings.is_private) repo.record.is_private = *settings.is_private;
    if (settings.gated) repo.record.gated = *settings.gated;
    Tell({.change = RepoChange::ConfigUpdated,
          .repo = repo.record,
          .git_path = repo.git_path,
          .settings = settings});
  }
  return {};
}

Result<db::RepoPage> RepoService::List(const Principal& who, db::RepoQuery query) {
  // A credential bound to one repo lists nothing private: it is no key to its namespaces.
  HANGAR_TRY(access_.ApplyVisibility(who.repo_scope != 0 ? Principal::Anonymous() : who, query));
  return repos_.List(query);
}

void RepoService::IndexCard(const RepoHandle& repo, const Oid& head) {
  const std::string where = repo.record.Id().UrlPath();
  CardMeta meta;
  auto readme = reader_.Lookup(repo.git_path, head, "README.md");
  if (readme && !readme->is_dir) {
    auto text = reader_.ReadBlob(repo.git_path, readme->oid, kMaxReadmeBytes);
    auto card = text ? ParseCardData(*text)
                     : Result<std::optional<boost::json::object>>(std::move(text).error());
    if (!card) {
      Log("services")->info("repo {}: README.md card not indexed: {}", where, card.error().message);
    } else if (*card) {
      meta = ExtractCardMeta(**card, repo.record.type);
    }
  }
  auto stored = repos_.SetCardMeta(repo.record.id, meta.library, meta.pipeline, meta.tags);
  if (!stored)
    Log("services")->warn("repo {}: card index update failed: {}", where, stored.error().message);
}

void RepoService::AddPushListener(PushListener listener) {
  push_listeners_.push_back(std::move(listener));
}

void RepoService::AfterPush(const RepoHandle& repo) {
  auto head = reader_.ResolveRevision(repo.git_path, "HEAD");
  if (head) {
    auto commit = reader_.ReadCommit(repo.git_path, *head);
    int64_t when = commit ? commit->committer_time : NowUnix();
    auto updated = repos_.UpdateHead(repo.record.id, head->Hex(), when);
    if (!updated)
      Log("services")
          ->warn("repo {}: head update failed: {}", repo.record.Id().UrlPath(),
                 updated.error().message);
    IndexCard(repo, *head);
  }
  Invalidate(repo.record.Id());
  auto graph = git::WriteCommitGraph(repo.git_path);
  if (!graph)
    Log("services")
        ->warn("repo {}: commit-graph write failed: {}", repo.record.Id().UrlPath(),
               graph.error().message);
  std::string head_hex = head ? head->Hex() : "";
  for (const auto& listener : push_listeners_) listener(repo, head_hex);
}

}  // namespace hangar::services
