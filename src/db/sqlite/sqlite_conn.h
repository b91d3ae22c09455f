#pragma once
// SQLite behind the engine-neutral SQL layer (db/sql/sql.h): the database runs in WAL mode,
// so readers never block each other or the writer; the pool serializes this process's
// writers, and busy_timeout covers other processes (the admin CLI).

#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string_view>

#include "db/sql/sql.h"

namespace hangar::db {

// The Error for a failed SQLite call: Conflict for UNIQUE/PRIMARY KEY violations, Internal
// otherwise. `what` says what was being done ("insert user").
Error SqliteError(sqlite3* db, int rc, std::string_view what);

// One SQLite connection.
class SqliteConnection final : public Connection {
 public:
  // Opens (creating if needed) `file` with WAL, busy_timeout, foreign keys and
  // synchronous=NORMAL. Errors: Internal.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::filesystem::path& file,
                                                        int busy_timeout_ms);
  ~SqliteConnection() override;

  SqlDialect dialect() const override { return SqlDialect::Sqlite; }
  Result<void> Exec(const std::string& sql) override;
  Result<int64_t> LastInsertId() override { return sqlite3_last_insert_rowid(db_); }
  int64_t Changes() const override { return sqlite3_changes(db_); }
  Result<void> Begin(bool write) override { return Exec(write ? "BEGIN IMMEDIATE" : "BEGIN"); }

 protected:
  Result<std::unique_ptr<StmtImpl>> PrepareImpl(std::string_view sql) override;

 private:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

struct SqliteOptions {
  int max_connections = 8;     // connections opened lazily up to this many
  int busy_timeout_ms = 5000;  // how long to wait for another process's write lock
};

// Opens (creating) the database file, applies pending migrations, and returns a pool over
// it. Errors: Internal.
Result<std::shared_ptr<Pool>> OpenSqlitePool(const std::filesystem::path& file,
                                             SqliteOptions options = {});

}  // namespace hangar::db
