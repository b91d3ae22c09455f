#include "db/sqlite/sqlite_conn.h"

namespace hangar::db {

Error SqliteError(sqlite3* db, int rc, std::string_view what) {
  int ext = db ? sqlite3_extended_errcode(db) : rc;
  std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY)
    return MakeError(ErrorCode::Conflict, std::string(what) + ": already exists");
  return MakeError(ErrorCode::Internal, "database error (" + std::string(what) + "): " + msg);
}

namespace {

// A prepared sqlite3_stmt; finalized with it.
class SqliteStmtImpl final : public StmtImpl {
 public:
  SqliteStmtImpl(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~SqliteStmtImpl() override { sqlite3_finalize(stmt_); }

  void BindInt(int i, int64_t v) override { Keep(sqlite3_bind_int64(stmt_, i, v)); }
  void BindText(int i, std::string_view v) override {
    Keep(sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void BindNull(int i) override { Keep(sqlite3_bind_null(stmt_, i)); }
  Result<bool> Step() override {
    if (bind_rc_ != SQLITE_OK) return SqliteError(db_, bind_rc_, "bind");
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteError(db_, rc, "step");
  }
  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  std::string Text(int col) const override {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (!p) return {};
    return std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  bool IsNull(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    bind_rc_ = SQLITE_OK;
  }

 private:
  void Keep(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;
};

}  // namespace

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
  DropStatements();
  sqlite3_close_v2(db_);
}

Result<std::unique_ptr<StmtImpl>> SqliteConnection::PrepareImpl(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare");
  return std::unique_ptr<StmtImpl>(std::make_unique<SqliteStmtImpl>(db_, stmt));
}

Result<void> SqliteConnection::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "exec");
  return {};
}

Result<std::shared_ptr<Pool>> OpenSqlitePool(const std::filesystem::path& file,
                                             SqliteOptions options) {
  HANGAR_ASSIGN_OR_RETURN(auto first, SqliteConnection::Open(file, options.busy_timeout_ms));
  HANGAR_TRY(Migrate(*first));
  auto open = [file, timeout = options.busy_timeout_ms]() -> Result<std::unique_ptr<Connection>> {
    HANGAR_ASSIGN_OR_RETURN(auto conn, SqliteConnection::Open(file, timeout));
    return std::unique_ptr<Connection>(std::move(conn));
  };
  return std::make_shared<Pool>(SqlDialect::Sqlite, std::move(first), std::move(open),
                                Pool::Options{options.max_connections, true});
}

}  // namespace hangar::db
