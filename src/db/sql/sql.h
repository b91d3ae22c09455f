#pragma once
// The engine-neutral SQL layer the stores are written against: statements, connections with
// a per-connection prepared-statement cache, a bounded connection pool, transactions with
// retries, and schema migrations. SQLite (db/sqlite/sqlite_conn.h) and PostgreSQL
// (db/postgres/pg_conn.h) implement StmtImpl and Connection; the stores' SQL is written
// once, in the subset both speak, with `?` / `?N` placeholders (DESIGN.md §db).
//
// Concurrency model: each thread takes a connection from the pool for one store call. On
// SQLite, write leases also hold a process-wide writer mutex (SQLite admits one writer at a
// time; waiting on a mutex is fairer than its busy handler). On PostgreSQL, writes inside a
// transaction run SERIALIZABLE and InTransaction retries a serialization failure.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.h"

namespace hangar::db {

enum class SqlDialect { Sqlite, Postgres };

// One prepared statement, as its engine holds it. Bind indexes are 1-based, columns
// 0-based. A bind error is kept and returned by the next Step.
class StmtImpl {
 public:
  virtual ~StmtImpl() = default;
  virtual void BindInt(int i, int64_t v) = 0;
  virtual void BindText(int i, std::string_view v) = 0;
  virtual void BindNull(int i) = 0;
  // Advances one row: true when a row is available, false when done. Errors: Conflict (a
  // unique key), Internal; Connection::Retryable tells whether to retry the transaction.
  virtual Result<bool> Step() = 0;
  virtual int64_t Int(int col) const = 0;
  virtual std::string Text(int col) const = 0;
  virtual bool IsNull(int col) const = 0;
  // Forgets the bindings and the results, ready for another use.
  virtual void Reset() = 0;
};

// A statement borrowed from a connection's cache (or owned when not cacheable); reset when
// destroyed. Not thread-safe; lives within one store call.
class Stmt {
 public:
  Stmt(StmtImpl* impl, std::unique_ptr<StmtImpl> owned, bool* busy_flag);
  Stmt(Stmt&& o) noexcept;
  Stmt& operator=(Stmt&&) = delete;
  ~Stmt();

  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& Bind(int i, const std::string& v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const char* v) { return Bind(i, std::string_view(v)); }
  Stmt& Bind(int i, const std::optional<int64_t>& v);
  Stmt& Bind(int i, const std::optional<std::string>& v);
  Stmt& BindNull(int i);

  // Advances one row: true when a row is available, false when done.
  Result<bool> Step() { return impl_->Step(); }
  // Steps to completion, ignoring rows.
  Result<void> Run();

  int64_t Int(int col) const { return impl_->Int(col); }
  std::string Text(int col) const { return impl_->Text(col); }
  bool IsNull(int col) const { return impl_->IsNull(col); }
  std::optional<int64_t> OptInt(int col) const;
  std::optional<std::string> OptText(int col) const;

 private:
  StmtImpl* impl_;
  std::unique_ptr<StmtImpl> owned_;
  bool* busy_flag_;  // the cache slot's in-use flag, or nullptr
};

// Statements prepared to run (Connection::Prepare calls, cached or not; transaction
// control not counted) since the process started, in all threads or in the calling one:
// the queries a request costs (tests/api/hf/queries_per_request_test.cc) and /metrics.
uint64_t StatementsRun();
uint64_t StatementsRunOnThisThread();

// One database connection with its statement cache. Used by one thread at a time.
class Connection {
 public:
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  virtual SqlDialect dialect() const = 0;
  // A statement for `sql`, prepared once per connection and cached by its text (up to a
  // bound; beyond it, or while the cached one is in use, prepared per use). Errors: Internal.
  Result<Stmt> Prepare(std::string_view sql);
  // Runs one or more statements without parameters or results. Errors: Internal, Conflict.
  virtual Result<void> Exec(const std::string& sql) = 0;
  // The id the last INSERT on this connection assigned. Errors: Internal.
  virtual Result<int64_t> LastInsertId() = 0;
  // Rows changed by the last INSERT, UPDATE or DELETE statement on this connection.
  virtual int64_t Changes() const = 0;
  // Whether the last error on this connection ends a transaction that may simply be run
  // again (a serialization failure or a deadlock).
  virtual bool Retryable() const { return false; }
  // Whether the connection is lost (the server went away): the pool then drops it.
  virtual bool Broken() const { return false; }
  // Opens a transaction: a writing one takes the engine's write lock (SQLite) or runs
  // SERIALIZABLE (PostgreSQL); a reading one sees one snapshot. Errors: Internal.
  virtual Result<void> Begin(bool write) = 0;

 protected:
  Connection() = default;
  virtual Result<std::unique_ptr<StmtImpl>> PrepareImpl(std::string_view sql) = 0;
  // Destroys the cached statements; an engine's destructor calls it while its handle is
  // still open.
  void DropStatements() { cache_.clear(); }

 private:
  struct Cached {
    std::unique_ptr<StmtImpl> stmt;
    std::unique_ptr<bool> busy;  // stable address handed to Stmt
  };
  std::unordered_map<std::string, Cached> cache_;
};

// A bounded pool of connections to one database. Thread-safe.
class Pool {
 public:
  using Opener = std::function<Result<std::unique_ptr<Connection>>()>;
  struct Options {
    int max_connections = 8;       // connections opened lazily up to this many
    bool serialize_writes = true;  // write leases take a process-wide mutex (SQLite)
  };

  // A borrowed connection, returned to the pool on destruction. Move-only.
  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<Connection> conn, std::unique_lock<std::mutex> write_lock);
    Lease(Lease&&) noexcept = default;
    ~Lease();
    Connection* operator->() { return conn_.get(); }
    Connection& operator*() { return *conn_; }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
    std::unique_lock<std::mutex> write_lock_;
  };

  // A pool over `first` (already open and migrated) that opens more with `open`.
  Pool(SqlDialect dialect, std::unique_ptr<Connection> first, Opener open, Options options);

  SqlDialect dialect() const { return dialect_; }
  // A connection for reading. Waits while all are in use. Errors: Internal.
  Result<Lease> Read();
  // A connection for writing (holding the writer mutex when writes are serialized).
  // Errors: Internal.
  Result<Lease> Write();
  // Connections open now and the bound (for /metrics and tests).
  int OpenCount();
  int MaxConnections() const { return options_.max_connections; }

 private:
  Result<std::unique_ptr<Connection>> Take();
  void Give(std::unique_ptr<Connection> conn);

  const SqlDialect dialect_;
  const Opener open_;
  const Options options_;
  std::mutex write_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
  int open_count_ = 0;                             // guarded by mu_
};

// How many times InTransaction runs a transaction that failed only for its isolation.
inline constexpr int kTransactionAttempts = 10;

// Sleeps before InTransaction's `attempt`+1-th run: a random 0..2^attempt ms, so writers
// that conflicted do not meet again in the same order.
void BackOffBeforeRetry(int attempt);

// Runs `fn` (returning Result<T>) inside a writing transaction on `conn` and commits; rolls
// back when `fn` or the commit fails, and runs it again (up to kTransactionAttempts, backing
// off) when the failure was a serialization conflict. `fn` must touch only the database.
template <typename F>
auto InTransaction(Connection& conn, F&& fn) -> decltype(fn()) {
  for (int attempt = 1;; ++attempt) {
    if (auto r = conn.Begin(true); !r) return std::move(r).error();
    auto result = fn();
    if (result) {
      auto committed = conn.Exec("COMMIT");
      if (committed) return result;
      result = std::move(committed).error();
    }
    bool retry = conn.Retryable() && attempt < kTransactionAttempts;
    (void)conn.Exec("ROLLBACK");
    if (!retry) return result;
    BackOffBeforeRetry(attempt);
  }
}

// Runs `fn` (returning Result<T>) inside a reading transaction: the reads of a store call
// see one snapshot (and take SQLite's read lock once, not per statement).
template <typename F>
auto InReadTransaction(Connection& conn, F&& fn) -> decltype(fn()) {
  if (auto r = conn.Begin(false); !r) return std::move(r).error();
  auto result = fn();
  (void)conn.Exec(result ? "COMMIT" : "ROLLBACK");
  return result;
}

// Applies the migrations (db/migrations) newer than the recorded schema version, each in
// its own transaction; concurrent openers take turns (SQLite's write lock, PostgreSQL's
// advisory lock). Errors: Internal, also when the database's schema is newer than this
// binary knows (another replica was upgraded first): such a replica must not start.
Result<void> Migrate(Connection& conn);

// Whether the database's schema is at the newest migration this binary knows: a replica
// of another release may have migrated it since this one started (issue 17 §Acceptance,
// "two replicas on different schema versions"). Errors: Unavailable "the database's schema
// is at version N; this hangar expects M", or when no connection can be had; Internal.
Result<void> CheckSchemaCurrent(Pool& pool);

}  // namespace hangar::db
