#include "db/sqlite/sqlite_pool.h"

#include "core/log.h"
#include "db/migrations/migrations.h"

namespace hangar::db {
namespace {

constexpr size_t kMaxCachedStatements = 128;

}  // namespace

Error SqliteError(sqlite3* db, int rc, std::string_view what) {
  int ext = db ? sqlite3_extended_errcode(db) : rc;
  std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY)
    return MakeError(ErrorCode::Conflict, std::string(what) + ": already exists");
  return MakeError(ErrorCode::Internal, "database error (" + std::string(what) + "): " + msg);
}

// ---- SqliteStmt ----

SqliteStmt::SqliteStmt(sqlite3* db, sqlite3_stmt* stmt, bool owned, bool* busy_flag)
    : db_(db), stmt_(stmt), owned_(owned), busy_flag_(busy_flag) {}

SqliteStmt::SqliteStmt(SqliteStmt&& o) noexcept
    : db_(o.db_), stmt_(o.stmt_), owned_(o.owned_), busy_flag_(o.busy_flag_), bind_rc_(o.bind_rc_) {
  o.stmt_ = nullptr;
  o.busy_flag_ = nullptr;
}

SqliteStmt::~SqliteStmt() {
  if (!stmt_) return;
  if (owned_) {
    sqlite3_finalize(stmt_);
    return;
  }
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  if (busy_flag_) *busy_flag_ = false;
}

SqliteStmt& SqliteStmt::Bind(int i, int64_t v) {
  int rc = sqlite3_bind_int64(stmt_, i, v);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqliteStmt& SqliteStmt::Bind(int i, std::string_view v) {
  int rc = sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqliteStmt& SqliteStmt::Bind(int i, const std::optional<int64_t>& v) {
  return v ? Bind(i, *v) : BindNull(i);
}

SqliteStmt& SqliteStmt::Bind(int i, const std::optional<std::string>& v) {
  return v ? Bind(i, std::string_view(*v)) : BindNull(i);
}

SqliteStmt& SqliteStmt::BindNull(int i) {
  int rc = sqlite3_bind_null(stmt_, i);
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

Result<bool> SqliteStmt::Step() {
  if (bind_rc_ != SQLITE_OK) return SqliteError(db_, bind_rc_, "bind");
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, "step");
}

Result<void> SqliteStmt::Run() {
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto r, Step());
    if (!r) return {};
  }
}

int64_t SqliteStmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }

std::string SqliteStmt::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (!p) return {};
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

bool SqliteStmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

std::optional<int64_t> SqliteStmt::OptInt(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Int(col);
}

std::optional<std::string> SqliteStmt::OptText(int col) const {
  if (IsNull(col)) return std::nullopt;
  return Text(col);
}

// ---- SqliteConnection ----

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::filesystem::path& file,
                                                                 int busy_timeout_ms) {
  sqlite3* db = nullptr;
  // NOMUTEX: each connection is used by one thread at a time (the pool guarantees it).
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(file.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error e = SqliteError(db, rc, "open " + file.string());
    sqlite3_close_v2(db);
    return e;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  std::unique_ptr<SqliteConnection> conn(new SqliteConnection(db));
  // journal_mode=WAL needs the write lock once; busy_timeout covers a concurrent opener.
  HANGAR_TRY(conn->Exec("PRAGMA journal_mode=WAL"));
  HANGAR_TRY(conn->Exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON"));
  return conn;
}

SqliteConnection::~SqliteConnection() {
  for (auto& [sql, c] : cache_) sqlite3_finalize(c.stmt);
  sqlite3_close_v2(db_);
}

Result<SqliteStmt> SqliteConnection::Prepare(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it != cache_.end() && !*it->second.busy) {
    *it->second.busy = true;
    return SqliteStmt(db_, it->second.stmt, false, it->second.busy.get());
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare");
  // A statement already in use (nested use of the same SQL) or past the bound is owned.
  if (it != cache_.end() || cache_.size() >= kMaxCachedStatements)
    return SqliteStmt(db_, stmt, true, nullptr);
  Cached& c = cache_[std::string(sql)];
  c.stmt = stmt;
  c.busy = std::make_unique<bool>(true);
  return SqliteStmt(db_, stmt, false, c.busy.get());
}

Result<void> SqliteConnection::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "exec");
  return {};
}

// ---- SqlitePool ----

SqlitePool::Lease::Lease(SqlitePool* pool, std::unique_ptr<SqliteConnection> conn,
                         std::unique_lock<std::mutex> write_lock)
    : pool_(pool), conn_(std::move(conn)), write_lock_(std::move(write_lock)) {}

SqlitePool::Lease::~Lease() {
  if (conn_) pool_->Give(std::move(conn_));
}

namespace {

// Applies migrations newer than the recorded schema version, each in its own transaction.
// BEGIN IMMEDIATE makes concurrent openers (server and admin CLI) take turns.
Result<void> Migrate(SqliteConnection& conn) {
  HANGAR_TRY(conn.Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  for (const Migration& m : AllMigrations()) {
    auto applied = InTransaction(conn, [&]() -> Result<bool> {
      int64_t current = 0;
      {
        HANGAR_ASSIGN_OR_RETURN(
            auto q, conn.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_version"));
        HANGAR_TRY(q.Step());
        current = q.Int(0);
      }
      if (current >= m.version) return false;
      HANGAR_TRY(conn.Exec(RenderMigration(m, SqlDialect::Sqlite)));
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

}  // namespace

Result<std::shared_ptr<SqlitePool>> SqlitePool::Open(const std::filesystem::path& file,
                                                     Options options) {
  if (options.max_connections < 1) options.max_connections = 1;
  std::shared_ptr<SqlitePool> pool(new SqlitePool(file, options));
  HANGAR_ASSIGN_OR_RETURN(auto conn, SqliteConnection::Open(file, options.busy_timeout_ms));
  HANGAR_TRY(Migrate(*conn));
  pool->open_count_ = 1;
  pool->idle_.push_back(std::move(conn));
  return pool;
}

Result<std::unique_ptr<SqliteConnection>> SqlitePool::Take() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    if (open_count_ < options_.max_connections) {
      ++open_count_;
      lock.unlock();
      auto conn = SqliteConnection::Open(file_, options_.busy_timeout_ms);
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

void SqlitePool::Give(std::unique_ptr<SqliteConnection> conn) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(conn));
  }
  cv_.notify_one();
}

Result<SqlitePool::Lease> SqlitePool::Read() {
  HANGAR_ASSIGN_OR_RETURN(auto conn, Take());
  return Lease(this, std::move(conn), {});
}

Result<SqlitePool::Lease> SqlitePool::Write() {
  std::unique_lock write_lock(write_mu_);
  HANGAR_ASSIGN_OR_RETURN(auto conn, Take());
  return Lease(this, std::move(conn), std::move(write_lock));
}

}  // namespace hangar::db
