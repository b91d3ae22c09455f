#pragma once
// Opening the metadata stores: the SQL implementations (db/sql/) over SQLite or PostgreSQL.

#include <filesystem>
#include <memory>
#include <string>

#include "db/sql/sql.h"
#include "db/stores.h"

namespace hangar::db {

// The stores over `pool`, sharing it.
Stores StoresOver(std::shared_ptr<Pool> pool);

// Opens (creating if needed) the SQLite database at `db_file`, applies pending migrations
// and returns the stores over one shared connection pool. Safe to call from several
// processes on the same file (server and admin CLI). Errors: Internal.
Result<Stores> OpenSqliteStores(const std::filesystem::path& db_file, int max_connections = 8);

// Connects to the PostgreSQL database at `url`, applies pending migrations (replicas take
// turns) and returns the stores over a pool of at most `max_connections`. Errors:
// Unavailable (unreachable, wrong credentials), Internal (a schema newer than this binary).
Result<Stores> OpenPostgresStores(const std::string& url, int max_connections = 16);

// The stores of the [database] section: PostgreSQL when `url` is set, else the SQLite file.
Result<Stores> OpenStores(const std::string& url, const std::filesystem::path& sqlite_path,
                          int max_connections);

}  // namespace hangar::db
