#include "db/sql/sql_registry_store.h"

#include "db/sql/sql_registry_parts.h"
#include "db/sql/sql_where.h"

namespace hangar::db {
namespace {

// The columns ReadModel reads (pins_private: PinsPrivateSql).
const std::string kModelSelect =
    "SELECT m.id, m.name, m.owner_id, u.name, m.description, "
    "m.private, " +
    PinsPrivateSql("m") +
    ", m.created_by, m.created_at, m.updated_at, COALESCE((SELECT cu.name FROM users cu WHERE "
    "cu.id = m.created_by), '') FROM "
    "registered_models m JOIN users u ON u.id = m.owner_id";

constexpr const char kVersionCols[] =
    "v.model_id, v.version, COALESCE(v.repo_id, 0), v.repo_type, v.repo, v.commit_sha, "
    "v.description, v.status, v.status_message, v.run_id, v.run_link, v.base_model_id, "
    "v.base_version, v.archived, v.created_by, v.created_at, v.updated_at, COALESCE((SELECT "
    "cu.name FROM users cu WHERE cu.id = v.created_by), '')";

Error ModelMissing(int64_t id) {
  return MakeError(ErrorCode::NotFound, "registered model #" + std::to_string(id) + " not found");
}

Error VersionMissing(int64_t model_id, int64_t version) {
  return MakeError(ErrorCode::NotFound, "version " + std::to_string(version) +
                                            " of registered model #" + std::to_string(model_id) +
                                            " not found");
}

ModelRecord ReadModel(const Stmt& s) {
  ModelRecord m;
  m.id = s.Int(0);
  m.name = s.Text(1);
  m.owner_id = s.Int(2);
  m.owner = s.Text(3);
  m.description = s.Text(4);
  m.is_private = s.Int(5) != 0;
  m.pins_private = s.Int(6) != 0;
  m.created_by = s.Int(7);
  m.created_at = s.Int(8);
  m.updated_at = s.Int(9);
  m.created_by_name = s.Text(10);
  return m;
}

VersionRecord ReadVersion(const Stmt& s) {
  VersionRecord v;
  v.model_id = s.Int(0);
  v.version = s.Int(1);
  v.repo_id = s.Int(2);
  v.repo_type = s.Text(3);
  v.repo = s.Text(4);
  v.commit = s.Text(5);
  v.description = s.Text(6);
  v.status = s.Text(7);
  v.status_message = s.Text(8);
  v.run_id = s.Text(9);
  v.run_link = s.Text(10);
  v.base_model_id = s.Int(11);
  v.base_version = s.Int(12);
  v.archived = s.Int(13) != 0;
  v.created_by = s.Int(14);
  v.created_at = s.Int(15);
  v.updated_at = s.Int(16);
  v.created_by_name = s.Text(17);
  return v;
}

// The model `s` (a bound kModelSelect) finds, with its tags and aliases, or nullopt.
Result<std::optional<ModelRecord>> ReadOneModel(Connection& c, Stmt& s) {
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<ModelRecord>();
  std::vector<ModelRecord> one{ReadModel(s)};
  HANGAR_TRY(ReadModelsParts(c, one));
  return std::optional<ModelRecord>(std::move(one.front()));
}

// Sets (value given) or deletes one row of tag table `table`, whose leading key columns
// `cols` (before key and value) take `ids`. Errors: NotFound (deleting a missing tag).
Result<void> PutTag(Connection& c, const std::string& table, const std::vector<std::string>& cols,
                    const std::vector<int64_t>& ids, const std::string& key,
                    const std::optional<std::string>& value) {
  std::string names, marks, match;
  for (const auto& col : cols) {
    names += col + ", ";
    marks += "?, ";
    match += col + " = ? AND ";
  }
  auto s =
      value ? c.Prepare("INSERT INTO " + table + " (" + names + "key, value) VALUES (" + marks +
                        "?, ?) ON CONFLICT (" + names + "key) DO UPDATE SET value = excluded.value")
            : c.Prepare("DELETE FROM " + table + " WHERE " + match + "key = ?");
  if (!s) return std::move(s).error();
  int i = 1;
  for (int64_t id : ids) s->Bind(i++, id);
  s->Bind(i, key);
  if (value) s->Bind(i + 1, *value);
  HANGAR_TRY(s->Run());
  if (!value && c.Changes() == 0)
    return MakeError(ErrorCode::NotFound, "tag '" + key + "' not found");
  return {};
}

Result<void> TouchModel(Connection& c, int64_t id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c.Prepare("UPDATE registered_models SET updated_at = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, now).Bind(2, id).Run());
  if (c.Changes() == 0) return ModelMissing(id);
  return {};
}

Result<bool> VersionExists(Connection& c, int64_t model_id, int64_t version) {
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c.Prepare("SELECT 1 FROM model_versions WHERE model_id = ? AND version = ?"));
  s.Bind(1, model_id).Bind(2, version);
  return s.Step();
}

Result<void> LogAlias(Connection& c, int64_t model_id, const std::string& alias, int64_t from,
                      int64_t to, int64_t actor_id, const std::string& actor, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c.Prepare("INSERT INTO model_alias_events (model_id, alias, from_version, "
                        "to_version, actor_id, actor, at) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  return s.Bind(1, model_id)
      .Bind(2, alias)
      .Bind(3, from)
      .Bind(4, to)
      .Bind(5, actor_id)
      .Bind(6, actor)
      .Bind(7, now)
      .Run();
}

// Inserts `m` with its tags; returns its id (a transaction is open on `c`).
Result<int64_t> InsertModel(Connection& c, const ModelRecord& m) {
  {
    // INSERT … SELECT from users: a missing owner inserts nothing instead of an FK error.
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c.Prepare("INSERT INTO registered_models (name, owner_id, description, "
                          "private, created_by, created_at, updated_at) SELECT ?, id, ?, ?, "
                          "?, ?, ? FROM users WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, m.name)
                   .Bind(2, m.description)
                   .Bind(3, int64_t{m.is_private ? 1 : 0})
                   .Bind(4, m.created_by)
                   .Bind(5, m.created_at)
                   .Bind(6, m.created_at)
                   .Bind(7, m.owner_id)
                   .Run());
    if (c.Changes() == 0)
      return MakeError(ErrorCode::NotFound, "owner #" + std::to_string(m.owner_id) + " not found");
  }
  HANGAR_ASSIGN_OR_RETURN(int64_t id, c.LastInsertId());
  for (const auto& [key, value] : m.tags)
    HANGAR_TRY(PutTag(c, "registered_model_tags", {"model_id"}, {id}, key, value));
  return id;
}

// Inserts `v` as its model's next version with its datasets and tags; returns the number
// (a transaction is open on `c`).
Result<int64_t> InsertVersion(Connection& c, const VersionRecord& v) {
  int64_t number = 0;
  {
    HANGAR_ASSIGN_OR_RETURN(auto s,
                            c.Prepare("SELECT next_version FROM registered_models WHERE id = ?"));
    s.Bind(1, v.model_id);
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return ModelMissing(v.model_id);
    number = s.Int(0);
  }
  {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c.Prepare("UPDATE registered_models SET next_version = ?, updated_at = ? "
                          "WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, number + 1).Bind(2, v.created_at).Bind(3, v.model_id).Run());
  }
  {
    HANGAR_ASSIGN_OR_RETURN(
        auto s,
        c.Prepare("INSERT INTO model_versions (model_id, version, repo_id, repo_type, repo, "
                  "commit_sha, description, status, status_message, run_id, run_link, "
                  "base_model_id, base_version, archived, created_by, created_at, updated_at) "
                  "VALUES (?, ?, NULLIF(?, 0), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    HANGAR_TRY(s.Bind(1, v.model_id)
                   .Bind(2, number)
                   .Bind(3, v.repo_id)
                   .Bind(4, v.repo_type)
                   .Bind(5, v.repo)
                   .Bind(6, v.commit)
                   .Bind(7, v.description)
                   .Bind(8, v.status)
                   .Bind(9, v.status_message)
                   .Bind(10, v.run_id)
                   .Bind(11, v.run_link)
                   .Bind(12, v.base_model_id)
                   .Bind(13, v.base_version)
                   .Bind(14, int64_t{v.archived ? 1 : 0})
                   .Bind(15, v.created_by)
                   .Bind(16, v.created_at)
                   .Bind(17, v.created_at)
                   .Run());
  }
  for (size_t i = 0; i < v.datasets.size(); ++i) {
    const VersionDataset& d = v.datasets[i];
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c.Prepare("INSERT INTO model_version_datasets (model_id, version, position, "
                          "repo_id, repo, commit_sha) VALUES (?, ?, ?, NULLIF(?, 0), ?, ?)"));
    HANGAR_TRY(s.Bind(1, v.model_id)
                   .Bind(2, number)
                   .Bind(3, static_cast<int64_t>(i))
                   .Bind(4, d.repo_id)
                   .Bind(5, d.repo)
                   .Bind(6, d.commit)
                   .Run());
  }
  for (const auto& [key, value] : v.tags)
    HANGAR_TRY(
        PutTag(c, "model_version_tags", {"model_id", "version"}, {v.model_id, number}, key, value));
  return number;
}

}  // namespace

Result<int64_t> SqlRegistryStore::CreateModel(const ModelRecord& m) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&] { return InsertModel(*c, m); });
}

Result<int64_t> SqlRegistryStore::CreateModelWithVersion(const ModelRecord& m,
                                                         const VersionRecord& v) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<int64_t> {
    HANGAR_ASSIGN_OR_RETURN(int64_t id, InsertModel(*c, m));
    VersionRecord first = v;
    first.model_id = id;
    HANGAR_TRY(InsertVersion(*c, first));
    return id;
  });
}

Result<std::optional<ModelRecord>> SqlRegistryStore::GetModel(const std::string& name) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return InReadTransaction(*c, [&]() -> Result<std::optional<ModelRecord>> {
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kModelSelect + " WHERE m.name = ?"));
    s.Bind(1, name);
    return ReadOneModel(*c, s);
  });
}

Result<std::optional<ModelRecord>> SqlRegistryStore::GetModelById(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return InReadTransaction(*c, [&]() -> Result<std::optional<ModelRecord>> {
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kModelSelect + " WHERE m.id = ?"));
    s.Bind(1, id);
    return ReadOneModel(*c, s);
  });
}

Result<std::vector<ModelRecord>> SqlRegistryStore::ListModels(const ModelQuery& q) {
  SqlWhere w;
  if (!q.owner.empty()) w.Add("u.name = ?", q.owner);
  if (!q.name_equals.empty()) w.Add("m.name = ?", q.name_equals);
  if (!q.name_like.empty()) w.Add("LOWER(m.name) LIKE LOWER(?) ESCAPE '\\'", q.name_like);
  if (!q.tag_key.empty() && q.tag_value) {
    w.Add(
        "EXISTS (SELECT 1 FROM registered_model_tags t WHERE t.model_id = m.id AND t.key = ? "
        "AND t.value = ?)",
        q.tag_key);
    w.binds.emplace_back(*q.tag_value);
  } else if (!q.tag_key.empty()) {
    w.Add("EXISTS (SELECT 1 FROM registered_model_tags t WHERE t.model_id = m.id AND t.key = ?)",
          q.tag_key);
  }
  w.Visibility(q.include_all_private, q.readable_owner_ids, "m");
  std::string sql = kModelSelect + w.sql +
                    (q.newest_first ? " ORDER BY m.updated_at DESC, m.name" : " ORDER BY m.name") +
                    " LIMIT ? OFFSET ?";
  return ReadPage<ModelRecord>(*pool_, sql, w, q.limit, q.offset, ReadModel, ReadModelsParts);
}

Result<void> SqlRegistryStore::UpdateModel(int64_t id,
                                           const std::optional<std::string>& description,
                                           const std::optional<std::string>& new_name,
                                           int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_TRY(TouchModel(*c, id, now));
    if (description) {
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare("UPDATE registered_models SET description = ? WHERE id = ?"));
      HANGAR_TRY(s.Bind(1, *description).Bind(2, id).Run());
    }
    if (new_name) {
      HANGAR_ASSIGN_OR_RETURN(auto s,
                              c->Prepare("UPDATE registered_models SET name = ? WHERE id = ?"));
      HANGAR_TRY(s.Bind(1, *new_name).Bind(2, id).Run());
    }
    return {};
  });
}

Result<void> SqlRegistryStore::DeleteModel(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM registered_models WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, id).Run());
  if (c->Changes() == 0) return ModelMissing(id);
  return {};
}

Result<void> SqlRegistryStore::SetModelTag(int64_t id, const std::string& key,
                                           const std::optional<std::string>& value, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_TRY(TouchModel(*c, id, now));
    return PutTag(*c, "registered_model_tags", {"model_id"}, {id}, key, value);
  });
}

Result<int64_t> SqlRegistryStore::CreateVersion(const VersionRecord& v) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&] { return InsertVersion(*c, v); });
}

Result<std::optional<VersionRecord>> SqlRegistryStore::GetVersion(int64_t model_id,
                                                                  int64_t version) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return InReadTransaction(*c, [&]() -> Result<std::optional<VersionRecord>> {
    std::vector<VersionRecord> one;
    {
      HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(std::string("SELECT ") + kVersionCols +
                                                 " FROM model_versions v WHERE v.model_id = ? "
                                                 "AND v.version = ?"));
      s.Bind(1, model_id).Bind(2, version);
      HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return std::optional<VersionRecord>();
      one.push_back(ReadVersion(s));
    }
    HANGAR_TRY(ReadVersionsParts(*c, one));
    return std::optional<VersionRecord>(std::move(one.front()));
  });
}

Result<std::vector<VersionRecord>> SqlRegistryStore::ListVersions(const VersionQuery& q) {
  SqlWhere w;
  if (q.model_id) w.Add("v.model_id = ?", *q.model_id);
  if (q.run_id) w.Add("v.run_id = ?", *q.run_id);
  if (!q.repo.empty()) w.Add("v.repo = ?", q.repo);
  if (!q.tag_key.empty()) {
    w.Add(
        "EXISTS (SELECT 1 FROM model_version_tags t WHERE t.model_id = v.model_id AND "
        "t.version = v.version AND t.key = ? AND (? = 0 OR t.value = ?))",
        q.tag_key);
    w.binds.emplace_back(int64_t{q.tag_value ? 1 : 0});
    w.binds.emplace_back(q.tag_value.value_or(""));
  }
  w.Visibility(q.include_all_private, q.readable_owner_ids, "m");
  std::string sql = std::string("SELECT ") + kVersionCols +
                    " FROM model_versions v JOIN registered_models m ON m.id = v.model_id" + w.sql +
                    " ORDER BY m.name, v.version DESC LIMIT ? OFFSET ?";
  return ReadPage<VersionRecord>(*pool_, sql, w, q.limit, q.offset, ReadVersion, ReadVersionsParts);
}

Result<void> SqlRegistryStore::UpdateVersion(int64_t model_id, int64_t version,
                                             const std::optional<std::string>& description,
                                             std::optional<bool> archived, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("UPDATE model_versions SET description = COALESCE(?, description), "
                           "archived = COALESCE(?, archived), updated_at = ? WHERE model_id = ? "
                           "AND version = ?"));
    s.Bind(1, description);
    if (archived)
      s.Bind(2, int64_t{*archived ? 1 : 0});
    else
      s.BindNull(2);
    HANGAR_TRY(s.Bind(3, now).Bind(4, model_id).Bind(5, version).Run());
    if (c->Changes() == 0) return VersionMissing(model_id, version);
    return TouchModel(*c, model_id, now);
  });
}

Result<void> SqlRegistryStore::DeleteVersion(int64_t model_id, int64_t version, int64_t actor_id,
                                             const std::string& actor, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    std::vector<std::string> aliases;
    {
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare("SELECT alias FROM model_aliases WHERE model_id = ? AND version = ?"));
      s.Bind(1, model_id).Bind(2, version);
      while (true) {
        HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
        if (!row) break;
        aliases.push_back(s.Text(0));
      }
    }
    // The aliases go with the version (ON DELETE CASCADE): each is logged as deleted.
    for (const auto& alias : aliases)
      HANGAR_TRY(LogAlias(*c, model_id, alias, version, 0, actor_id, actor, now));
    HANGAR_ASSIGN_OR_RETURN(
        auto d, c->Prepare("DELETE FROM model_versions WHERE model_id = ? AND version = ?"));
    HANGAR_TRY(d.Bind(1, model_id).Bind(2, version).Run());
    if (c->Changes() == 0) return VersionMissing(model_id, version);
    return TouchModel(*c, model_id, now);
  });
}

Result<void> SqlRegistryStore::SetVersionTag(int64_t model_id, int64_t version,
                                             const std::string& key,
                                             const std::optional<std::string>& value, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(bool exists, VersionExists(*c, model_id, version));
    if (!exists) return VersionMissing(model_id, version);
    HANGAR_TRY(
        PutTag(*c, "model_version_tags", {"model_id", "version"}, {model_id, version}, key, value));
    return TouchModel(*c, model_id, now);
  });
}

Result<int64_t> SqlRegistryStore::MoveAlias(int64_t model_id, const std::string& alias,
                                            std::optional<int64_t> version, int64_t actor_id,
                                            const std::string& actor, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<int64_t> {
    int64_t from = 0;
    {
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare("SELECT version FROM model_aliases WHERE model_id = ? AND alias = ?"));
      s.Bind(1, model_id).Bind(2, alias);
      HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
      if (row) from = s.Int(0);
    }
    if (version && from == *version) return from;  // no move: nothing to log
    HANGAR_TRY(TouchModel(*c, model_id, now));
    if (version) {
      HANGAR_ASSIGN_OR_RETURN(bool exists, VersionExists(*c, model_id, *version));
      if (!exists) return VersionMissing(model_id, *version);
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare("INSERT INTO model_aliases (model_id, alias, version) VALUES (?, ?, "
                             "?) ON CONFLICT (model_id, alias) DO UPDATE SET version = "
                             "excluded.version"));
      HANGAR_TRY(s.Bind(1, model_id).Bind(2, alias).Bind(3, *version).Run());
    } else {
      if (from == 0) return MakeError(ErrorCode::NotFound, "alias '" + alias + "' not found");
      HANGAR_ASSIGN_OR_RETURN(
          auto s, c->Prepare("DELETE FROM model_aliases WHERE model_id = ? AND alias = ?"));
      HANGAR_TRY(s.Bind(1, model_id).Bind(2, alias).Run());
    }
    HANGAR_TRY(LogAlias(*c, model_id, alias, from, version.value_or(0), actor_id, actor, now));
    return from;
  });
}

Result<std::vector<AliasEvent>> SqlRegistryStore::ListAliasEvents(int64_t model_id,
                                                                  int64_t before_id,
                                                                  int64_t limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT id, alias, from_version, to_version, actor_id, actor, at FROM "
                         "model_alias_events WHERE model_id = ? AND (? = 0 OR id < ?) ORDER BY "
                         "id DESC LIMIT ?"));
  s.Bind(1, model_id).Bind(2, before_id).Bind(3, before_id).Bind(4, limit);
  std::vector<AliasEvent> out;
  while (true) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(
        AliasEvent{s.Int(0), s.Text(1), s.Int(2), s.Int(3), s.Int(4), s.Text(5), s.Int(6)});
  }
  return out;
}

Result<std::optional<std::string>> SqlRegistryStore::GetRole(int64_t model_id, int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT role FROM model_roles WHERE model_id = ? AND user_id = ?"));
  s.Bind(1, model_id).Bind(2, user_id);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.Text(0));
}

Result<void> SqlRegistryStore::SetRole(int64_t model_id, int64_t user_id,
                                       const std::optional<std::string>& role) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  if (!role) {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("DELETE FROM model_roles WHERE model_id = ? AND user_id = ?"));
    return s.Bind(1, model_id).Bind(2, user_id).Run();
  }
  // INSERT … SELECT: a missing model or user inserts nothing instead of an FK error.
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("INSERT INTO model_roles (model_id, user_id, role) SELECT m.id, u.id, ? "
                         "FROM registered_models m, users u WHERE m.id = ? AND u.id = ? ON "
                         "CONFLICT (model_id, user_id) DO UPDATE SET role = excluded.role"));
  HANGAR_TRY(s.Bind(1, *role).Bind(2, model_id).Bind(3, user_id).Run());
  if (c->Changes() == 0) return MakeError(ErrorCode::NotFound, "no such model or user");
  return {};
}

}  // namespace hangar::db
