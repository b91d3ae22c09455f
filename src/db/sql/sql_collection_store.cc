#include "db/sql/sql_collection_store.h"

#include <algorithm>

namespace hangar::db {
namespace {

// A collection with its owner, its index in the owner's list and its item count.
constexpr const char kSelect[] =
    "SELECT c.id, c.owner_id, u.name, u.fullname, u.kind, c.title, c.description, c.private, "
    "c.theme, (SELECT COUNT(*) FROM collections o WHERE o.owner_id = c.owner_id AND "
    "(o.position, o.id) < (c.position, c.id)), c.created_at, c.updated_at, (SELECT COUNT(*) "
    "FROM collection_items n WHERE n.collection_id = c.id) FROM collections c JOIN users u ON "
    "u.id = c.owner_id ";

CollectionRecord ReadCollection(const Stmt& s) {
  CollectionRecord c;
  c.id = s.Int(0);
  c.owner_id = s.Int(1);
  c.owner = s.Text(2);
  c.owner_fullname = s.Text(3);
  c.owner_is_org = s.Text(4) == "org";
  c.title = s.Text(5);
  c.description = s.Text(6);
  c.is_private = s.Int(7) != 0;
  c.theme = s.Text(8);
  c.position = s.Int(9);
  c.created_at = s.Int(10);
  c.updated_at = s.Int(11);
  c.item_count = s.Int(12);
  return c;
}

// The items of one collection (bound first) numbered in their order over all of them, then
// joined with the repo or the collection each names. A visibility filter follows (WHERE).
constexpr const char kSelectItems[] =
    "SELECT i.id, i.collection_id, i.kind, i.pos, i.note, i.created_at, r.id, r.type, "
    "r.namespace, r.name, r.private, r.gated, r.likes, r.downloads, r.last_modified, rc.id, "
    "ru.name, rc.title, rc.private FROM (SELECT x.id, x.collection_id, x.kind, x.repo_id, "
    "x.ref_id, x.note, x.created_at, ROW_NUMBER() OVER (ORDER BY x.position, x.id) - 1 AS pos "
    "FROM collection_items x WHERE x.collection_id = ?) i LEFT JOIN repos r ON r.id = i.repo_id "
    "LEFT JOIN collections rc ON rc.id = i.ref_id LEFT JOIN users ru ON ru.id = rc.owner_id ";

CollectionItemRecord ReadItem(const Stmt& s) {
  CollectionItemRecord it;
  it.id = s.Int(0);
  it.collection_id = s.Int(1);
  it.kind = ParseCollectionItemKind(s.Text(2)).value_or(CollectionItemKind::Model);
  it.position = s.Int(3);
  it.note = s.Text(4);
  it.created_at = s.Int(5);
  if (!s.IsNull(6)) {
    it.repo_id = s.Int(6);
    it.repo_type = ParseRepoType(s.Text(7)).value_or(RepoType::Model);
    it.repo_ns = s.Text(8);
    it.repo_name = s.Text(9);
    it.repo_private = s.Int(10) != 0;
    it.repo_gated = s.Text(11);
    it.repo_likes = s.Int(12);
    it.repo_downloads = s.Int(13);
    it.repo_last_modified = s.Int(14);
  }
  if (!s.IsNull(15)) {
    it.ref_id = s.Int(15);
    it.ref_owner = s.Text(16);
    it.ref_title = s.Text(17);
    it.ref_private = s.Int(18) != 0;
  }
  return it;
}

// " IN (?, ?, …)" for `n` values (n > 0).
std::string InList(size_t n) {
  std::string sql = " IN (?";
  for (size_t i = 1; i < n; ++i) sql += ", ?";
  return sql + ")";
}

// Whether the namespace in column `ns_column` is one `v` reads privately: its parameters are
// the readable namespaces (BindNamespaces).
std::string PrivateSeen(const CollectionVisibility& v, std::string_view private_column,
                        std::string_view ns_column) {
  std::string sql = "(" + std::string(private_column) + " = 0";
  if (!v.readable_namespaces.empty()) {
    sql += " OR " + std::string(ns_column) + InList(v.readable_namespaces.size());
  }
  return sql + ")";
}

int BindNamespaces(Stmt& s, int i, const CollectionVisibility& v) {
  for (const auto& ns : v.readable_namespaces) s.Bind(i++, ns);
  return i;
}

Error NoCollection(int64_t id) {
  return MakeError(ErrorCode::NotFound, "collection #" + std::to_string(id) + " not found");
}

Result<CollectionRecord> FindOn(Connection& c, int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(std::string(kSelect) + "WHERE c.id = ?"));
  s.Bind(1, id);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NoCollection(id);
  return ReadCollection(s);
}

Result<CollectionItemRecord> FindItemOn(Connection& c, int64_t id, int64_t item_id) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(std::string(kSelectItems) + "WHERE i.id = ?"));
  s.Bind(1, id).Bind(2, item_id);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) {
    return MakeError(ErrorCode::NotFound, "item #" + std::to_string(item_id) +
                                              " not found in collection #" + std::to_string(id));
  }
  return ReadItem(s);
}

// The ids `select` (one bound parameter: `key`) reads, in its order.
Result<std::vector<int64_t>> ReadIds(Connection& c, const char* select, int64_t key) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(select));
  s.Bind(1, key);
  std::vector<int64_t> ids;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return ids;
    ids.push_back(s.Int(0));
  }
}

// Moves `id` to index `position` of `ids` (past the end: last) and writes each row's new
// index with `update` (parameters: position, id). Errors: NotFound when `id` is not there.
Result<void> Renumber(Connection& c, std::vector<int64_t> ids, int64_t id, int64_t position,
                      const char* update) {
  auto at = std::find(ids.begin(), ids.end(), id);
  if (at == ids.end())
    return MakeError(ErrorCode::NotFound, "#" + std::to_string(id) + " not found");
  ids.erase(at);
  const auto index = static_cast<size_t>(std::clamp<int64_t>(position, 0, ids.size()));
  ids.insert(ids.begin() + static_cast<std::ptrdiff_t>(index), id);
  for (size_t i = 0; i < ids.size(); ++i) {
    HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(update));
    HANGAR_TRY(s.Bind(1, static_cast<int64_t>(i)).Bind(2, ids[i]).Run());
  }
  return {};
}

Result<void> Touch(Connection& c, int64_t id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare("UPDATE collections SET updated_at = ? WHERE id = ?"));
  return s.Bind(1, now).Bind(2, id).Run();
}

// A count `select` (one bound parameter) reads.
Result<int64_t> Count(Connection& c, const char* select, int64_t key) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(select));
  s.Bind(1, key);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<std::optional<int64_t>> FindByTitleOn(Connection& c, int64_t owner_id,
                                             std::string_view title) {
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c.Prepare("SELECT id FROM collections WHERE owner_id = ? AND title = ?"));
  s.Bind(1, owner_id).Bind(2, title);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<int64_t>();
  return std::optional<int64_t>(s.Int(0));
}

Error TitleTaken(std::string_view title) {
  return MakeError(ErrorCode::Conflict,
                   "a collection titled '" + std::string(title) + "' exists in that namespace");
}

}  // namespace

Result<CollectionRecord> SqlCollectionStore::Create(const CollectionRecord& in,
                                                    int64_t max_per_owner) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<CollectionRecord> {
    HANGAR_ASSIGN_OR_RETURN(auto taken, FindByTitleOn(*c, in.owner_id, in.title));
    if (taken) return TitleTaken(in.title);
    HANGAR_ASSIGN_OR_RETURN(
        int64_t owned,
        Count(*c, "SELECT COUNT(*) FROM collections WHERE owner_id = ?", in.owner_id));
    if (owned >= max_per_owner) {
      return MakeError(ErrorCode::BadRequest, "a namespace holds at most " +
                                                  std::to_string(max_per_owner) + " collections");
    }
    // INSERT … SELECT: an owner gone meanwhile inserts nothing (no FK error).
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("INSERT INTO collections (owner_id, title, description, private, theme, "
                           "position, created_at, updated_at) SELECT u.id, ?, ?, ?, ?, "
                           "(SELECT COALESCE(MAX(position) + 1, 0) FROM collections WHERE "
                           "owner_id = u.id), ?, ? FROM users u WHERE u.id = ?"));
    s.Bind(1, in.title)
        .Bind(2, in.description)
        .Bind(3, int64_t{in.is_private ? 1 : 0})
        .Bind(4, in.theme)
        .Bind(5, in.created_at)
        .Bind(6, in.created_at)
        .Bind(7, in.owner_id);
    HANGAR_TRY(s.Run());
    if (c->Changes() == 0) {
      return MakeError(ErrorCode::NotFound, "owner #" + std::to_string(in.owner_id) + " not found");
    }
    HANGAR_ASSIGN_OR_RETURN(int64_t id, c->LastInsertId());
    return FindOn(*c, id);
  });
}

Result<CollectionRecord> SqlCollectionStore::Find(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return FindOn(*c, id);
}

Result<std::optional<int64_t>> SqlCollectionStore::FindByTitle(int64_t owner_id,
                                                               std::string_view title) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return FindByTitleOn(*c, owner_id, title);
}

Result<void> SqlCollectionStore::Update(const CollectionRecord& in) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(CollectionRecord was, FindOn(*c, in.id));
    HANGAR_ASSIGN_OR_RETURN(auto taken, FindByTitleOn(*c, was.owner_id, in.title));
    if (taken && *taken != in.id) return TitleTaken(in.title);
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("UPDATE collections SET title = ?, description = ?, private = ?, "
                           "theme = ?, updated_at = ? WHERE id = ?"));
    return s.Bind(1, in.title)
        .Bind(2, in.description)
        .Bind(3, int64_t{in.is_private ? 1 : 0})
        .Bind(4, in.theme)
        .Bind(5, in.updated_at)
        .Bind(6, in.id)
        .Run();
  });
}

Result<void> SqlCollectionStore::Move(int64_t id, int64_t position, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(CollectionRecord was, FindOn(*c, id));
    HANGAR_ASSIGN_OR_RETURN(
        auto ids, ReadIds(*c, "SELECT id FROM collections WHERE owner_id = ? ORDER BY position, id",
                          was.owner_id));
    HANGAR_TRY(Renumber(*c, std::move(ids), id, position,
                        "UPDATE collections SET position = ? WHERE id = ?"));
    return Touch(*c, id, now);
  });
}

Result<bool> SqlCollectionStore::Delete(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    // The items of other collections that named it go with it (ON DELETE CASCADE).
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM collections WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, id).Run());
    return c->Changes() > 0;
  });
}

Result<std::vector<CollectionRecord>> SqlCollectionStore::List(const CollectionQuery& q) {
  if (q.by_item && q.repo_ids.empty() && q.collection_ids.empty()) {
    return std::vector<CollectionRecord>();
  }
  std::string sql = std::string(kSelect) + "WHERE 1 = 1";
  if (!q.owners.empty()) sql += " AND u.name" + InList(q.owners.size());
  if (q.by_item) {
    sql += " AND EXISTS (SELECT 1 FROM collection_items i WHERE i.collection_id = c.id AND (";
    if (!q.repo_ids.empty()) sql += "i.repo_id" + InList(q.repo_ids.size());
    if (!q.repo_ids.empty() && !q.collection_ids.empty()) sql += " OR ";
    if (!q.collection_ids.empty()) sql += "i.ref_id" + InList(q.collection_ids.size());
    sql += "))";
  }
  if (!q.visible.all_private) sql += " AND " + PrivateSeen(q.visible, "c.private", "u.name");
  sql += q.owner_order ? " ORDER BY u.name, c.position, c.id LIMIT ?"
                       : " AND (? = 0 OR (c.updated_at, c.id) < (?, ?)) ORDER BY c.updated_at "
                         "DESC, c.id DESC LIMIT ?";
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
  int i = 1;
  for (const auto& o : q.owners) s.Bind(i++, o);
  if (q.by_item) {
    for (int64_t id : q.repo_ids) s.Bind(i++, id);
    for (int64_t id : q.collection_ids) s.Bind(i++, id);
  }
  if (!q.visible.all_private) i = BindNamespaces(s, i, q.visible);
  if (!q.owner_order) {
    s.Bind(i, int64_t{q.after.started ? 1 : 0})
        .Bind(i + 1, q.after.updated_at)
        .Bind(i + 2, q.after.id);
    i += 3;
  }
  s.Bind(i, int64_t{q.limit});
  std::vector<CollectionRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadCollection(s));
  }
}

Result<std::vector<CollectionItemRecord>> SqlCollectionStore::Items(
    int64_t id, const CollectionVisibility& visible, int limit) {
  std::string sql = kSelectItems;
  if (!visible.all_private) {
    sql += "WHERE (i.kind = 'collection' AND " + PrivateSeen(visible, "rc.private", "ru.name") +
           ") OR (i.kind <> 'collection' AND " + PrivateSeen(visible, "r.private", "r.namespace") +
           ")";
  }
  sql += " ORDER BY i.pos LIMIT ?";
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
  int i = 2;
  s.Bind(1, id);
  if (!visible.all_private) {
    i = BindNamespaces(s, i, visible);
    i = BindNamespaces(s, i, visible);
  }
  s.Bind(i, int64_t{limit});
  std::vector<CollectionItemRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadItem(s));
  }
}

Result<CollectionItemRecord> SqlCollectionStore::AddItem(int64_t id, CollectionItemKind kind,
                                                         int64_t target_id, const std::string& note,
                                                         int64_t now, int64_t max_items) {
  const bool nested = kind == CollectionItemKind::Collection;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<CollectionItemRecord> {
    HANGAR_TRY(FindOn(*c, id));
    HANGAR_ASSIGN_OR_RETURN(
        auto dup, c->Prepare(nested ? "SELECT 1 FROM collection_items WHERE collection_id = ? AND "
                                      "ref_id = ?"
                                    : "SELECT 1 FROM collection_items WHERE collection_id = ? AND "
                                      "repo_id = ?"));
    dup.Bind(1, id).Bind(2, target_id);
    HANGAR_ASSIGN_OR_RETURN(bool held, dup.Step());
    if (held) return MakeError(ErrorCode::Conflict, "the collection holds that item already");
    HANGAR_ASSIGN_OR_RETURN(
        int64_t count,
        Count(*c, "SELECT COUNT(*) FROM collection_items WHERE collection_id = ?", id));
    if (count >= max_items) {
      return MakeError(ErrorCode::BadRequest,
                       "a collection holds at most " + std::to_string(max_items) + " items");
    }
    // INSERT … SELECT: a repo or collection gone meanwhile inserts nothing (no FK error).
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare(std::string("INSERT INTO collection_items (collection_id, kind, ") +
                           (nested ? "ref_id" : "repo_id") +
                           ", position, note, created_at) SELECT ?, ?, t.id, (SELECT "
                           "COALESCE(MAX(position) + 1, 0) FROM collection_items WHERE "
                           "collection_id = ?), ?, ? FROM " +
                           (nested ? "collections" : "repos") + " t WHERE t.id = ?"));
    s.Bind(1, id)
        .Bind(2, CollectionItemKindName(kind))
        .Bind(3, id)
        .Bind(4, note)
        .Bind(5, now)
        .Bind(6, target_id);
    HANGAR_TRY(s.Run());
    if (c->Changes() == 0) {
      return MakeError(ErrorCode::NotFound, std::string(nested ? "collection" : "repository") +
                                                " #" + std::to_string(target_id) + " not found");
    }
    HANGAR_ASSIGN_OR_RETURN(int64_t item_id, c->LastInsertId());
    HANGAR_TRY(Touch(*c, id, now));
    return FindItemOn(*c, id, item_id);
  });
}

Result<CollectionItemRecord> SqlCollectionStore::FindItem(int64_t id, int64_t item_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return FindItemOn(*c, id, item_id);
}

Result<void> SqlCollectionStore::UpdateItem(int64_t id, int64_t item_id,
                                            const CollectionItemUpdate& u, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_TRY(FindItemOn(*c, id, item_id));
    if (u.note) {
      HANGAR_ASSIGN_OR_RETURN(auto s,
                              c->Prepare("UPDATE collection_items SET note = ? WHERE id = ?"));
      HANGAR_TRY(s.Bind(1, *u.note).Bind(2, item_id).Run());
    }
    if (u.position) {
      HANGAR_ASSIGN_OR_RETURN(
          auto ids, ReadIds(*c,
                            "SELECT id FROM collection_items WHERE collection_id = ? ORDER BY "
                            "position, id",
                            id));
      HANGAR_TRY(Renumber(*c, std::move(ids), item_id, *u.position,
                          "UPDATE collection_items SET position = ? WHERE id = ?"));
    }
    return Touch(*c, id, now);
  });
}

Result<bool> SqlCollectionStore::DeleteItem(int64_t id, int64_t item_id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("DELETE FROM collection_items WHERE collection_id = ? AND id = ?"));
    HANGAR_TRY(s.Bind(1, id).Bind(2, item_id).Run());
    if (c->Changes() == 0) return false;
    HANGAR_TRY(Touch(*c, id, now));
    return true;
  });
}

}  // namespace hangar::db
