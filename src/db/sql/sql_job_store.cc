#include "db/sql/sql_job_store.h"

#include <algorithm>
#include <array>

namespace hangar::db {
namespace {

constexpr const char kColumns[] =
    "id, kind, dedup_key, payload, state, attempts, max_attempts, run_at, claim, lease_until, "
    "last_error, created_at, updated_at";

constexpr std::array<std::string_view, 4> kStateNames = {"queued", "running", "done", "dead"};

JobState ParseState(std::string_view s) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (kStateNames[i] == s) return static_cast<JobState>(i);
  }
  return JobState::Dead;  // unknown text (a newer binary's state): never claimed
}

JobRecord ReadRow(Stmt& s) {
  JobRecord j;
  j.id = s.Int(0);
  j.kind = s.Text(1);
  j.key = s.Text(2);
  j.payload = s.Text(3);
  j.state = ParseState(s.Text(4));
  j.attempts = static_cast<int>(s.Int(5));
  j.max_attempts = static_cast<int>(s.Int(6));
  j.run_at = s.Int(7);
  j.claim = s.Text(8);
  j.lease_until = s.Int(9);
  j.last_error = s.Text(10);
  j.created_at = s.Int(11);
  j.updated_at = s.Int(12);
  return j;
}

Result<std::optional<JobRecord>> ReadOne(Stmt& s) {
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<JobRecord>();
  return std::optional<JobRecord>(ReadRow(s));
}

Error LostClaim(int64_t id) {
  return MakeError(ErrorCode::Conflict, "job " + std::to_string(id) +
                                            " is no longer held by this claim (its lease ran "
                                            "out and another process took it)");
}

// The last error kept of a job: enough to read, bounded.
std::string Bounded(const std::string& error) {
  constexpr size_t kMax = 4000;
  return error.size() <= kMax ? error : error.substr(0, kMax) + "…";
}

}  // namespace

std::string_view JobStateName(JobState s) { return kStateNames[static_cast<size_t>(s)]; }

Result<int64_t> SqlJobStore::Enqueue(const NewJob& job, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // A keyed job joins the queued one of its kind and key. Two processes adding the same
  // key at once: the unique index (jobs_queued_key) refuses the second insert, which then
  // finds the first's row; so try a few times.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (!job.key.empty()) {
      HANGAR_ASSIGN_OR_RETURN(
          auto s,
          c->Prepare("UPDATE jobs SET run_at = CASE WHEN run_at < ?1 THEN run_at ELSE ?1 END, "
                     "updated_at = ?2 WHERE kind = ?3 AND dedup_key = ?4 AND state = 'queued' "
                     "RETURNING id"));
      s.Bind(1, job.run_at).Bind(2, now).Bind(3, job.kind).Bind(4, job.key);
      HANGAR_ASSIGN_OR_RETURN(bool found, s.Step());
      if (found) return s.Int(0);
    }
    HANGAR_ASSIGN_OR_RETURN(
        auto ins, c->Prepare("INSERT INTO jobs (kind, dedup_key, payload, state, attempts, "
                             "max_attempts, run_at, claim, lease_until, last_error, created_at, "
                             "updated_at) VALUES (?, ?, ?, 'queued', 0, ?, ?, '', 0, '', ?, ?) "
                             "RETURNING id"));
    ins.Bind(1, job.kind)
        .Bind(2, job.key)
        .Bind(3, job.payload)
        .Bind(4, static_cast<int64_t>(job.max_attempts))
        .Bind(5, job.run_at)
        .Bind(6, now)
        .Bind(7, now);
    auto row = ins.Step();
    if (row && *row) return ins.Int(0);
    if (!row && row.error().code != ErrorCode::Conflict) return std::move(row).error();
  }
  return MakeError(ErrorCode::Internal, "job " + job.kind + " " + job.key + ": could not enqueue");
}

Result<std::optional<JobRecord>> SqlJobStore::Claim(const std::vector<std::string>& kinds,
                                                    const std::string& claim, int64_t lease_ms,
                                                    int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // A job whose process died in each of its attempts is dead rather than claimed again.
  HANGAR_ASSIGN_OR_RETURN(
      auto dead,
      c->Prepare("UPDATE jobs SET state = 'dead', claim = '', updated_at = ?1, last_error = "
                 "'its process stopped (lease ran out) in each of its attempts' "
                 "WHERE state = 'running' AND lease_until <= ?1 AND attempts >= max_attempts"));
  HANGAR_TRY(dead.Bind(1, now).Run());

  bool any = kinds.empty() || std::find(kinds.begin(), kinds.end(), "") != kinds.end();
  std::string in;
  if (!any) {
    in = " AND kind IN (";
    for (size_t i = 0; i < kinds.size(); ++i) in += (i ? ", ?" : "?") + std::to_string(i + 4);
    in += ")";
  }
  // One statement: the due job is picked and taken at once. PostgreSQL skips rows other
  // claimers hold locked (each takes a different job); SQLite runs it under its one writer.
  const bool pg = c->dialect() == SqlDialect::Postgres;
  std::string sql =
      std::string(
          "UPDATE jobs SET state = 'running', claim = ?1, lease_until = ?2, attempts = "
          "attempts + 1, updated_at = ?3 WHERE id = (SELECT id FROM jobs WHERE "
          "((state = 'queued' AND run_at <= ?3) OR (state = 'running' AND lease_until <= "
          "?3))") +
      in + " ORDER BY run_at, id LIMIT 1" + (pg ? " FOR UPDATE SKIP LOCKED" : "") + ") RETURNING " +
      kColumns;
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
  s.Bind(1, claim).Bind(2, now + lease_ms).Bind(3, now);
  if (!any) {
    for (size_t i = 0; i < kinds.size(); ++i) s.Bind(static_cast<int>(i + 4), kinds[i]);
  }
  return ReadOne(s);
}

Result<void> SqlJobStore::Renew(int64_t id, const std::string& claim, int64_t lease_ms,
                                int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE jobs SET lease_until = ?, updated_at = ? "
                                             "WHERE id = ? AND claim = ? AND state = 'running'"));
  HANGAR_TRY(s.Bind(1, now + lease_ms).Bind(2, now).Bind(3, id).Bind(4, claim).Run());
  if (c->Changes() == 0) return LostClaim(id);
  return {};
}

Result<void> SqlJobStore::Complete(int64_t id, const std::string& claim, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("UPDATE jobs SET state = 'done', claim = '', updated_at = ? "
                                     "WHERE id = ? AND claim = ? AND state = 'running'"));
  HANGAR_TRY(s.Bind(1, now).Bind(2, id).Bind(3, claim).Run());
  if (c->Changes() == 0) return LostClaim(id);
  return {};
}

Result<JobState> SqlJobStore::Fail(int64_t id, const std::string& claim, const std::string& error,
                                   int64_t retry_at, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("UPDATE jobs SET state = CASE WHEN attempts < max_attempts THEN 'queued' "
                         "ELSE 'dead' END, run_at = ?1, claim = '', last_error = ?2, updated_at = "
                         "?3 WHERE id = ?4 AND claim = ?5 AND state = 'running' RETURNING state"));
  s.Bind(1, retry_at).Bind(2, Bounded(error)).Bind(3, now).Bind(4, id).Bind(5, claim);
  auto row = s.Step();
  if (!row && row.error().code == ErrorCode::Conflict) {
    // Queued again while another job of its kind and key is queued: this one is dropped,
    // the queued one will do the work.
    HANGAR_ASSIGN_OR_RETURN(auto drop, c->Prepare("UPDATE jobs SET state = 'done', claim = '', "
                                                  "last_error = ?, updated_at = ? WHERE id = ? "
                                                  "AND claim = ? AND state = 'running'"));
    HANGAR_TRY(drop.Bind(1, Bounded(error)).Bind(2, now).Bind(3, id).Bind(4, claim).Run());
    return JobState::Done;
  }
  if (!row) return std::move(row).error();
  if (!*row) return LostClaim(id);
  return ParseState(s.Text(0));
}

Result<std::optional<JobRecord>> SqlJobStore::Get(int64_t id) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare(std::string("SELECT ") + kColumns + " FROM jobs WHERE id = ?"));
  s.Bind(1, id);
  return ReadOne(s);
}

Result<std::vector<JobRecord>> SqlJobStore::List(JobState state, int limit) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare(std::string("SELECT ") + kColumns +
                                     " FROM jobs WHERE state = ? ORDER BY id DESC LIMIT ?"));
  s.Bind(1, JobStateName(state)).Bind(2, static_cast<int64_t>(limit));
  std::vector<JobRecord> out;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ReadRow(s));
  }
  return out;
}

Result<void> SqlJobStore::Retry(int64_t id, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(
      auto s,
      c->Prepare("UPDATE jobs SET state = 'queued', attempts = 0, last_error = '', run_at = ?1, "
                 "updated_at = ?1 WHERE id = ?2 AND state = 'dead'"));
  HANGAR_TRY(s.Bind(1, now).Bind(2, id).Run());
  if (c->Changes() == 0) {
    return MakeError(ErrorCode::NotFound, "no dead job " + std::to_string(id));
  }
  return {};
}

Result<int64_t> SqlJobStore::DeleteDone(int64_t before) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  HANGAR_ASSIGN_OR_RETURN(auto s,
                          c->Prepare("DELETE FROM jobs WHERE state = 'done' AND updated_at < ?"));
  HANGAR_TRY(s.Bind(1, before).Run());
  return c->Changes();
}

Result<JobCounts> SqlJobStore::Counts(int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Read());
  HANGAR_ASSIGN_OR_RETURN(
      auto s, c->Prepare("SELECT "
                         "SUM(CASE WHEN state = 'queued' OR (state = 'running' AND lease_until "
                         "<= ?1) THEN 1 ELSE 0 END), "
                         "SUM(CASE WHEN state = 'running' AND lease_until > ?1 THEN 1 ELSE 0 END), "
                         "SUM(CASE WHEN state = 'dead' THEN 1 ELSE 0 END) "
                         "FROM jobs WHERE state <> 'done'"));
  s.Bind(1, now);
  HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
  JobCounts counts;
  if (row) {
    counts.queued = s.IsNull(0) ? 0 : s.Int(0);
    counts.running = s.IsNull(1) ? 0 : s.Int(1);
    counts.dead = s.IsNull(2) ? 0 : s.Int(2);
  }
  return counts;
}

Result<bool> SqlJobStore::TakeTick(const std::string& name, int64_t interval_ms, int64_t now) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool_->Write());
  // First ask of a name: its row, due at once (a concurrent first ask loses the insert).
  HANGAR_ASSIGN_OR_RETURN(auto ins, c->Prepare("INSERT INTO job_ticks (name, due_at) SELECT ?1, 0 "
                                               "WHERE NOT EXISTS (SELECT 1 FROM job_ticks "
                                               "WHERE name = ?1)"));
  auto inserted = ins.Bind(1, name).Run();
  if (!inserted && inserted.error().code != ErrorCode::Conflict) return std::move(inserted).error();
  // The compare-and-set: of the processes asking, the one whose update moves due_at wins.
  HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare("UPDATE job_ticks SET due_at = ? WHERE name = ? AND "
                                             "due_at <= ?"));
  HANGAR_TRY(s.Bind(1, now + interval_ms).Bind(2, name).Bind(3, now).Run());
  return c->Changes() == 1;
}

}  // namespace hangar::db
