#pragma once
// RegistryStore: the model registry's metadata (issue 16, docs/registry.md): registered
// models owned by a user or org namespace, their numbered versions (each pinning a hub repo
// at one commit, with lineage), tags on both, aliases naming one version each, the audit log
// of alias moves, and per-model roles. Interface only; SqlRegistryStore (db/sql/, on SQLite or
// PostgreSQL) implements it.
//
// Timestamps are unix milliseconds (MLflow's unit). Version numbers start at 1 per model
// and are never reused, also after a delete.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace hangar::db {

// A registered model. `tags` and `aliases` (alias → version) are filled by the reads.
struct ModelRecord {
  int64_t id = 0;
  std::string name;  // unique hub-wide
  int64_t owner_id = 0;
  std::string owner;  // the owner's namespace name (read-only: from users)
  std::string description;
  bool is_private = false;  // the model's own flag (docs/registry.md §visibility)
  // Whether a version pins a private repo (read-only: computed by the reads).
  bool pins_private = false;
  int64_t created_by = 0;       // user id, 0 when unknown
  std::string created_by_name;  // their name now, "" when unknown (read-only)
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::map<std::string, std::string> tags;
  std::map<std::string, int64_t> aliases;
};

// A training dataset of a version, pinned at a commit.
struct VersionDataset {
  int64_t repo_id = 0;  // 0 when the repo was deleted since
  std::string repo;     // "ns/name" as registered
  std::string commit;   // 40 hex
};

// One version of a registered model.
struct VersionRecord {
  int64_t model_id = 0;
  int64_t version = 0;    // assigned by CreateVersion
  int64_t repo_id = 0;    // the pinned repo; 0 when it was deleted since
  std::string repo_type;  // "model", "dataset", "space"
  std::string repo;       // "ns/name" as registered
  std::string commit;     // 40 hex
  std::string description;
  std::string status = "READY";  // MLflow's ModelVersionStatus name
  std::string status_message;
  std::string run_id;    // MLflow run id, free-form
  std::string run_link;  // free-form source / run link
  // Lineage: the base model version, 0/0 when none.
  int64_t base_model_id = 0;
  int64_t base_version = 0;
  std::vector<VersionDataset> datasets;
  bool archived = false;  // MLflow's legacy "Archived" stage
  int64_t created_by = 0;
  std::string created_by_name;  // (read-only) as ModelRecord's
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::map<std::string, std::string> tags;  // filled by the reads
};

// A listing of models: filters, visibility and a page. Empty filters match all.
struct ModelQuery {
  std::string owner;        // the owner's namespace name
  std::string name_like;    // a LIKE pattern (% and _, \ escapes) over the name, any case
  std::string name_equals;  // exact name
  std::string tag_key;      // a tag with this key …
  std::optional<std::string> tag_value;  // … and, when set, this value
  // Visibility: private models (own flag or pinning a private repo) are listed only when
  // include_all_private, or their owner's id is in readable_owner_ids.
  bool include_all_private = false;
  std::vector<int64_t> readable_owner_ids;
  bool newest_first = false;  // by updated_at descending, else by name
  int64_t offset = 0;
  int64_t limit = 100;
};

// A listing of versions (MLflow search-model-versions): filters and a page.
struct VersionQuery {
  std::optional<int64_t> model_id;
  std::optional<std::string> run_id;
  std::string repo;  // "ns/name"
  std::string tag_key;
  std::optional<std::string> tag_value;
  bool include_all_private = false;  // as ModelQuery, applied to the version's model
  std::vector<int64_t> readable_owner_ids;
  int64_t offset = 0;
  int64_t limit = 100;
};

// One alias move: from → to (0: the alias did not exist / was deleted).
struct AliasEvent {
  int64_t id = 0;
  std::string alias;
  int64_t from_version = 0;
  int64_t to_version = 0;
  int64_t actor_id = 0;
  std::string actor;  // the actor's name at the time
  int64_t at = 0;
};

// Thread-safe; calls block on I/O. Errors: Internal for storage failures, plus those listed.
class RegistryStore {
 public:
  virtual ~RegistryStore() = default;

  // Inserts `m` (name, owner_id, description, is_private, created_by, created_at, tags);
  // returns its id. Errors: Conflict (the name exists), NotFound (no such owner).
  virtual Result<int64_t> CreateModel(const ModelRecord& m) = 0;
  // As CreateModel then CreateVersion (v.model_id ignored), in one transaction: the model
  // never exists without its first version. Errors: as CreateModel.
  virtual Result<int64_t> CreateModelWithVersion(const ModelRecord& m, const VersionRecord& v) = 0;
  // The model named `name` with its tags and aliases, or nullopt.
  virtual Result<std::optional<ModelRecord>> GetModel(const std::string& name) = 0;
  // As GetModel, by id.
  virtual Result<std::optional<ModelRecord>> GetModelById(int64_t id) = 0;
  // The models matching `q`, in its order.
  virtual Result<std::vector<ModelRecord>> ListModels(const ModelQuery& q) = 0;
  // Sets the description (when given) and the name (when given) of model `id`, and its
  // updated_at to `now`. Errors: NotFound, Conflict (the new name exists).
  virtual Result<void> UpdateModel(int64_t id, const std::optional<std::string>& description,
                                   const std::optional<std::string>& new_name, int64_t now) = 0;
  // Deletes model `id` with its versions, tags, aliases, log and roles. Errors: NotFound.
  virtual Result<void> DeleteModel(int64_t id) = 0;
  // Sets (value given) or deletes (nullopt) a tag of model `id`. Errors: NotFound (the
  // model; or the tag, when deleting one that is not there).
  virtual Result<void> SetModelTag(int64_t id, const std::string& key,
                                   const std::optional<std::string>& value, int64_t now) = 0;

  // Inserts `v` as the model's next version, with its datasets and tags, and moves the
  // model's updated_at to v.created_at; returns the version number. Errors: NotFound.
  virtual Result<int64_t> CreateVersion(const VersionRecord& v) = 0;
  virtual Result<std::optional<VersionRecord>> GetVersion(int64_t model_id, int64_t version) = 0;
  // Versions matching `q`, newest first within a model (model name, then version desc).
  virtual Result<std::vector<VersionRecord>> ListVersions(const VersionQuery& q) = 0;
  // Sets the description and/or the archived flag of a version. Errors: NotFound.
  virtual Result<void> UpdateVersion(int64_t model_id, int64_t version,
                                     const std::optional<std::string>& description,
                                     std::optional<bool> archived, int64_t now) = 0;
  // Deletes a version; aliases naming it go with it (each logged as moved to 0 by
  // `actor_id`/`actor`). Errors: NotFound.
  virtual Result<void> DeleteVersion(int64_t model_id, int64_t version, int64_t actor_id,
                                     const std::string& actor, int64_t now) = 0;
  // As SetModelTag, on a version.
  virtual Result<void> SetVersionTag(int64_t model_id, int64_t version, const std::string& key,
                                     const std::optional<std::string>& value, int64_t now) = 0;

  // Points `alias` of model `model_id` at `version` (nullopt: deletes it) and appends the
  // move to the log, in one transaction; returns the version it pointed at before (0:
  // none). Pointing it where it points already writes nothing. Errors: NotFound (the
  // model, the version, or the alias when deleting).
  virtual Result<int64_t> MoveAlias(int64_t model_id, const std::string& alias,
                                    std::optional<int64_t> version, int64_t actor_id,
                                    const std::string& actor, int64_t now) = 0;
  // The model's alias moves, newest first, at most `limit`, with ids below `before_id`
  // (0: from the newest).
  virtual Result<std::vector<AliasEvent>> ListAliasEvents(int64_t model_id, int64_t before_id,
                                                          int64_t limit) = 0;

  // The role `user_id` holds on model `model_id` ("deployer"), or nullopt.
  virtual Result<std::optional<std::string>> GetRole(int64_t model_id, int64_t user_id) = 0;
  // Gives (role given) or takes (nullopt) a role. Errors: NotFound (model or user).
  virtual Result<void> SetRole(int64_t model_id, int64_t user_id,
                               const std::optional<std::string>& role) = 0;
};

}  // namespace hangar::db
