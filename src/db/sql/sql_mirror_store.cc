#include "db/sql/sql_mirror_store.h"

#include "core/util.h"

namespace hangar::db {
namespace {

constexpr const char kColumns[] =
    "id, repo_id, direction, url, credential, interval_s, created_at, last_sync_at, "
    "last_success_at, last_error, failures, next_sync_at, lazy_lfs, restricted";

MirrorRecord ReadRow(const Stmt& s) {
  MirrorRecord m;
  m.id = s.Int(0);
  m.repo_id = s.Int(1);
  m.direction = s.Text(2) == "push" ? MirrorDirection::Push : MirrorDirection::Pull;
  m.url = s.Text(3);
  m.credential = s.Text(4);
  m.interval_s = s.Int(5);
  m.created_at = s.Int(6);
  m.last_sync_at = s.OptInt(7);
  m.last_success_at = s.OptInt(8);
  m.last_error = s.Text(9);
  m.failures = static_cast<int>(s.Int(10));
  m.next_sync_at = s.Int(11);
  m.lazy_lfs = s.Int(12) != 0;
  m.restricted = s.Int(13) != 0;
  return m;
}

std::string Select(std::string_view rest) {
  return std::string("SELECT ") + kColumns + " FROM mirrors " + std::string(rest);
}

Result<std::vector<MirrorRecord>> All(Stmt& s) {
  std::vector<MirrorRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadRow(s));
  }
}

constexpr const char kTokenColumns[] = "user_id, upstream, token, upstream_user, created_at";

UpstreamTokenRecord ReadToken(const Stmt& s) {
  return UpstreamTokenRecord{s.Int(0), s.Text(1), s.Text(2), s.Text(3), s.Int(4)};
}

// Points restricted mirrors that fetch with `from` at `to` ("" for none).
Result<void> ReplaceCredential(Connection& c, std::string_view from, std::string_view to) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare("UPDATE mirrors SET credential = ? WHERE "
                                            "restricted = 1 AND credential = ?"));
  return s.Bind(1, to).Bind(2, from).Run();
}

// The user's token for `upstream` as stored now, read on `c` (inside its transaction).
Result<std::optional<UpstreamTokenRecord>> FindToken(Connection& c, int64_t user_id,
                                                     std::string_view upstream) {
  HANGAR_ASSIGN_OR_RETURN(auto s, c.Prepare(std::string("SELECT ") + kTokenColumns +
                                            " FROM upstream_tokens WHERE user_id = ? AND "
                                            "upstream = ?"));
  s.Bind(1, user_id).Bind(2, upstream);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<UpstreamTokenRecord>();
  return std::optional<UpstreamTokenRecord>(ReadToken(s));
}

Error NotFound(int64_t id) {
  return MakeError(ErrorCode::NotFound, "mirror #" + std::to_string(id) + " not found");
}

}  // namespace

std::string_view MirrorDirectionName(MirrorDirection d) {
  return d == MirrorDirection::Push ? "push" : "pull";
}

Result<MirrorRecord> SqlMirrorStore::Add(const MirrorRecord& m) {
  MirrorRecord out = m;
  if (out.created_at == 0) out.created_at = NowUnix();
  out.last_sync_at.reset();
  out.last_success_at.reset();
  out.last_error.clear();
  out.failures = 0;
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // Reads the repo's row in the insert, so a repo deleted meanwhile inserts nothing.
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("INSERT INTO mirrors (repo_id, direction, url, credential, interval_s, "
                 "created_at, next_sync_at, lazy_lfs, restricted) SELECT id, ?, ?, ?, ?, ?, "
                 "?, ?, ? FROM repos WHERE id = ?"));
  s.Bind(1, MirrorDirectionName(out.direction))
      .Bind(2, out.url)
      .Bind(3, out.credential)
      .Bind(4, out.interval_s)
      .Bind(5, out.created_at)
      .Bind(6, out.next_sync_at)
      .Bind(7, int64_t{out.lazy_lfs ? 1 : 0})
      .Bind(8, int64_t{out.restricted ? 1 : 0})
      .Bind(9, out.repo_id);
  if (auto r = s.Run(); !r) {
    // mirrors_one_pull is the one unique index besides the id.
    if (r.error().code == ErrorCode::Conflict) {
      return MakeError(ErrorCode::Conflict, "repo already has a pull mirror");
    }
    return std::move(r).error();
  }
  if (c->Changes() == 0) {
    return MakeError(ErrorCode::NotFound,
                     "repository #" + std::to_string(out.repo_id) + " not found");
  }
  HANGAR_ASSIGN_OR_RETURN(out.id, c->LastInsertId());
  return out;
}

Result<MirrorRecord> SqlMirrorStore::Get(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(Select("WHERE id = ?")));
  s.Bind(1, id);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return NotFound(id);
  return ReadRow(s);
}

Result<std::vector<MirrorRecord>> SqlMirrorStore::ForRepo(int64_t repo_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  // 'pull' sorts after 'push': pull first by a CASE.
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(Select("WHERE repo_id = ? ORDER BY CASE direction WHEN 'pull' THEN 0 "
                                "ELSE 1 END, id")));
  s.Bind(1, repo_id);
  return All(s);
}

Result<std::vector<MirrorRecord>> SqlMirrorStore::DuePulls(int64_t now, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare(Select("WHERE direction = 'pull' AND next_sync_at <= ? "
                                            "AND lazy_lfs = 0 ORDER BY next_sync_at, id LIMIT ?")));
  s.Bind(1, now).Bind(2, int64_t{limit});
  return All(s);
}

Result<void> SqlMirrorStore::RecordSync(int64_t id, int64_t now, std::string_view error,
                                        int64_t next_sync_at) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  if (error.empty()) {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("UPDATE mirrors SET last_sync_at = ?, last_success_at = ?, "
                           "last_error = '', failures = 0, next_sync_at = ? WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, now).Bind(2, now).Bind(3, next_sync_at).Bind(4, id).Run());
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto s,
                            c->Prepare("UPDATE mirrors SET last_sync_at = ?, last_error = ?, "
                                       "failures = failures + 1, next_sync_at = ? WHERE id = ?"));
    HANGAR_TRY(s.Bind(1, now).Bind(2, error).Bind(3, next_sync_at).Bind(4, id).Run());
  }
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<void> SqlMirrorStore::Delete(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("DELETE FROM mirrors WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<void> SqlMirrorStore::SetCredential(int64_t id, std::string_view credential) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE mirrors SET credential = ? WHERE id = ?"));
  HANGAR_TRY(s.Bind(1, credential).Bind(2, id).Run());
  if (c->Changes() == 0) return NotFound(id);
  return {};
}

Result<void> SqlMirrorStore::PutUpstreamToken(const UpstreamTokenRecord& t) {
  const int64_t created_at = t.created_at != 0 ? t.created_at : NowUnix();
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto old, FindToken(*c, t.user_id, t.upstream));
    if (old && old->token != t.token) HANGAR_TRY(ReplaceCredential(*c, old->token, t.token));
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("INSERT INTO upstream_tokens (user_id, upstream, token, upstream_user, "
                           "created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, upstream) "
                           "DO UPDATE SET token = excluded.token, upstream_user = "
                           "excluded.upstream_user, created_at = excluded.created_at"));
    return s.Bind(1, t.user_id)
        .Bind(2, t.upstream)
        .Bind(3, t.token)
        .Bind(4, t.upstream_user)
        .Bind(5, created_at)
        .Run();
  });
}

Result<std::optional<UpstreamTokenRecord>> SqlMirrorStore::GetUpstreamToken(
    int64_t user_id, std::string_view upstream) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  return FindToken(*c, user_id, upstream);
}

Result<std::vector<UpstreamTokenRecord>> SqlMirrorStore::ListUpstreamTokens(int64_t user_id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(std::string("SELECT ") + kTokenColumns +
                                             " FROM upstream_tokens WHERE user_id = ? "
                                             "ORDER BY upstream"));
  s.Bind(1, user_id);
  std::vector<UpstreamTokenRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return out;
    out.push_back(ReadToken(s));
  }
}

Result<void> SqlMirrorStore::DeleteUpstreamToken(int64_t user_id, std::string_view upstream) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  return InTransaction(*c, [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto old, FindToken(*c, user_id, upstream));
    if (!old) {
      return MakeError(ErrorCode::NotFound,
                       "no token is set for the upstream hub " + std::string(upstream));
    }
    HANGAR_TRY(ReplaceCredential(*c, old->token, ""));
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c->Prepare("DELETE FROM upstream_tokens WHERE user_id = ? AND upstream = ?"));
    return s.Bind(1, user_id).Bind(2, upstream).Run();
  });
}

}  // namespace hangar::db
