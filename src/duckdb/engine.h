#pragma once
// Engine: DuckDB behind Hangar's Result (issue 15). Every DuckDB call of Hangar is in
// src/duckdb/, and duckdb.h is included only by its .cc files. One Engine is one in-memory
// DuckDB database, sandboxed at Open: its queries read (and, when allowed, write) files only
// under the allowed directories, never install or load extensions, and cannot change the
// configuration. Each query is prepared with typed parameters bound (sql.h says how its text
// is built), runs under a deadline and a cap on the bytes it returns, and comes back
// materialised (QueryResult).

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "duckdb/sql.h"
#include "duckdb/value.h"

namespace hangar::duckdb {

// The DuckDB release whose duckdb.h Hangar was compiled against ("v1.4.4"): the pin of
// scripts/duckdb.pin, as installed by scripts/install-deps.sh.
std::string_view HeaderVersion();
// The release of the libduckdb.so loaded at run time (duckdb_library_version()).
std::string_view LibraryVersion();
// Ok when LibraryVersion() is `header_version`; else Internal naming both (Hangar then
// refuses to start: a library of another release may lay out the C API's structs otherwise).
// Open checks HeaderVersion(); tests pass other strings.
Result<void> CheckLibraryVersion(std::string_view header_version);

// How an Engine is set up. Sizes in bytes; every query shares them.
struct EngineOptions {
  // DuckDB's memory_limit for the whole database (buffers, hash tables, sorts). A query that
  // needs more, after spilling to temp_directory, fails with Unavailable.
  uint64_t memory_limit_bytes = 512ull << 20;
  // DuckDB's worker threads, shared by all running queries (each query's caller works too).
  int threads = 2;
  // Absolute directories whose files queries may read, recursively (and write with COPY
  // when allow_writes); normalised with a trailing '/'. Empty: no file access at all.
  // DuckDB matches path prefixes, so ".." is refused, but it follows symbolic links: keep
  // only files Hangar writes itself under these directories.
  std::vector<std::string> allowed_directories;
  // Where DuckDB spills what does not fit in memory_limit_bytes; created when needed.
  // "": no spilling (such queries fail with Unavailable instead).
  std::string temp_directory;
  // At most this many bytes of spill files at once (DuckDB's max_temp_directory_size).
  uint64_t temp_directory_limit_bytes = 4ull << 30;
  // Whether DuckDB keeps each Parquet file's footer (schema, row groups, statistics) in
  // memory after its first read: without it, every query parses the footer again (5-13 ms
  // for a 10M-row file of 977 row groups, 0.3 ms with it). An entry is revalidated by the
  // file's modification time only, so keep it for files that never change under their path
  // (blobs are content-addressed; a conversion writes new paths).
  bool cache_parquet_metadata = true;
  // Whether COPY statements run (the Parquet conversion writes with COPY ... TO). A reading
  // engine (the viewer's queries) keeps false, so none of its queries writes a file.
  bool allow_writes = false;
  // Queries that run at once; the caller of one more waits for a free connection (DuckDB
  // connections are not thread-safe, the database is).
  int max_connections = 4;
  // Used when a Query gives no deadline or no cap of its own.
  std::chrono::milliseconds default_timeout{10'000};
  uint64_t default_max_result_bytes = 16ull << 20;
};

// What to do when a result outgrows its cap.
enum class OnCap : uint8_t {
  Fail,      // the query fails with PayloadTooLarge
  Truncate,  // the rows read so far are returned, with QueryResult::truncated set
};

// One statement to run: SQL text from Hangar's source (sql.h) with `?` or `$1`… for every
// value, and the values in `params` (the first binds ? number 1). DuckDB numbers the `?`
// of COPY's `TO ?` before those of its query: write `$1`… in a COPY.
struct Query {
  Query(Sql literal, std::vector<Param> p = {}) : sql(literal), params(std::move(p)) {}
  Query(SqlText text, std::vector<Param> p = {}) : sql(std::move(text)), params(std::move(p)) {}

  SqlText sql;
  std::vector<Param> params;
  // Time from Run's call (waiting for a connection included) to the last row; 0: the
  // engine's default_timeout.
  std::chrono::milliseconds timeout{0};
  // Cap on the result's approximate size (ResultBytes); 0: default_max_result_bytes.
  uint64_t max_result_bytes = 0;
  OnCap on_cap = OnCap::Fail;
};

// A query's whole result, row-major: rows[r][c] is the cell of columns[c].
struct QueryResult {
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;
  bool truncated = false;  // OnCap::Truncate stopped reading before the last row
  uint64_t bytes = 0;      // ResultBytes of the rows
};

// A sandboxed DuckDB database with a pool of connections. Thread-safe: Run may be called
// from any number of threads; max_connections of them run at once. Owned by its creator;
// destroying it waits for no query (destroy it only when no Run is in progress).
class Engine {
 public:
  // Checks the library's version (CheckLibraryVersion), opens an in-memory database with
  // `options`, applies the sandbox and locks the configuration. Errors: Internal (version
  // mismatch, a DuckDB failure), BadRequest (an option out of range, a relative directory).
  static Result<std::unique_ptr<Engine>> Open(EngineOptions options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs `query`. Only SELECT (PRAGMA and DESCRIBE are SELECTs), EXPLAIN and, with
  // allow_writes, COPY statements run; one statement per query. Errors:
  //   Unavailable    the deadline passed (waiting for a connection, running or reading:
  //                  "… took too long …"), or the memory limit was reached
  //   PayloadTooLarge the result outgrew its cap (OnCap::Fail)
  //   Forbidden      a file outside the allowed directories, an extension, a statement
  //                  type the engine refuses (ATTACH, SET, INSTALL, LOAD, COPY without
  //                  allow_writes, …)
  //   Unprocessable  the data or a parameter cannot be evaluated: an unknown column, a
  //                  failed cast, a malformed CSV or Parquet file, SQL text holding NUL
  //   Internal       Hangar's SQL does not parse, the parameters do not match its
  //                  placeholders, a result type the engine does not read, a DuckDB failure
  // Messages are DuckDB's (minus the echo of the SQL); they may name files and columns,
  // so a caller facing a client words its own.
  Result<QueryResult> Run(const Query& query);

  const EngineOptions& options() const;

  class State;  // internal (engine_state.h)

 private:
  explicit Engine(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// How QueryResult::bytes counts a row: 16 per cell plus the bytes of each text and blob.
uint64_t ResultBytes(const std::vector<Value>& row);

}  // namespace hangar::duckdb
