#pragma once
// Opening the SQLite implementation of the metadata stores.

#include <filesystem>

#include "db/sqlite/sqlite_pool.h"
#include "db/stores.h"

namespace hangar::db {

// Opens (creating if needed) the SQLite database at `db_file`, applies pending migrations
// and returns the stores over one shared connection pool. Safe to call from several
// processes on the same file (server and admin CLI). Errors: Internal.
Result<Stores> OpenSqliteStores(const std::filesystem::path& db_file,
                                SqlitePool::Options options = {});

}  // namespace hangar::db
