// RegistryService (registry_service.h): versions pinning a repo at a commit, aliases and
// their log, and MLflow's legacy stages mapped onto aliases.

#include <algorithm>

#include "core/util.h"
#include "services/registry/registry_internal.h"

namespace hangar::services {
namespace {

constexpr const char kStaging[] = "staging";
constexpr const char kProduction[] = "production";
constexpr int64_t kMaxVersionsRead = 100000;

struct RepoRef {
  RepoId id;
  std::string revision;  // "" when not given
};

// "ns/name" or "ns/name@revision" (`what` names the field in errors).
Result<RepoRef> ParseRepoRef(RepoType type, const std::string& text, std::string_view what) {
  std::string ref = text, revision;
  if (size_t at = ref.find('@'); at != std::string::npos) {
    revision = ref.substr(at + 1);
    ref.resize(at);
    if (revision.empty())
      return MakeError(ErrorCode::BadRequest, std::string(what) + ": empty revision after '@'");
  }
  size_t slash = ref.find('/');
  if (slash == std::string::npos)
    return MakeError(ErrorCode::BadRequest, std::string(what) +
                                                " must be a repo id \"namespace/name\", not '" +
                                                text.substr(0, 200) + "'");
  HANGAR_ASSIGN_OR_RETURN(RepoId id,
                          RepoId::Parse(type, ref.substr(0, slash), ref.substr(slash + 1)));
  return RepoRef{std::move(id), std::move(revision)};
}

}  // namespace

std::string_view StageName(Stage s) {
  switch (s) {
    case Stage::Staging:
      return "Staging";
    case Stage::Production:
      return "Production";
    case Stage::Archived:
      return "Archived";
    case Stage::None:
      break;
  }
  return "None";
}

std::optional<Stage> ParseStage(std::string_view s) {
  std::string lower = AsciiLower(s);
  if (lower == "none") return Stage::None;
  if (lower == kStaging) return Stage::Staging;
  if (lower == kProduction) return Stage::Production;
  if (lower == "archived") return Stage::Archived;
  return std::nullopt;
}

Stage StageOf(const db::ModelRecord& model, const db::VersionRecord& v) {
  auto named = [&](const char* alias) {
    auto it = model.aliases.find(alias);
    return it != model.aliases.end() && it->second == v.version;
  };
  if (named(kProduction)) return Stage::Production;
  if (named(kStaging)) return Stage::Staging;
  return v.archived ? Stage::Archived : Stage::None;
}

Result<db::VersionRecord> RegistryService::Version(const Seen& seen, int64_t version) {
  HANGAR_ASSIGN_OR_RETURN(auto v, store_.GetVersion(seen.model.id, version));
  if (!v)
    return MakeError(ErrorCode::NotFound, "Model version (name=" + seen.model.name + ", version=" +
                                              std::to_string(version) + ") not found");
  return std::move(*v);
}

Result<db::VersionRecord> RegistryService::Pin(const Principal& who, const db::ModelRecord& model,
                                               const NewVersion& v) {
  HANGAR_TRY(registry::CheckDescription(v.description));
  HANGAR_TRY(registry::CheckTags(v.tags));
  if (v.run_id.size() > 256 || v.run_link.size() > 2048 || v.datasets.size() > 64)
    return MakeError(ErrorCode::BadRequest,
                     "run_id (256 bytes), run_link (2,048 bytes) or datasets (64) too long");
  // Open as the caller: a repo they cannot read is RepoNotFound, as everywhere.
  auto pin = [&](RepoType type, const std::string& text, std::string_view what,
                 db::VersionDataset& out) -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(RepoRef ref, ParseRepoRef(type, text, what));
    HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, ref.id, Access::Read));
    if (repo.record.is_private && ref.id.ns != model.owner)
      return MakeError(ErrorCode::Forbidden, "a model of '" + model.owner +
                                                 "' cannot pin the private repo " + ref.id.Id() +
                                                 " of another namespace: its readers differ");
    std::string revision = ref.revision.empty() ? repo.record.default_branch : ref.revision;
    HANGAR_ASSIGN_OR_RETURN(Oid commit, content_.ResolveRevision(repo, revision));
    out = db::VersionDataset{repo.record.id, ref.id.Id(), commit.Hex()};
    return {};
  };
  db::VersionRecord rec;
  rec.model_id = model.id;
  db::VersionDataset pinned;
  std::string text = v.revision.empty() ? v.repo : v.repo + "@" + v.revision;
  HANGAR_TRY(pin(v.repo_type, text, "repo", pinned));
  rec.repo_id = pinned.repo_id;
  rec.repo_type = std::string(RepoTypeName(v.repo_type));
  rec.repo = pinned.repo;
  rec.commit = pinned.commit;
  for (const auto& d : v.datasets) {
    HANGAR_TRY(pin(RepoType::Dataset, d, "datasets", rec.datasets.emplace_back()));
  }
  if (!v.base_model.empty()) {
    // "name/version" or "name@alias".
    size_t cut = v.base_model.find_first_of("/@");
    if (cut == std::string::npos)
      return MakeError(ErrorCode::BadRequest,
                       "base_model must be \"name/version\" or \"name@alias\"");
    std::string base_name = v.base_model.substr(0, cut), tail = v.base_model.substr(cut + 1);
    db::VersionRecord base;
    if (v.base_model[cut] == '@') {
      HANGAR_ASSIGN_OR_RETURN(base, VersionByAlias(who, base_name, tail));
    } else {
      auto number = ParseUint64(tail);
      if (!number || *number > INT64_MAX)
        return MakeError(ErrorCode::BadRequest, "base_model: '" + tail + "' is not a version");
      HANGAR_ASSIGN_OR_RETURN(base, GetVersion(who, base_name, int64_t(*number)));
    }
    rec.base_model_id = base.model_id;
    rec.base_version = base.version;
  }
  rec.description = v.description;
  rec.run_id = v.run_id;
  rec.run_link = v.run_link;
  rec.tags = v.tags;
  rec.created_by = who.user_id;
  rec.created_at = Now();
  return rec;
}

Result<Registered> RegistryService::Fresh(int64_t model_id, int64_t version) {
  HANGAR_ASSIGN_OR_RETURN(auto model, store_.GetModelById(model_id));
  HANGAR_ASSIGN_OR_RETURN(auto v, store_.GetVersion(model_id, version));
  if (!model || !v) return MakeError(ErrorCode::NotFound, "the model was deleted meanwhile");
  return std::make_pair(std::move(*model), std::move(*v));
}

Result<Registered> RegistryService::RegisterVersion(const Principal& who, const std::string& name,
                                                    const NewVersion& v) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, Access::Write));
  HANGAR_ASSIGN_OR_RETURN(db::VersionRecord rec, Pin(who, seen.model, v));
  HANGAR_ASSIGN_OR_RETURN(int64_t number, store_.CreateVersion(rec));
  // By id: a rename since does not lose the answer.
  return Fresh(seen.model.id, number);
}

Result<Registered> RegistryService::Register(const Principal& who, const NewModel& m,
                                             const NewVersion& v) {
  auto changed = Changing();
  auto seen = See(who, m.name);
  if (seen) {
    // Into the existing model: settings the caller asks for must be its own, or they would
    // be dropped silently (a version meant to stay private published in a public model).
    const db::ModelRecord& e = seen->model;
    if ((m.is_private && !e.is_private) || (!m.owner.empty() && m.owner != e.owner) ||
        (!m.description.empty() && m.description != e.description) ||
        (!m.tags.empty() && m.tags != e.tags))
      return MakeError(ErrorCode::Conflict,
                       "Registered model (name=" + m.name +
                           ") exists with other settings: "
                           "register into it without them, or change them first");
    return RegisterVersion(who, m.name, v);
  }
  if (seen.error().code != ErrorCode::NotFound) return std::move(seen).error();
  // A new model: everything is checked (the version pinned) before anything is written.
  HANGAR_ASSIGN_OR_RETURN(db::ModelRecord proposed, Proposed(who, m));
  HANGAR_ASSIGN_OR_RETURN(db::VersionRecord rec, Pin(who, proposed, v));
  auto id = store_.CreateModelWithVersion(proposed, rec);  // one transaction
  // Created meanwhile by another request: register into it.
  if (!id && id.error().code == ErrorCode::Conflict) return RegisterVersion(who, m.name, v);
  if (!id) return std::move(id).error();
  return Fresh(*id, 1);
}

Result<db::VersionRecord> RegistryService::GetVersion(const Principal& who, const std::string& name,
                                                      int64_t version) {
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  return Version(seen, version);
}

Result<db::VersionRecord> RegistryService::VersionByAlias(const Principal& who,
                                                          const std::string& name,
                                                          const std::string& alias) {
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  if (alias == "latest") {
    db::VersionQuery q;
    q.model_id = seen.model.id;
    q.include_all_private = true;  // the model is seen already
    q.limit = 1;
    HANGAR_ASSIGN_OR_RETURN(auto latest, store_.ListVersions(q));
    if (latest.empty())
      return MakeError(ErrorCode::NotFound, "Registered model '" + name + "' has no version");
    return std::move(latest.front());
  }
  auto it = seen.model.aliases.find(alias);
  if (it == seen.model.aliases.end())
    return MakeError(ErrorCode::NotFound,
                     "Registered model alias " + alias.substr(0, 260) + " not found.");
  return Version(seen, it->second);
}

Result<VersionPage> RegistryService::ListVersions(const Principal& who, const VersionFilter& f) {
  if (f.limit < 1 || f.limit > 10000 || f.offset < 0)
    return MakeError(ErrorCode::BadRequest, "the page size must be 1 to 10000");
  db::VersionQuery q;
  if (!f.name.empty()) {
    auto seen = See(who, f.name);
    if (!seen && seen.error().code == ErrorCode::NotFound) return VersionPage{};  // none match
    if (!seen) return std::move(seen).error();
    q.model_id = seen->model.id;
  }
  q.run_id = f.run_id;
  q.repo = f.repo;
  q.tag_key = f.tag_key;
  q.tag_value = f.tag_value;
  q.offset = f.offset;
  q.limit = f.limit + 1;
  q.include_all_private = q.model_id.has_value();  // that model is seen already
  if (!q.include_all_private) {
    HANGAR_ASSIGN_OR_RETURN(Visibility seen, VisibleModels(who));
    q.include_all_private = seen.all;
    q.readable_owner_ids = std::move(seen.owner_ids);
  }
  HANGAR_ASSIGN_OR_RETURN(auto versions, store_.ListVersions(q));
  VersionPage page;
  if (static_cast<int64_t>(versions.size()) > f.limit) {
    versions.pop_back();
    page.next_offset = f.offset + f.limit;
  }
  for (const auto& v : versions) {
    if (page.models.count(v.model_id)) continue;
    HANGAR_ASSIGN_OR_RETURN(auto m, store_.GetModelById(v.model_id));
    if (m) page.models.emplace(v.model_id, std::move(*m));
  }
  // A model deleted between the two reads takes its versions with it.
  std::erase_if(versions,
                [&](const db::VersionRecord& v) { return !page.models.count(v.model_id); });
  page.versions = std::move(versions);
  return page;
}

Result<db::VersionRecord> RegistryService::UpdateVersion(const Principal& who,
                                                         const std::string& name, int64_t version,
                                                         const std::string& description) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, Access::Write));
  HANGAR_TRY(registry::CheckDescription(description));
  HANGAR_TRY(Version(seen, version));
  HANGAR_TRY(store_.UpdateVersion(seen.model.id, version, description, std::nullopt, Now()));
  return Version(seen, version);
}

Result<void> RegistryService::DeleteVersion(const Principal& who, const std::string& name,
                                            int64_t version) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, Access::Write));
  HANGAR_TRY(Version(seen, version));
  // Its aliases go with it: that is an alias move, needing the same rights.
  for (const auto& [alias, target] : seen.model.aliases)
    if (target == version) HANGAR_TRY(CanMoveAliases(who, seen));
  return store_.DeleteVersion(seen.model.id, version, who.user_id, who.name, Now());
}

Result<void> RegistryService::SetVersionTag(const Principal& who, const std::string& name,
                                            int64_t version, const std::string& key,
                                            const std::optional<std::string>& value) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, Access::Write));
  HANGAR_TRY(registry::CheckTag(key, value ? &*value : nullptr));
  HANGAR_ASSIGN_OR_RETURN(auto v, Version(seen, version));
  if (value && !v.tags.count(key) && v.tags.size() >= 100)
    return MakeError(ErrorCode::BadRequest, "a version holds at most 100 tags");
  return store_.SetVersionTag(seen.model.id, version, key, value, Now());
}

Result<void> RegistryService::CanMoveAliases(const Principal& who, const Seen& seen) {
  if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "sign in to move an alias");
  if (who.CanWrite() && seen.access == Access::Admin) return {};
  if (who.CanWrite()) {
    HANGAR_ASSIGN_OR_RETURN(auto role, store_.GetRole(seen.model.id, who.user_id));
    if (role == "deployer") return {};
  }
  return MakeError(ErrorCode::Forbidden, "moving an alias of '" + seen.model.name +
                                             "' needs admin rights on '" + seen.model.owner +
                                             "' or the deployer role on the model, and a write "
                                             "token");
}

Result<int64_t> RegistryService::MoveAlias(const Principal& who, const std::string& name,
                                           const std::string& alias,
                                           std::optional<int64_t> version) {
  auto changed = Changing();
  HANGAR_TRY(registry::CheckAlias(alias));
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  HANGAR_TRY(CanMoveAliases(who, seen));
  if (version) HANGAR_TRY(Version(seen, *version));
  auto moved = store_.MoveAlias(seen.model.id, alias, version, who.user_id, who.name, Now());
  if (!moved && moved.error().code == ErrorCode::NotFound && !version)
    return MakeError(ErrorCode::NotFound, "Registered model alias " + alias + " not found.");
  return moved;
}

Result<std::vector<db::AliasEvent>> RegistryService::AliasLog(const Principal& who,
                                                              const std::string& name,
                                                              int64_t before_id, int64_t limit) {
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  return store_.ListAliasEvents(seen.model.id, before_id, std::clamp<int64_t>(limit, 1, 1001));
}

Result<db::VersionRecord> RegistryService::TransitionStage(const Principal& who,
                                                           const std::string& name, int64_t version,
                                                           Stage stage, bool archive_existing) {
  auto changed = Changing();
  // A stage is an alias (or the archived flag beside them): moving one needs the rights
  // to move aliases, as a deployer has, whatever the stage.
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  HANGAR_TRY(CanMoveAliases(who, seen));
  HANGAR_TRY(Version(seen, version));
  const int64_t now = Now();
  const char* target = stage == Stage::Staging      ? kStaging
                       : stage == Stage::Production ? kProduction
                                                    : nullptr;
  // The version leaves the stage it is in: at most one stage per version, as in MLflow.
  for (const char* alias : {kStaging, kProduction}) {
    auto it = seen.model.aliases.find(alias);
    if (it == seen.model.aliases.end() || it->second != version || alias == target) continue;
    HANGAR_TRY(store_.MoveAlias(seen.model.id, alias, std::nullopt, who.user_id, who.name, now));
  }
  if (target) {
    HANGAR_ASSIGN_OR_RETURN(int64_t prior, store_.MoveAlias(seen.model.id, target, version,
                                                            who.user_id, who.name, now));
    if (archive_existing && prior != 0 && prior != version)
      HANGAR_TRY(store_.UpdateVersion(seen.model.id, prior, std::nullopt, true, now));
  }
  HANGAR_TRY(
      store_.UpdateVersion(seen.model.id, version, std::nullopt, stage == Stage::Archived, now));
  return Version(seen, version);
}

Result<std::vector<db::VersionRecord>> RegistryService::LatestVersions(
    const Principal& who, const std::string& name, const std::vector<Stage>& stages) {
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  db::VersionQuery q;
  q.model_id = seen.model.id;
  q.include_all_private = true;  // the model is seen already
  q.limit = kMaxVersionsRead;
  HANGAR_ASSIGN_OR_RETURN(auto versions, store_.ListVersions(q));  // newest first
  std::vector<Stage> wanted = stages;
  if (wanted.empty()) wanted = {Stage::None, Stage::Staging, Stage::Production, Stage::Archived};
  std::vector<db::VersionRecord> out;
  for (Stage stage : wanted) {
    auto it = std::find_if(versions.begin(), versions.end(), [&](const db::VersionRecord& v) {
      return StageOf(seen.model, v) == stage;
    });
    if (it != versions.end()) out.push_back(*it);
  }
  return out;
}

}  // namespace hangar::services
