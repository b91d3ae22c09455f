#pragma once
// SQLite plumbing shared by the Sqlite*Store classes: RAII statements, connections with a
// per-connection prepared-statement cache, and a small connection pool.
//
// Concurrency model: the database runs in WAL mode, so readers never block each other or
// the writer. Each thread takes a connection from the pool for the duration of one store
// call. Write leases additionally hold a process-wide writer mutex: SQLite admits one writer
// at a time anyway, and waiting on a mutex is cheaper and fairer than spinning in SQLite's
// busy handler. Other processes (the admin CLI) are handled by busy_timeout.

#include <sqlite3.h>

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"

namespace hangar::db {

// The Error for a failed SQLite call: Conflict for UNIQUE/PRIMARY KEY violations, Internal
// otherwise. `what` says what was being done ("insert user").
Error SqliteError(sqlite3* db, int rc, std::string_view what);

// A prepared statement, borrowed from a connection's cache (or owned when not cacheable).
// Resets and clears bindings when destroyed. Bind indexes are 1-based, columns 0-based.
// Not thread-safe; lives within one store call.
class SqliteStmt {
 public:
  SqliteStmt(sqlite3* db, sqlite3_stmt* stmt, bool owned, bool* busy_flag);
  SqliteStmt(SqliteStmt&& o) noexcept;
  SqliteStmt& operator=(SqliteStmt&&) = delete;
  ~SqliteStmt();

  SqliteStmt& Bind(int i, int64_t v);
  SqliteStmt& Bind(int i, std::string_view v);
  SqliteStmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  SqliteStmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  SqliteStmt& Bind(int i, const std::optional<int64_t>& v);
  SqliteStmt& Bind(int i, const std::optional<std::string>& v);
  SqliteStmt& BindNull(int i);

  // Advances one row: true when a row is available, false when done.
  Result<bool> Step();
  // Steps to completion, ignoring rows.
  Result<void> Run();

  int64_t Int(int col) const;
  std::string Text(int col) const;
  bool IsNull(int col) const;
  std::optional<int64_t> OptInt(int col) const;
  std::optional<std::string> OptText(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  bool owned_;
  bool* busy_flag_;  // the cache slot's in-use flag, or nullptr
  int bind_rc_ = SQLITE_OK;
};

// One SQLite connection with its statement cache. Used by one thread at a time.
class SqliteConnection {
 public:
  // Opens (creating if needed) `file` with WAL, busy_timeout, foreign keys and
  // synchronous=NORMAL. Errors: Internal.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::filesystem::path& file,
                                                        int busy_timeout_ms);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  // A statement for `sql`, prepared once per connection and cached by its text (up to a
  // bound; beyond it statements are prepared per use). Errors: Internal.
  Result<SqliteStmt> Prepare(std::string_view sql);
  // Runs one or more statements without results. Errors: Internal, Conflict.
  Result<void> Exec(const std::string& sql);
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  sqlite3* raw() const { return db_; }

 private:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    std::unique_ptr<bool> busy;  // stable address handed to SqliteStmt
  };
  sqlite3* db_;
  std::unordered_map<std::string, Cached> cache_;
};

// A pool of connections to one database file. Thread-safe.
class SqlitePool {
 public:
  struct Options {
    int max_connections = 8;     // connections opened lazily up to this many
    int busy_timeout_ms = 5000;  // how long to wait for another process's write lock
  };

  // A borrowed connection, returned to the pool on destruction. Move-only.
  class Lease {
   public:
    Lease(SqlitePool* pool, std::unique_ptr<SqliteConnection> conn,
          std::unique_lock<std::mutex> write_lock);
    Lease(Lease&&) noexcept = default;
    ~Lease();
    SqliteConnection* operator->() { return conn_.get(); }
    SqliteConnection& operator*() { return *conn_; }

   private:
    SqlitePool* pool_;
    std::unique_ptr<SqliteConnection> conn_;
    std::unique_lock<std::mutex> write_lock_;
  };

  // Opens the file (creating it), applies pending migrations. Errors: Internal.
  static Result<std::shared_ptr<SqlitePool>> Open(const std::filesystem::path& file,
                                                  Options options);

  // A connection for reading; never waits for writers. Errors: Internal.
  Result<Lease> Read();
  // A connection for writing, holding the process-wide writer lock. Errors: Internal.
  Result<Lease> Write();

 private:
  SqlitePool(std::filesystem::path file, Options options)
      : file_(std::move(file)), options_(options) {}
  Result<std::unique_ptr<SqliteConnection>> Take();
  void Give(std::unique_ptr<SqliteConnection> conn);

  const std::filesystem::path file_;
  const Options options_;
  std::mutex write_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<SqliteConnection>> idle_;  // guarded by mu_
  int open_count_ = 0;                                   // guarded by mu_
};

// Runs `fn` (returning Result<T>) inside BEGIN IMMEDIATE ... COMMIT on `conn`; rolls back
// when `fn` or the commit fails.
template <typename F>
auto InTransaction(SqliteConnection& conn, F&& fn) -> decltype(fn()) {
  if (auto r = conn.Exec("BEGIN IMMEDIATE"); !r) return std::move(r).error();
  auto result = fn();
  if (!result) {
    (void)conn.Exec("ROLLBACK");
    return result;
  }
  if (auto r = conn.Exec("COMMIT"); !r) {
    (void)conn.Exec("ROLLBACK");
    return std::move(r).error();
  }
  return result;
}

// Runs `fn` (returning Result<T>) inside BEGIN ... COMMIT on a read connection: the reads
// of a store call see one snapshot and take SQLite's read lock once, not per statement.
template <typename F>
auto InReadTransaction(SqliteConnection& conn, F&& fn) -> decltype(fn()) {
  if (auto r = conn.Exec("BEGIN"); !r) return std::move(r).error();
  auto result = fn();
  (void)conn.Exec(result ? "COMMIT" : "ROLLBACK");
  return result;
}

}  // namespace hangar::db
