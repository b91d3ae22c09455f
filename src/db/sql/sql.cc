#include "db/sql/sql.h"

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "core/log.h"
#include "db/migrations/migrations.h"

namespace hangar::db {
namespace {

constexpr size_t kMaxCachedStatements = 128;

// PostgreSQL's advisory lock key migrations take (any constant; "hangar" in ASCII).
constexpr const char kMigrationLock[] = "SELECT pg_advisory_xact_lock(110330136659570)";

}  // namespace

// ---- Stmt ----

Stmt::Stmt(StmtImpl* impl, std::unique_ptr<StmtImpl> owned, bool* busy_flag)
    : impl_(impl), owned_(std::move(owned)), busy_flag_(busy_flag) {}

Stmt::Stmt(Stmt&& o) noexcept
    : impl_(o.impl_), owned_(std::move(o.owned_)), busy_flag_(o.busy_flag_) {
  o.impl_ = nullptr;
  o.busy_flag_ = nullptr;
}

Stmt::~Stmt() {
  if (!impl_) return;
  impl_->Reset();
  if (busy_flag_) *busy_flag_ = false;
}

Stmt& Stmt::Bind(int i, int64_t v) {
  impl_->BindInt(i, v);
  return *this;
}

Stmt& Stmt::Bind(int i, std::string_view v) {
  impl_->BindText(i, v);
  return *this;
}

Stmt& Stmt::Bind(int i, const std::optional<int64_t>& v) { return v ? Bind(i, *v) : BindNull(i); }

Stmt& Stmt::Bind(int i, const std::optional<std::string>& v) {
  return v ? Bind(i, std::string_view(*v)) : BindNull(i);
}

Stmt& Stmt::BindNull(int i) {
  impl_->BindNull(i);
  return *this;
}

Result<void> Stmt::Run() {
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto r, Step());
    if (!r) return {};
  }
}

std::optional<int64_t> Stmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

std::optional<std::string> Stmt::OptText(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Text(col);
}

// ---- Connection ----

namespace {
std::atomic<uint64_t> statements_run{0};
thread_local uint64_t statements_run_here = 0;
}  // namespace

uint64_t StatementsRun() { return statements_run.load(std::memory_order_relaxed); }
uint64_t StatementsRunOnThisThread() { return statements_run_here; }

Result<Stmt> Connection::Prepare(std::string_view sql) {
  statements_run.fetch_add(1, std::memory_order_relaxed);
  ++statements_run_here;
  auto it = cache_.find(std::string(sql));
  if (it != cache_.end() && !*it->second.busy) {
    *it->second.busy = true;
    return Stmt(it->second.stmt.get(), nullptr, it->second.busy.get());
  }
  HANGAR_ASSIGN_OR_RETURN(auto stmt, PrepareImpl(sql));
  // A statement already in use (nested use of the same SQL) or past the bound is owned.
  if (it != cache_.end() || cache_.size() >= kMaxCachedStatements) {
    StmtImpl* raw = stmt.get();
    return Stmt(raw, std::move(stmt), nullptr);
  }
  Cached& c = cache_[std::string(sql)];
  c.stmt = std::move(stmt);
  c.busy = std::make_unique<bool>(true);
  return Stmt(c.stmt.get(), nullptr, c.busy.get());
}

// ---- Pool ----

Pool::Lease::Lease(Pool* pool, std::unique_ptr<Connection> conn,
                   std::unique_lock<std::mutex> write_lock)
    : pool_(pool), conn_(std::move(conn)), write_lock_(std::move(write_lock)) {}

Pool::Lease::~Lease() {
  if (conn_) pool_->Give(std::move(conn_));
}

Pool::Pool(SqlDialect dialect, std::unique_ptr<Connection> first, Opener open, Options options)
    : dialect_(dialect), open_(std::move(open)), options_(options) {
  if (first) {
    idle_.push_back(std::move(first));
    open_count_ = 1;
  }
}

Result<std::unique_ptr<Connection>> Pool::Take() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    if (open_count_ < std::max(1, options_.max_connections)) {
      ++open_count_;
      lock.unlock();
      auto conn = open_();
      if (!conn) {
        lock.lock();
        --open_count_;
        cv_.notify_one();
      }
      return conn;
    }
    cv_.wait(lock);
  }
}

void Pool::Give(std::unique_ptr<Connection> conn) {
  {
    std::lock_guard lock(mu_);
    if (conn->Broken())
      --open_count_;  // the next Take opens a fresh one
    else
      idle_.push_back(std::move(conn));
  }
  cv_.notify_one();
}

Result<Pool::Lease> Pool::Read() {
  HANGAR_ASSIGN_OR_RETURN(auto conn, Take());
  return Lease(this, std::move(conn), {});
}

Result<Pool::Lease> Pool::Write() {
  std::unique_lock<std::mutex> write_lock;
  if (options_.serialize_writes) write_lock = std::unique_lock(write_mu_);
  HANGAR_ASSIGN_OR_RETURN(auto conn, Take());
  return Lease(this, std::move(conn), std::move(write_lock));
}

int Pool::OpenCount() {
  std::lock_guard lock(mu_);
  return open_count_;
}

// ---- Migrate ----

void BackOffBeforeRetry(int attempt) {
  thread_local std::minstd_rand random(std::random_device{}());
  int64_t cap_us = int64_t{1000} << std::min(attempt, 10);
  std::this_thread::sleep_for(std::chrono::microseconds(random() % cap_us));
}

Result<void> Migrate(Connection& conn) {
  const SqlDialect dialect = conn.dialect();
  // One transaction per migration; the first statement of each takes the lock that makes
  // concurrent openers (replicas, the admin CLI) take turns, so the version read after it
  // is the one the migration builds on.
  auto lock_and_read = [&]() -> Result<int64_t> {
    if (dialect == SqlDialect::Postgres) HANGAR_TRY(conn.Exec(kMigrationLock));
    HANGAR_TRY(conn.Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
    HANGAR_ASSIGN_OR_RETURN(auto q,
                            conn.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version"));
    HANGAR_TRY(q.Step());
    return q.Int(0);
  };
  const int64_t known = AllMigrations().empty() ? 0 : AllMigrations().back().version;
  for (const Migration& m : AllMigrations()) {
    auto applied = InTransaction(conn, [&]() -> Result<bool> {
      HANGAR_ASSIGN_OR_RETURN(int64_t current, lock_and_read());
      if (current > known)
        return MakeError(ErrorCode::Internal,
                         "the database's schema is at version " + std::to_string(current) +
                             ", newer than this hangar's " + std::to_string(known) +
                             ": upgrade this binary before starting it on that database");
      if (current >= m.version) return false;
      HANGAR_TRY(conn.Exec(RenderMigration(m, dialect)));
      HANGAR_ASSIGN_OR_RETURN(auto ins,
                              conn.Prepare("INSERT INTO schema_version (version) VALUES (?)"));
      HANGAR_TRY(ins.Bind(1, static_cast<int64_t>(m.version)).Run());
      return true;
    });
    if (!applied) return std::move(applied).error();
    if (*applied) Log("db")->info("applied schema migration {}", m.version);
  }
  return {};
}

Result<void> CheckSchemaCurrent(Pool& pool) {
  const int64_t known = AllMigrations().empty() ? 0 : AllMigrations().back().version;
  auto lease = pool.Read();
  if (!lease) return MakeError(ErrorCode::Unavailable, lease.error().message);
  auto version = [&]() -> Result<int64_t> {
    HANGAR_ASSIGN_OR_RETURN(
        auto q, (*lease)->Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version"));
    HANGAR_TRY(q.Step());
    return q.Int(0);
  }();
  if (!version) return MakeError(ErrorCode::Unavailable, version.error().message);
  if (*version != known) {
    return MakeError(ErrorCode::Unavailable, "the database's schema is at version " +
                                                 std::to_string(*version) +
                                                 "; this hangar expects " + std::to_string(known));
  }
  return {};
}

}  // namespace hangar::db
