#include "db/sql/sql_like_store.h"

namespace hangar::db {
namespace {

constexpr const char kSelect[] =
    "SELECT l.repo_id, l.user_id, l.created_at, u.name, u.fullname, r.type, r.namespace, "
    "r.name, r.private FROM repo_likes l JOIN users u ON u.id = l.user_id JOIN repos r ON "
    "r.id = l.repo_id ";

LikeRecord ReadRow(const Stmt& s) {
  LikeRecord r;
  r.repo_id = s.Int(0);
  r.user_id = s.Int(1);
  r.created_at = s.Int(2);
  r.user_name = s.Text(3);
  r.user_fullname = s.Text(4);
  r.repo_type = ParseRepoType(s.Text(5)).value_or(RepoType::Model);
  r.repo_ns = s.Text(6);
  r.repo_name = s.Text(7);
  r.repo_private = s.Int(8) != 0;
  return r;
}

Result<std::vector<LikeRecord>> ReadAll(Stmt& s) {
  std::vector<LikeRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadRow(s));
  }
}

// The visibility filter on r (private repos only where `v` reads them); its parameters
// are the readable namespaces, bound by BindVisibility.
std::string VisibilitySql(const LikeVisibility& v) {
  if (v.all_private) return "";
  std::string sql = " AND (r.private = 0";
  if (!v.readable_namespaces.empty()) {
    sql += " OR r.namespace IN (?";
    for (size_t i = 1; i < v.readable_namespaces.size(); ++i) sql += ", ?";
    sql += ")";
  }
  return sql + ")";
}

int BindVisibility(Stmt& s, int i, const LikeVisibility& v) {
  if (v.all_private) return i;
  for (const auto& ns : v.readable_namespaces) s.Bind(i++, ns);
  return i;
}

// Adds `delta` to the repo's count.
Result<void> AddToCount(Connection& c, int64_t repo_id, int64_t delta) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare("UPDATE repos SET likes = likes + ? WHERE id = ?"));
  return s.Bind(1, delta).Bind(2, repo_id).Run();
}

}  // namespace

Result<bool> SqlLikeStore::Like(int64_t repo_id, int64_t user_id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    // INSERT … SELECT: a repo or user gone meanwhile inserts nothing (no FK error).
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("INSERT INTO repo_likes (repo_id, user_id, created_at) SELECT r.id, "
                           "u.id, ? FROM repos r, users u WHERE r.id = ? AND u.id = ? ON "
                           "CONFLICT (repo_id, user_id) DO NOTHING"));
    HANGAR_TRY(s.Bind(1, now).Bind(2, repo_id).Bind(3, user_id).Run());
    if (c->Changes() > 0) {
      HANGAR_TRY(AddToCount(*c, repo_id, 1));
      return true;
    }
    HANGAR_ASSIGN_OR_RETURN(
        auto found, c->Prepare("SELECT 1 FROM repo_likes WHERE repo_id = ? AND user_id = ?"));
    found.Bind(1, repo_id).Bind(2, user_id);
    HANGAR_ASSIGN_OR_RETURN(bool liked, found.Step());
    if (!liked) {
      return MakeError(ErrorCode::NotFound, "repository #" + std::to_string(repo_id) +
                                                " or user #" + std::to_string(user_id) +
                                                " not found");
    }
    return false;
  });
}

Result<bool> SqlLikeStore::Unlike(int64_t repo_id, int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<bool> {
    HANGAR_ASSIGN_OR_RETURN(auto s,
                            c->Prepare("DELETE FROM repo_likes WHERE repo_id = ? AND user_id = ?"));
    HANGAR_TRY(s.Bind(1, repo_id).Bind(2, user_id).Run());
    if (c->Changes() == 0) return false;
    HANGAR_TRY(AddToCount(*c, repo_id, -1));
    return true;
  });
}

Result<bool> SqlLikeStore::Likes(int64_t repo_id, int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("SELECT 1 FROM repo_likes WHERE repo_id = ? AND user_id = ?"));
  s.Bind(1, repo_id).Bind(2, user_id);
  return s.Step();
}

Result<std::vector<LikeRecord>> SqlLikeStore::Likers(int64_t repo_id, const LikeCursor& after,
                                                     int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string(kSelect) +
                         "WHERE l.repo_id = ? AND (? = 0 OR (l.created_at, l.user_id) < (?, ?)) "
                         "ORDER BY l.created_at DESC, l.user_id DESC LIMIT ?"));
  s.Bind(1, repo_id)
      .Bind(2, int64_t{after.started ? 1 : 0})
      .Bind(3, after.created_at)
      .Bind(4, after.id)
      .Bind(5, int64_t{limit});
  return ReadAll(s);
}

Result<std::vector<LikeRecord>> SqlLikeStore::LikedBy(int64_t user_id,
                                                      const LikeVisibility& visible,
                                                      const LikeCursor& after, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string(kSelect) + "WHERE l.user_id = ?" + VisibilitySql(visible) +
                         " AND (? = 0 OR (l.created_at, l.repo_id) < (?, ?)) ORDER BY "
                         "l.created_at DESC, l.repo_id DESC LIMIT ?"));
  int i = BindVisibility(s.Bind(1, user_id), 2, visible);
  s.Bind(i, int64_t{after.started ? 1 : 0})
      .Bind(i + 1, after.created_at)
      .Bind(i + 2, after.id)
      .Bind(i + 3, int64_t{limit});
  return ReadAll(s);
}

Result<int64_t> SqlLikeStore::CountLikedBy(int64_t user_id, const LikeVisibility& visible) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("SELECT COUNT(*) FROM repo_likes l JOIN repos r ON r.id = "
                                     "l.repo_id WHERE l.user_id = ?" +
                                     VisibilitySql(visible)));
  BindVisibility(s.Bind(1, user_id), 2, visible);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

}  // namespace hangar::db
