#pragma once
// Schema migrations: numbered SQL scripts in portable SQL. The few dialect differences are
// written as placeholders that RenderMigration fills per engine:
//   {{ID}}         an auto-assigned 64-bit integer primary key column type.
//   {{BYTES}}      a binary column type.
//   {{ROW_ORDER}}  an existing row's insertion order (SQLite's rowid; 0 elsewhere).

#include <span>
#include <string>

#include "db/sql/sql.h"

namespace hangar::db {

struct Migration {
  int version;      // 1, 2, 3, ... in order, never reused
  const char* sql;  // one or more statements separated by ';'
  // Statements for one engine alone, run after `sql` (an index only that engine has).
  const char* sqlite_sql = "";
  const char* postgres_sql = "";
};

// All migrations, in version order.
std::span<const Migration> AllMigrations();

// `m.sql` with its placeholders replaced for `dialect`.
std::string RenderMigration(const Migration& m, SqlDialect dialect);

}  // namespace hangar::db
