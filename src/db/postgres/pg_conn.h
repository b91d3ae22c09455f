#pragma once
// PostgreSQL behind the engine-neutral SQL layer (db/sql/sql.h), through libpq. Statements
// are prepared once per connection with server-side names; their `?` / `?N` placeholders
// become `$N`. Integers travel as text, strings as binary (raw bytes), so one bound value
// suits whatever type the server infers for its parameter (text, varchar, bytea, bigint).

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "db/sql/sql.h"

namespace hangar::db {

// `sql` with SQLite-style placeholders (`?`, `?N`, outside string literals) written as
// PostgreSQL's `$N`: a bare `?` takes the number after the largest used so far, as SQLite
// numbers it. `*count` receives the number of parameters.
std::string PostgresPlaceholders(std::string_view sql, int* count);

// The URL with its password replaced by "***", for messages and logs.
std::string RedactedDatabaseUrl(std::string_view url);

// One libpq connection.
class PgConnection final : public Connection {
 public:
  // Connects to `url` (libpq's URL or key=value form). Errors: Unavailable when the server
  // cannot be reached or refuses the credentials (the message says which, without the
  // password), Internal otherwise.
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& url);
  ~PgConnection() override;

  SqlDialect dialect() const override { return SqlDialect::Postgres; }
  Result<void> Exec(const std::string& sql) override;
  Result<int64_t> LastInsertId() override;
  int64_t Changes() const override { return changes_; }
  bool Retryable() const override { return retryable_; }
  bool Broken() const override;
  Result<void> Begin(bool write) override;

  // Records the outcome of a command (its status, affected rows, SQLSTATE) and turns a
  // failure into an Error: Conflict for a unique violation, Internal otherwise.
  Result<void> Check(PGresult* res, std::string_view what);
  PGconn* raw() const { return conn_; }
  // Frees server-side statement `name` (prepared past the cache's bound) once the
  // connection is outside a transaction.
  void Forget(std::string name);

 protected:
  Result<std::unique_ptr<StmtImpl>> PrepareImpl(std::string_view sql) override;

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  void Deallocate();
  PGconn* conn_;
  int64_t changes_ = 0;
  bool retryable_ = false;
  uint64_t next_name_ = 0;              // server-side statement names: s0, s1, ...
  std::vector<std::string> forgotten_;  // statements to DEALLOCATE when idle
};

struct PostgresOptions {
  int max_connections = 16;  // connections opened lazily up to this many
};

// Connects to `url`, applies pending migrations (taking turns with other replicas), and
// returns a pool over it. Errors: those of PgConnection::Open and Migrate.
Result<std::shared_ptr<Pool>> OpenPostgresPool(const std::string& url,
                                               PostgresOptions options = {});

}  // namespace hangar::db
