#include "db/sql/sql_repo_store.h"

#include <algorithm>
#include <charconv>

#include "core/quote.h"
#include "core/util.h"

namespace hangar::db {
namespace {

constexpr const char kRepoCols[] =
    "id, type, namespace, name, private, created_at, last_modified, last_commit, "
    "default_branch, library, pipeline, downloads, trending, is_mirror, gated, likes, sdk";

// Days in the trending window, today included.
constexpr int64_t kTrendingDays = 7;
// Tags are read for this many repos per statement (ids padded), one cached statement.
constexpr size_t kTagBatch = 64;
// SQLite: a search matching fewer repos than this is listed from the trigram index
// (repos_search, migration 13): those repos are read and sorted. A search matching more is
// listed along the sort order's index, filtering as it goes, which finds a page after
// about limit × repos / matches rows.
constexpr int64_t kNarrowSearch = 2000;

RepoRecord ReadRepo(const Stmt& s) {
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
  r.library = s.Text(9);
  r.pipeline = s.Text(10);
  r.downloads = s.Int(11);
  r.trending = s.Int(12);
  r.is_mirror = s.Int(13) != 0;
  r.gated = s.Text(14);
  r.likes = s.Int(15);
  r.sdk = s.Text(16);
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
    case RepoSort::CreatedAt:
      return "created_at";
    case RepoSort::Id:
      return "id";
    case RepoSort::Downloads:
      return "downloads";
    case RepoSort::Trending:
      return "trending";
    case RepoSort::Likes:
      return "likes";
    case RepoSort::LastModified:
      break;
  }
  return "last_modified";
}

char SortTag(RepoSort s) {
  switch (s) {
    case RepoSort::CreatedAt:
      return 'c';
    case RepoSort::Id:
      return 'i';
    case RepoSort::Downloads:
      return 'n';
    case RepoSort::Trending:
      return 't';
    case RepoSort::Likes:
      return 'l';
    case RepoSort::LastModified:
      break;
  }
  return 'm';
}

// Cursor text: "<sort tag><a|d>.<sort value>.<id>", naming the last row of the page.
std::string MakeCursor(const RepoQuery& q, const RepoRecord& last) {
  int64_t v = q.sort == RepoSort::CreatedAt   ? last.created_at
              : q.sort == RepoSort::Id        ? last.id
              : q.sort == RepoSort::Downloads ? last.downloads
              : q.sort == RepoSort::Trending  ? last.trending
              : q.sort == RepoSort::Likes     ? last.likes
                                              : last.last_modified;
  return std::string{SortTag(q.sort), q.descending ? 'd' : 'a'} + "." + std::to_string(v) + "." +
         std::to_string(last.id);
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
  if (c.size() < 6 || c[0] != SortTag(q.sort) || c[1] != (q.descending ? 'd' : 'a') || c[2] != '.')
    return bad;
  c.remove_prefix(3);
  size_t dot = c.find('.');
  if (dot == std::string_view::npos) return bad;
  Cursor out;
  if (!ParseInt(c.substr(0, dot), out.value) || !ParseInt(c.substr(dot + 1), out.id)) return bad;
  return out;
}

// Whether the trigram index can answer a search for `s`: 3 characters or more (its
// trigrams), ASCII (where its case folding and LIKE's agree).
bool TrigramSearchable(std::string_view s) {
  return s.size() >= 3 && std::all_of(s.begin(), s.end(), [](char ch) {
           return static_cast<unsigned char>(ch) < 0x80;
         });
}

// An FTS5 query matching `s` as a substring: one phrase, its quotes doubled.
std::string TrigramPhrase(std::string_view s) { return QuoteDoubled(s, '"'); }

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

// Fills `tags` of every repo in `repos` (in the order SetCardMeta stored them).
Result<void> LoadTags(Connection& c, std::vector<RepoRecord>& repos) {
  static const std::string kSql = [] {
    std::string sql = "SELECT repo_id, tag FROM repo_tags WHERE repo_id IN (?";
    for (size_t i = 1; i < kTagBatch; ++i) sql += ", ?";
    return sql + ") ORDER BY repo_id, position";
  }();
  for (size_t begin = 0; begin < repos.size(); begin += kTagBatch) {
    size_t end = std::min(repos.size(), begin + kTagBatch);
    HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(kSql));
    for (size_t i = 0; i < kTagBatch; ++i) {
      s.Bind(static_cast<int>(i + 1), begin + i < end ? repos[begin + i].id : int64_t{-1});
    }
    for (;;) {
      HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
      if (!row) break;
      int64_t id = s.Int(0);
      for (size_t i = begin; i < end; ++i) {
        if (repos[i].id == id) {
          repos[i].tags.push_back(s.Text(1));
          break;
        }
      }
    }
  }
  return {};
}

Result<RepoRecord> FindOne(Connection& c, Stmt& s) {
  RepoRecord r = ReadRepo(s);
  std::vector<RepoRecord> one{std::move(r)};
  HANGAR_TRY(LoadTags(c, one));
  return std::move(one.front());
}

// List's SQL for `q` (with a cursor condition when `has_cursor`; from the repos that the
// trigram index finds for the search when `narrow`). The text depends only on which filters
// are present (and how many readable namespaces and tags), so the per-connection statement
// cache stays small and effective. BindList binds its parameters.
std::string ListSql(const RepoQuery& q, bool has_cursor, bool narrow) {
  const char* col = SortColumn(q.sort);
  const char* cmp = q.descending ? "<" : ">";
  const char* dir = q.descending ? "DESC" : "ASC";
  std::string sql = std::string("SELECT ") + kRepoCols;
  // CROSS JOIN keeps SQLite's join order: the index's few matches first, then their rows
  // by primary key (else its planner may walk the sort order's index and test each row).
  if (narrow) {
    sql +=
        " FROM (SELECT rowid AS match_id FROM repos_search WHERE repos_search MATCH ?) m "
        "CROSS JOIN repos ON repos.id = m.match_id";
  } else {
    sql += " FROM repos";
  }
  sql += " WHERE 1 = 1";
  if (q.type) sql += " AND type = ?";
  if (!q.author.empty()) sql += " AND namespace = ?";
  if (!q.search.empty()) sql += " AND LOWER(namespace || '/' || name) LIKE ? ESCAPE '\\'";
  if (!q.library.empty()) sql += " AND library = ?";
  if (!q.pipeline.empty()) sql += " AND pipeline = ?";
  for (size_t i = 0; i < q.tags.size(); ++i) {
    sql += " AND id IN (SELECT repo_id FROM repo_tags WHERE tag = ?)";
  }
  if (!q.include_all_private) {
    sql += " AND (private = 0";
    if (!q.readable_namespaces.empty()) {
      sql += " OR namespace IN (?";
      for (size_t i = 1; i < q.readable_namespaces.size(); ++i) sql += ", ?";
      sql += ")";
    }
    sql += ")";
  }
  if (has_cursor) {
    if (q.sort == RepoSort::Id)
      sql += std::string(" AND id ") + cmp + " ?";
    else
      sql += std::string(" AND (") + col + ", id) " + cmp + " (?, ?)";
  }
  sql += std::string(" ORDER BY ") + col + " " + dir;
  if (q.sort != RepoSort::Id) sql += std::string(", id ") + dir;
  return sql + " LIMIT ?";
}

// Binds the parameters of ListSql(q, cursor.has_value(), narrow), in its order: the
// trigram query (narrow), the filters, the readable namespaces, the cursor, then LIMIT.
void BindList(Stmt& s, const RepoQuery& q, const std::optional<Cursor>& cursor, int limit,
              bool narrow) {
  int i = 1;
  if (narrow) s.Bind(i++, TrigramPhrase(q.search));
  if (q.type) s.Bind(i++, RepoTypeName(*q.type));
  if (!q.author.empty()) s.Bind(i++, q.author);
  if (!q.search.empty()) s.Bind(i++, LikePattern(q.search));
  if (!q.library.empty()) s.Bind(i++, q.library);
  if (!q.pipeline.empty()) s.Bind(i++, q.pipeline);
  for (const auto& tag : q.tags) s.Bind(i++, tag);
  if (!q.include_all_private)
    for (const auto& ns : q.readable_namespaces) s.Bind(i++, ns);
  if (cursor) {
    if (q.sort != RepoSort::Id) s.Bind(i++, cursor->value);
    s.Bind(i++, cursor->id);
  }
  s.Bind(i++, static_cast<int64_t>(limit) + 1);  // one extra row says "there is more"
}

// Reads up to `limit` rows of List's statement `s` into a page with their tags; the cursor
// of the next page when a row is left over.
Result<RepoPage> ReadPage(Connection& c, Stmt& s, const RepoQuery& q, int limit) {
  RepoPage page;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    if (static_cast<int>(page.items.size()) == limit) {
      page.next_cursor = MakeCursor(q, page.items.back());
      break;
    }
    page.items.push_back(ReadRepo(s));
  }
  HANGAR_TRY(LoadTags(c, page.items));
  return page;
}

}  // namespace

Result<RepoRecord> SqlRepoStore::Create(const RepoRecord& repo) {
  RepoRecord out = repo;
  int64_t now = NowUnix();
  if (out.created_at == 0) out.created_at = now;
  if (out.last_modified == 0) out.last_modified = out.created_at;
  if (out.default_branch.empty()) out.default_branch = "main";
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("INSERT INTO repos (type, namespace, name, private, created_at, last_modified, "
                 "last_commit, default_branch, sdk) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  s.Bind(1, RepoTypeName(out.type)).Bind(2, out.ns).Bind(3, out.name);
  s.Bind(4, int64_t{out.is_private ? 1 : 0}).Bind(5, out.created_at).Bind(6, out.last_modified);
  s.Bind(7, out.last_commit).Bind(8, out.default_branch).Bind(9, out.sdk);
  auto r = s.Run();
  if (!r) {
    if (r.error().code == ErrorCode::Conflict)
      return MakeError(ErrorCode::Conflict, "You already created this " +
                                                std::string(RepoTypeName(out.type)) +
                                                " repo: " + out.Id().Id());
    return std::move(r).error();
  }
  HANGAR_ASSIGN_OR_RETURN(out.id, c->LastInsertId());
  return out;
}

Result<RepoRecord> SqlRepoStore::Find(const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  static const std::string kSql = std::string("SELECT ") + kRepoCols +
                                  " FROM repos WHERE type = ? AND namespace = ? AND name = ?";
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kSql));
  s.Bind(1, RepoTypeName(id.type)).Bind(2, id.ns).Bind(3, id.name);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return NotFound(id);
  return FindOne(*c, s);
}

Result<RepoRecord> SqlRepoStore::FindById(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  static const std::string kSql = std::string("SELECT ") + kRepoCols + " FROM repos WHERE id = ?";
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kSql));
  s.Bind(1, id);
  HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
  if (!row) return NotFound(id);
  return FindOne(*c, s);
}

Result<std::vector<RepoRecord>> SqlRepoStore::FindFolded(RepoType type, std::string_view ns,
                                                         std::string_view name) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  // lower() folds ASCII only, as hub names are ASCII; the expression index repos_folded
  // (migration 5) serves the lookup.
  static const std::string kSql = std::string("SELECT ") + kRepoCols +
                                  " FROM repos WHERE type = ? AND lower(namespace) = lower(?) "
                                  "AND lower(name) = lower(?) ORDER BY id LIMIT 2";
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(kSql));
  s.Bind(1, RepoTypeName(type)).Bind(2, ns).Bind(3, name);
  std::vector<RepoRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto row, s.Step());
    if (!row) break;
    out.push_back(ReadRepo(s));
  }
  return out;
}

Result<void> SqlRepoStore::Delete(const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("DELETE FROM repos WHERE type = ? AND namespace = ? AND name = ?"));
  HANGAR_TRY(s.Bind(1, RepoTypeName(id.type)).Bind(2, id.ns).Bind(3, id.name).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<RepoRecord> SqlRepoStore::Move(const RepoId& from, const RepoId& to) {
  if (from.type != to.type)
    return MakeError(ErrorCode::BadRequest, "a repository cannot change its type when moved");
  {
    HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
    HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE repos SET namespace = ?, name = ? "
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

Result<void> SqlRepoStore::SetPrivate(int64_t id, bool is_private) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE repos SET private = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, int64_t{is_private ? 1 : 0}).Bind(2, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<void> SqlRepoStore::SetMirror(int64_t id, bool is_mirror) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE repos SET is_mirror = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, int64_t{is_mirror ? 1 : 0}).Bind(2, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<void> SqlRepoStore::SetGated(int64_t id, std::string_view gated) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE repos SET gated = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, gated).Bind(2, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<void> SqlRepoStore::UpdateHead(int64_t id, std::string_view last_commit,
                                      int64_t last_modified) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("UPDATE repos SET last_commit = ?, last_modified = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, last_commit).Bind(2, last_modified).Bind(3, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<RepoCounts> SqlRepoStore::Count(std::string_view ns, bool with_private) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("SELECT type, COUNT(*) FROM repos WHERE namespace = "
                                             "? AND (private = 0 OR ? = 1) GROUP BY type"));
  s.Bind(1, ns).Bind(2, int64_t{with_private ? 1 : 0});
  RepoCounts out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    switch (ParseRepoType(s.Text(0)).value_or(RepoType::Model)) {
      case RepoType::Model:
        out.models = s.Int(1);
        break;
      case RepoType::Dataset:
        out.datasets = s.Int(1);
        break;
      case RepoType::Space:
        out.spaces = s.Int(1);
        break;
    }
  }
}

Result<RepoPage> SqlRepoStore::List(const RepoQuery& q) {
  int limit = std::clamp(q.limit, 1, 10000);
  std::optional<Cursor> cursor;
  if (!q.cursor.empty()) {
    HANGAR_ASSIGN_OR_RETURN(auto parsed, ParseCursor(q));
    cursor = parsed;
  }
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  // The search's matches are counted (up to kNarrowSearch) to choose the plan; PostgreSQL's
  // planner makes that choice itself from its statistics of the trigram index.
  bool narrow = false;
  if (pool_->dialect() == SqlDialect::Sqlite && TrigramSearchable(q.search)) {
    HANGAR_ASSIGN_OR_RETURN(auto count,
                            c->Prepare("SELECT COUNT(*) FROM (SELECT 1 FROM repos_search "
                                       "WHERE repos_search MATCH ? LIMIT ?)"));
    count.Bind(1, TrigramPhrase(q.search)).Bind(2, kNarrowSearch);
    HANGAR_ASSIGN_OR_RETURN(auto row, count.Step());
    narrow = row && count.Int(0) < kNarrowSearch;
  }
  const std::string sql = ListSql(q, cursor.has_value(), narrow);
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
  BindList(s, q, cursor, limit, narrow);
  return ReadPage(*c, s, q, limit);
}

Result<void> SqlRepoStore::SetCardMeta(int64_t id, std::string_view library,
                                       std::string_view pipeline,
                                       const std::vector<std::string>& tags) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto update,
                            c->Prepare("UPDATE repos SET library = ?, pipeline = ? WHERE id = ?"));
    HANGAR_TRY(update.Bind(1, library).Bind(2, pipeline).Bind(3, id).Run());
    if (c->Changes() == 0) return NotFound(id);
    HANGAR_ASSIGN_OR_RETURN(auto clear, c->Prepare("DELETE FROM repo_tags WHERE repo_id = ?"));
    HANGAR_TRY(clear.Bind(1, id).Run());
    for (size_t i = 0; i < tags.size(); ++i) {
      HANGAR_ASSIGN_OR_RETURN(auto insert,
                              c->Prepare("INSERT INTO repo_tags (repo_id, tag, position)"
                                         " VALUES (?, ?, ?) ON CONFLICT DO NOTHING"));
      HANGAR_TRY(insert.Bind(1, id).Bind(2, tags[i]).Bind(3, static_cast<int64_t>(i)).Run());
    }
    return {};
  });
}

Result<void> SqlRepoStore::AddDownloads(int64_t id, int64_t day, int64_t n) {
  if (n <= 0) return {};
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto total, c->Prepare("UPDATE repos SET downloads = downloads + ?, "
                                                   "trending = trending + ? WHERE id = ?"));
    HANGAR_TRY(total.Bind(1, n).Bind(2, n).Bind(3, id).Run());
    if (c->Changes() == 0) return {};  // deleted since the downloads were counted
    HANGAR_ASSIGN_OR_RETURN(
        auto daily, c->Prepare("INSERT INTO repo_downloads (repo_id, day, count) VALUES (?, ?, ?) "
                               "ON CONFLICT (repo_id, day) DO UPDATE SET count = "
                               "repo_downloads.count + excluded.count"));
    return daily.Bind(1, id).Bind(2, day).Bind(3, n).Run();
  });
}

Result<int64_t> SqlRepoStore::RefreshTrending(int64_t today) {
  const int64_t after = today - kTrendingDays;  // the window: days after this one
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  int64_t changed = 0;
  HANGAR_TRY(InTransaction(*c, [&]() -> Result<void> {
    // Repos with downloads in the window get their sum (index repo_downloads_day reads the
    // window alone); unchanged scores are not written, so a refresh of a quiet hub writes
    // little.
    HANGAR_ASSIGN_OR_RETURN(
        auto scored,
        c->Prepare("UPDATE repos SET trending = t.score FROM (SELECT repo_id, SUM(count) AS score "
                   "FROM repo_downloads WHERE day > ? GROUP BY repo_id) t "
                   "WHERE repos.id = t.repo_id AND repos.trending <> t.score"));
    HANGAR_TRY(scored.Bind(1, after).Run());
    changed += c->Changes();
    // Repos with a score but no download left in the window fall to 0 (`trending > 0`
    // reads index repos_trending, not the whole table).
    HANGAR_ASSIGN_OR_RETURN(
        auto idle, c->Prepare("UPDATE repos SET trending = 0 WHERE trending > 0 AND id NOT IN "
                              "(SELECT repo_id FROM repo_downloads WHERE day > ?)"));
    HANGAR_TRY(idle.Bind(1, after).Run());
    changed += c->Changes();
    return {};
  }));
  return changed;
}

}  // namespace hangar::db
