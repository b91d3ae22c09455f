#pragma once
// RegistryService: the model registry's rules (issue 16, docs/registry.md). A registered
// model belongs to a user or org namespace; each version pins a hub repo at the commit its
// revision named when it was registered (so it is immutable and browsable); aliases name
// one version each and are moved by the namespace's admins or the model's deployers, each
// move logged. MLflow's legacy stages are aliases (Staging → `staging`, Production →
// `production`) plus an archived flag.
//
// Who may do what (§access): a model is private when flagged so or when a version pins a
// private repo; a private model is seen only by readers of its owner namespace, and is
// NotFound to everyone else, exactly like a private repo. Writes need Write on the owner
// namespace (a write token or session); deleting or renaming a model and giving roles need
// Admin; moving an alias (and so a stage) needs Admin or the `deployer` role on the model.

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/principal.h"
#include "core/result.h"
#include "db/registry_store.h"
#include "db/user_store.h"
#include "services/auth/access_policy.h"
#include "services/content/content_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services {

// A model to create.
struct NewModel {
  std::string name;   // [A-Za-z0-9][A-Za-z0-9._-]*, at most 128 characters
  std::string owner;  // a user or org namespace; "" = the caller's own
  std::string description;
  bool is_private = false;
  std::map<std::string, std::string> tags;
};

// A version to register: the repo and the revision whose commit it pins, and its lineage.
struct NewVersion {
  RepoType repo_type = RepoType::Model;
  std::string repo;      // "ns/name"
  std::string revision;  // branch, tag or commit; "" = the default branch
  std::string description;
  std::string run_id;
  std::string run_link;               // free-form source / run link
  std::vector<std::string> datasets;  // "ns/name" or "ns/name@revision", dataset repos
  std::string base_model;             // "name/version" or "name@alias"; "" = none
  std::map<std::string, std::string> tags;
};

// A page of models or versions; `next_offset` is 0 when it is the last page.
struct ModelPage {
  std::vector<db::ModelRecord> models;
  int64_t next_offset = 0;
};
struct VersionPage {
  std::vector<db::VersionRecord> versions;
  std::map<int64_t, db::ModelRecord> models;  // the versions' models, by id
  int64_t next_offset = 0;
};

// Filters of a model listing.
struct ModelFilter {
  std::string owner;
  std::string search;  // substring of the name, any case
  std::string like;    // a LIKE pattern over the name (MLflow's filter), any case; wins
  std::string name;    // exact name
  std::string tag_key;
  std::optional<std::string> tag_value;
  bool newest_first = false;
  int64_t offset = 0;
  int64_t limit = 50;  // 1…1000
};

// Filters of a version listing.
struct VersionFilter {
  std::string name;  // the model; "" = every model the caller may see
  std::optional<std::string> run_id;
  std::string repo;
  std::string tag_key;
  std::optional<std::string> tag_value;
  int64_t offset = 0;
  int64_t limit = 100;  // 1…10000
};

// A version and its model.
using Registered = std::pair<db::ModelRecord, db::VersionRecord>;

// MLflow's legacy stages (model_registry.proto TransitionModelVersionStage).
enum class Stage { None, Staging, Production, Archived };
// "None", "Staging", "Production", "Archived".
std::string_view StageName(Stage s);
// Any case of a stage's name; nullopt for anything else.
std::optional<Stage> ParseStage(std::string_view s);
// The stage a version of `model` is in: Production or Staging when that alias names it
// (Production first), Archived when flagged, else None.
Stage StageOf(const db::ModelRecord& model, const db::VersionRecord& v);

// A file or directory of a version's artifacts: a repo's tree at one commit, named
// "<collection>/<ns>/<name>/<commit>[/<path>]" (collection "models", "datasets" or
// "spaces"; commit 40 hex), the form registry_json.h ArtifactUri gives.
struct ArtifactPath {
  RepoHandle repo;
  Oid commit;
  std::string path;  // inside the repo; "" = its root
};

// The parts of an artifact path, `<models|datasets|spaces>/<ns>/<name>/<commit>[/<path>]`
// (registry_json.h ArtifactUri), before any repo is opened.
struct ArtifactRef {
  RepoId repo;
  Oid commit;
  std::string path;  // "" = the root; a trailing '/' dropped
};
// Parses `artifact_path`. Errors: BadRequest (not that form, a commit not 40 hex, a repo
// name or a path the hub's rules refuse, e.g. with `..`).
Result<ArtifactRef> ParseArtifactPath(std::string_view artifact_path);

struct RegistryOptions {
  std::function<int64_t()> now_millis;  // NowUnixMillis by default; tests pass their own
};

// Thread-safe; one per process. Calls block on the database and git. Errors of every call,
// besides those named: NotFound for a model (or version, alias) that does not exist or that
// `who` may not see; Unauthorized (anonymous) / Forbidden (too little access) for writes;
// BadRequest naming the field for invalid input; Internal.
class RegistryService {
 public:
  RegistryService(db::RegistryStore& store, db::UserStore& users, AccessPolicy& access,
                  RepoService& repos, ContentService& content, RegistryOptions options = {});

  // Errors: Conflict (the name is taken), NotFound (no such owner).
  Result<db::ModelRecord> CreateModel(const Principal& who, const NewModel& m);
  Result<db::ModelRecord> GetModel(const Principal& who, const std::string& name);
  Result<ModelPage> ListModels(const Principal& who, const ModelFilter& f);
  // Sets the description (Write) and/or renames (Admin). Errors: Conflict (new name taken).
  Result<db::ModelRecord> UpdateModel(const Principal& who, const std::string& name,
                                      const std::optional<std::string>& description,
                                      const std::optional<std::string>& new_name);
  Result<void> DeleteModel(const Principal& who, const std::string& name);
  // Sets (value given) or deletes a tag.
  Result<void> SetModelTag(const Principal& who, const std::string& name, const std::string& key,
                           const std::optional<std::string>& value);

  // Registers the next version of model `name`, pinning v.repo at the commit v.revision
  // names now. The caller must be able to read the repo (RepoNotFound otherwise) and each
  // dataset; a private repo may be pinned only by a model of its own namespace (Forbidden).
  // Errors: RevisionNotFound.
  // Returns the version with its model as it is after the registration.
  Result<Registered> RegisterVersion(const Principal& who, const std::string& name,
                                     const NewVersion& v);
  // Registers `v` into model `m`, creating the model when it does not exist yet (as
  // CreateModel; nothing is written when the version cannot be pinned). Errors: Conflict
  // (the model exists with another owner, privacy, description or tags than `m` gives).
  Result<Registered> Register(const Principal& who, const NewModel& m, const NewVersion& v);
  Result<db::VersionRecord> GetVersion(const Principal& who, const std::string& name,
                                       int64_t version);
  // The version `alias` names; "latest" is the highest version.
  Result<db::VersionRecord> VersionByAlias(const Principal& who, const std::string& name,
                                           const std::string& alias);
  Result<VersionPage> ListVersions(const Principal& who, const VersionFilter& f);
  Result<db::VersionRecord> UpdateVersion(const Principal& who, const std::string& name,
                                          int64_t version, const std::string& description);
  Result<void> DeleteVersion(const Principal& who, const std::string& name, int64_t version);
  Result<void> SetVersionTag(const Principal& who, const std::string& name, int64_t version,
                             const std::string& key, const std::optional<std::string>& value);

  // Points `alias` at `version` (nullopt: deletes it), atomically, logged; returns the
  // version it named before (0: none). Errors: Forbidden (neither Admin nor deployer).
  Result<int64_t> MoveAlias(const Principal& who, const std::string& name, const std::string& alias,
                            std::optional<int64_t> version);
  // The alias log, newest first (before_id 0: from the newest).
  Result<std::vector<db::AliasEvent>> AliasLog(const Principal& who, const std::string& name,
                                               int64_t before_id, int64_t limit);
  // MLflow's transition-stage, with the rights to move aliases: the version leaves its
  // stage alias; Staging/Production move that alias to it (with `archive_existing`, the
  // version it named before is archived); its archived flag is set for Archived, else
  // cleared.
  Result<db::VersionRecord> TransitionStage(const Principal& who, const std::string& name,
                                            int64_t version, Stage stage, bool archive_existing);
  // The newest version in each of `stages` (all four when empty), MLflow's
  // get-latest-versions.
  Result<std::vector<db::VersionRecord>> LatestVersions(const Principal& who,
                                                        const std::string& name,
                                                        const std::vector<Stage>& stages);
  // MLflow's artifact proxy, read-only: the repo and commit `artifact_path` names, opened
  // as `who` (RepoNotFound when they cannot read it, as everywhere). Errors: BadRequest
  // (not that form, `..`, or a commit not given as 40 hex), RevisionNotFound.
  Result<ArtifactPath> Artifact(const Principal& who, std::string_view artifact_path);
  // The entries directly under a directory of the artifacts. Errors: EntryNotFound.
  Result<EntryList> ListArtifacts(const ArtifactPath& at);
  // A file of the artifacts with its bytes. Errors: EntryNotFound (missing, a directory,
  // or its LFS object not stored).
  Result<std::pair<Entry, std::unique_ptr<ByteSource>>> OpenArtifact(const ArtifactPath& at);

  // A number that grows with every change to the registry (and to what embeds it: the
  // gateway calls NoteChange after its writes). An answer computed after reading
  // generation g is current while Generation() is still g; changes made outside the
  // registry (a repo made private) are not counted, so a cached answer also expires.
  uint64_t Generation() const { return generation_.load(std::memory_order_acquire); }
  void NoteChange() { generation_.fetch_add(1, std::memory_order_acq_rel); }

  // Which private models `who` may see, for listings of things that follow a model (the
  // gateway's routes): all of them, or those of the returned owner ids.
  struct Visibility {
    bool all = false;
    std::vector<int64_t> owner_ids;
  };
  Result<Visibility> VisibleModels(const Principal& who);

  // Gives (role "deployer") or takes (nullopt) a role on the model. Needs Admin.
  // Errors: NotFound (no such user), BadRequest (another role).
  Result<void> SetRole(const Principal& who, const std::string& name, const std::string& user,
                       const std::optional<std::string>& role);

 private:
  struct Seen;  // a model and the caller's access to its namespace
  Result<Seen> See(const Principal& who, const std::string& name);
  Result<Seen> SeeFor(const Principal& who, const std::string& name, Access needed);
  Result<void> CanMoveAliases(const Principal& who, const Seen& seen);
  Result<db::VersionRecord> Version(const Seen& seen, int64_t version);
  Result<db::VersionRecord> Pin(const Principal& who, const db::ModelRecord& model,
                                const NewVersion& v);
  Result<db::ModelRecord> Proposed(const Principal& who, const NewModel& m);  // checked, unwritten
  Result<db::ModelRecord> Insert(const db::ModelRecord& rec);
  Result<Registered> Fresh(int64_t model_id, int64_t version);
  Result<int64_t> OwnerId(const std::string& owner);
  int64_t Now() const;

  // Declared first in every write: bumps the generation when the call returns, whatever
  // it returned (a refused write costs cached answers nothing but a recomputation).
  struct ChangeGuard {
    RegistryService* service;
    ~ChangeGuard() { service->NoteChange(); }
  };
  [[nodiscard]] ChangeGuard Changing() { return ChangeGuard{this}; }

  std::atomic<uint64_t> generation_{0};
  db::RegistryStore& store_;
  db::UserStore& users_;
  AccessPolicy& access_;
  RepoService& repos_;
  ContentService& content_;
  RegistryOptions options_;
};

}  // namespace hangar::services
