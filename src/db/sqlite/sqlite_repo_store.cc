#include "db/sqlite/sqlite_repo_store.h"

#include <algorithm>
#include <charconv>

#include "core/util.h"

namespace hangar::db {
namespace {

constexpr const char kRepoCols[] =
    "id, type, namespace, name, private, created_at, last_modified, last_commit, "
    "default_branch";

RepoRecord ReadRepo(const SqliteStmt& s) {
  RepoRecord r;
  r.id = s.Int(0);
  r.type = ParseRepoType(s.Text(1)).value_or(RepoType::Model);
  r.ns = s.Text(2);
  r.name = s.Text(3);
  r.is_private = s.Int(4) != 0;
  r.created_at = s.Int(5);
  r.last_modified = s.Int(6);
  r.last_commit = s.Text(7);
  r.default_branch = s.Text(8);
  return r;
}

Error NotFound(const RepoId& id) {
  return MakeError(ErrorCode::RepoNotFound, "repository '" + id.Id() + "' not found");
}

Error NotFound(int64_t id) {
  return MakeError(ErrorCode::RepoNotFound, "repository #" + std::to_string(id) + " not found");
}

// The column a sort key orders by (id is always the tie-breaker).
const char* SortColumn(RepoSort s) {
  switch (s) {
    case RepoSort::CreatedAt: return "created_at";
    case RepoSort::Id: return "id";
    case RepoSort::LastModified: break;
  }
  return "last_modified";
}

char SortTag(RepoSort s) {
  return s == RepoSort::CreatedAt ? 'c' : s == RepoSort::Id ? 'i' : 'm';
}

// Cursor text: "<sort tag><a|d>.<sort value>.<id>", naming the last row of the page.
std::string MakeCursor(const RepoQuery& q, const RepoRecord& last) {
  int64_t v = q.sort == RepoSort::CreatedAt ? last.created_at
              : q.sort == RepoSort::Id      ? last.id
                                            : last.last_modified;
  return std::string{SortTag(q.sort), q.descending ? 'd' : 'a'} + "." + std::to_string(v) +
         "." + std::to_string(last.id);
}

bool ParseInt(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

struct Cursor {
  int64_t value = 0;
  int64_t id = 0;
};

Result<Cursor> ParseCursor(const RepoQuery& q) {
  Error bad = MakeError(ErrorCode::BadRequest, "invalid cursor");
  std::string_view c = q.cursor;
  if (c.size() < 6 || c[0] != SortTag(q.sort) || c[1] != (q.descending ? 'd' : 'a') ||
      c[2] != '.')
    return bad;
  c.remove_prefix(3);
  size_t dot = c.find('.');
  if (dot == std::string_view::npos) return bad;
  Cursor out;
  if (!ParseInt(c.substr(0, dot), out.value) || !ParseInt(c.substr(dot + 1), out.id))
    return bad;
  return out;
}

// `s` lower-cased with LIKE's wildcards escaped by '\'.
std::string LikePattern(std::string_view s) {
  std::string out = "%";
  for (char ch : s) {
    if (ch == '%' || ch == '_' || ch == '\\') out += '\\';
    out += (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch - 'A' + 'a') : ch;
  }
  out += '%';
  return out;
}

}  // namespace

Result<RepoRecord> SqliteRepoStore::Create(const RepoRecord& repo) {
  RepoRecord out = repo;
  int64_t now = NowUnix();
  if (out.created_at == 0) out.created_at = now;
  if (out.last_modified == 0) out.last_modified = out.created_at;
  if (out.default_branch.empty()) out.default_branch = "main";
  HANGAR_DB_ASSIGN(c, pool_->Write());
  HANGAR_DB_ASSIGN(s, c->Prepare(
      "INSERT INTO repos (type, namespace, name, private, created_at, last_modified, "
      "last_commit, default_branch) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
  s.Bind(1, RepoTypeName(out.type)).Bind(2, out.ns).Bind(3, out.name);
  s.Bind(4, int64_t{out.is_private ? 1 : 0}).Bind(5, out.created_at).Bind(6, out.last_modified);
  s.Bind(7, out.last_commit).Bind(8, out.default_branch);
  auto r = s.Run();
  if (!r) {
    if (r.error().code == ErrorCode::Conflict)
      return MakeError(ErrorCode::Conflict,
                       "You already created this " + std::string(RepoTypeName(out.type)) +
                           " repo: " + out.Id().Id());
    return std::move(r).error();
  }
  out.id = c->LastInsertId();
  return out;
}

Result<RepoRecord> SqliteRepoStore::Find(const RepoId& id) {
  HANGAR_DB_ASSIGN(c, pool_->Read());
  static const std::string kSql = std::string("SELECT ") + kRepoCols +
                                  " FROM repos WHERE type = ? AND namespace = ? AND name = ?";
  HANGAR_DB_ASSIGN(s, c->Prepare(kSql));
  s.Bind(1, RepoTypeName(id.type)).Bind(2, id.ns).Bind(3, id.name);
  HANGAR_DB_ASSIGN(row, s.Step());
  if (!row) return NotFound(id);
  return ReadRepo(s);
}

Result<RepoRecord> SqliteRepoStore::FindById(int64_t id) {
  HANGAR_DB_ASSIGN(c, pool_->Read());
  static const std::string kSql = std::string("SELECT ") + kRepoCols + " FROM repos WHERE id = ?";
  HANGAR_DB_ASSIGN(s, c->Prepare(kSql));
  s.Bind(1, id);
  HANGAR_DB_ASSIGN(row, s.Step());
  if (!row) return NotFound(id);
  return ReadRepo(s);
}

Result<void> SqliteRepoStore::Delete(const RepoId& id) {
  HANGAR_DB_ASSIGN(c, pool_->Write());
  HANGAR_DB_ASSIGN(s, c->Prepare(
      "DELETE FROM repos WHERE type = ? AND namespace = ? AND name = ?"));
  HANGAR_TRY(s.Bind(1, RepoTypeName(id.type)).Bind(2, id.ns).Bind(3, id.name).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<RepoRecord> SqliteRepoStore::Move(const RepoId& from, const RepoId& to) {
  if (from.type != to.type)
    return MakeError(ErrorCode::BadRequest, "a repository cannot change its type when moved");
  {
    HANGAR_DB_ASSIGN(c, pool_->Write());
    HANGAR_DB_ASSIGN(s, c->Prepare(
        "UPDATE repos SET namespace = ?, name = ? "
        "WHERE type = ? AND namespace = ? AND name = ?"));
    s.Bind(1, to.ns).Bind(2, to.name).Bind(3, RepoTypeName(from.type)).Bind(4, from.ns);
    auto r = s.Bind(5, from.name).Run();
    if (!r) {
      if (r.error().code == ErrorCode::Conflict)
        return MakeError(ErrorCode::Conflict, "repository '" + to.Id() + "' already exists");
      return std::move(r).error();
    }
    if (c->Changes() == 0) return NotFound(from);
  }
  return Find(to);
}

Result<void> SqliteRepoStore::SetPrivate(int64_t id, bool is_private) {
  HANGAR_DB_ASSIGN(c, pool_->Write());
  HANGAR_DB_ASSIGN(s, c->Prepare("UPDATE repos SET private = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, int64_t{is_private ? 1 : 0}).Bind(2, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<void> SqliteRepoStore::UpdateHead(int64_t id, std::string_view last_commit,
                                         int64_t last_modified) {
  HANGAR_DB_ASSIGN(c, pool_->Write());
  HANGAR_DB_ASSIGN(s, c->Prepare(
      "UPDATE repos SET last_commit = ?, last_modified = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, last_commit).Bind(2, last_modified).Bind(3, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<RepoPage> SqliteRepoStore::List(const RepoQuery& q) {
  int limit = std::clamp(q.limit, 1, 10000);
  std::optional<Cursor> cursor;
  if (!q.cursor.empty()) {
    HANGAR_DB_ASSIGN(parsed, ParseCursor(q));
    cursor = parsed;
  }
  // The SQL text depends only on which filters are present (and how many readable
  // namespaces), so the per-connection statement cache stays small and effective.
  const char* col = SortColumn(q.sort);
  const char* cmp = q.descending ? "<" : ">";
  const char* dir = q.descending ? "DESC" : "ASC";
  std::string sql = std::string("SELECT ") + kRepoCols + " FROM repos WHERE 1 = 1";
  if (q.type) sql += " AND type = ?";
  if (!q.author.empty()) sql += " AND namespace = ?";
  if (!q.search.empty()) sql += " AND LOWER(namespace || '/' || name) LIKE ? ESCAPE '\\'";
  if (!q.include_all_private) {
    sql += " AND (private = 0";
    if (!q.readable_namespaces.empty()) {
      sql += " OR namespace IN (?";
      for (size_t i = 1; i < q.readable_namespaces.size(); ++i) sql += ", ?";
      sql += ")";
    }
    sql += ")";
  }
  if (cursor) {
    if (q.sort == RepoSort::Id)
      sql += std::string(" AND id ") + cmp + " ?";
    else
      sql += std::string(" AND (") + col + ", id) " + cmp + " (?, ?)";
  }
  sql += std::string(" ORDER BY ") + col + " " + dir;
  if (q.sort != RepoSort::Id) sql += std::string(", id ") + dir;
  sql += " LIMIT ?";

  HANGAR_DB_ASSIGN(c, pool_->Read());
  HANGAR_DB_ASSIGN(s, c->Prepare(sql));
  int i = 1;
  if (q.type) s.Bind(i++, RepoTypeName(*q.type));
  if (!q.author.empty()) s.Bind(i++, q.author);
  if (!q.search.empty()) s.Bind(i++, LikePattern(q.search));
  if (!q.include_all_private)
    for (const auto& ns : q.readable_namespaces) s.Bind(i++, ns);
  if (cursor) {
    if (q.sort != RepoSort::Id) s.Bind(i++, cursor->value);
    s.Bind(i++, cursor->id);
  }
  s.Bind(i++, static_cast<int64_t>(limit) + 1);  // one extra row says "there is more"

  RepoPage page;
  for (;;) {
    HANGAR_DB_ASSIGN(row, s.Step());
    if (!row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = MakeCursor(q, page.items.back());
      break;
    }
    page.items.push_back(ReadRepo(s));
  }
  return page;
}

}  // namespace hangar::db
