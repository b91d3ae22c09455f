#pragma once
// Shared fixtures for db tests. DbTest: a fresh SQLite database in a temporary directory.
// StoreTest: the same for each engine, a test parameter: SQLite, and PostgreSQL (a schema
// of its own on the server testing::PgServer starts), so a store's suite runs unchanged
// on both (INSTANTIATE_TEST_SUITE_P(Engines, Suite, kEngines, EngineName)).

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "db/postgres/pg_conn.h"
#include "db/sql/sql_stores.h"
#include "testing/pg_server.h"

namespace hangar::db::testing {

inline std::filesystem::path MakeTempDir(const char* prefix) {
  std::string tmpl =
      (std::filesystem::path(::testing::TempDir()) / (std::string(prefix) + "-XXXXXX")).string();
  char* p = mkdtemp(tmpl.data());
  EXPECT_NE(p, nullptr);
  return p ? std::filesystem::path(p) : std::filesystem::path();
}

// One database of one engine for one test, and the stores over it.
class StoreFixture {
 public:
  // Opens a fresh database; the test fails (fatally) when it cannot.
  void OpenFresh(SqlDialect engine) {
    engine_ = engine;
    dir_ = MakeTempDir("hangar-db");
    if (engine == SqlDialect::Postgres) {
      std::string error;
      hangar::testing::PgServer* pg = hangar::testing::PgServer::Shared(&error);
      ASSERT_NE(pg, nullptr) << error;
      static std::atomic<int> next{0};
      schema_ = "t" + std::to_string(::getpid()) + "_" + std::to_string(next++);
      auto admin = PgConnection::Open(pg->url());
      ASSERT_TRUE(admin.has_value()) << admin.error().message;
      ASSERT_TRUE((*admin)->Exec("CREATE SCHEMA " + schema_).has_value());
      // Extensions are per database, not per schema: pg_trgm (migration 13) lives in public,
      // which follows the test's own schema on the search path, so that dropping a test's
      // schema leaves it to the others. Concurrent test processes may race to create it:
      // the loser's error is harmless.
      (void)(*admin)->Exec("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public");
      url_ = pg->url() + "?options=-csearch_path%3D" + schema_ + "%2Cpublic";
    }
    auto s = OpenAgain();
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
  }
  // Another opener of the same database (a second process: the admin CLI, a replica).
  Result<Stores> OpenAgain(int max_connections = 8) {
    if (engine_ == SqlDialect::Postgres) return OpenPostgresStores(url_, max_connections);
    return OpenSqliteStores(DbFile(), max_connections);
  }
  void CloseAndRemove() {
    stores_ = Stores{};
    if (!schema_.empty()) {
      std::string error;
      auto admin = PgConnection::Open(hangar::testing::PgServer::Shared(&error)->url());
      if (admin) (void)(*admin)->Exec("DROP SCHEMA " + schema_ + " CASCADE");
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::filesystem::path DbFile() const { return dir_ / "hangar.db"; }
  UserStore& users() { return *stores_.users; }
  RepoStore& repos() { return *stores_.repos; }
  LfsStore& lfs() { return *stores_.lfs; }
  UploadStore& uploads() { return *stores_.uploads; }
  RegistryStore& registry() { return *stores_.registry; }
  GatewayStore& gateway() { return *stores_.gateway; }
  SshKeyStore& ssh_keys() { return *stores_.ssh_keys; }
  MirrorStore& mirrors() { return *stores_.mirrors; }
  GateStore& gates() { return *stores_.gates; }
  LikeStore& likes() { return *stores_.likes; }
  DiscussionStore& discussions() { return *stores_.discussions; }
  CollectionStore& collections() { return *stores_.collections; }

  SqlDialect engine_ = SqlDialect::Sqlite;
  std::filesystem::path dir_;
  std::string schema_, url_;  // PostgreSQL: the test's schema and the URL that selects it
  Stores stores_;
};

// A SQLite database (the embedded default) for tests of what lies above the stores.
class DbTest : public ::testing::Test, public StoreFixture {
 protected:
  void SetUp() override { OpenFresh(SqlDialect::Sqlite); }
  void TearDown() override { CloseAndRemove(); }
};

// A database of the engine the test is instantiated with.
class StoreTest : public ::testing::TestWithParam<SqlDialect>, public StoreFixture {
 protected:
  void SetUp() override { OpenFresh(GetParam()); }
  void TearDown() override { CloseAndRemove(); }
};

inline const auto kEngines = ::testing::Values(SqlDialect::Sqlite, SqlDialect::Postgres);
inline std::string EngineName(const ::testing::TestParamInfo<SqlDialect>& info) {
  return info.param == SqlDialect::Sqlite ? "Sqlite" : "Postgres";
}

}  // namespace hangar::db::testing

namespace hangar::db {
// How GoogleTest names an engine in a failure's "where GetParam() = ...".
inline void PrintTo(SqlDialect d, std::ostream* os) {
  *os << (d == SqlDialect::Sqlite ? "Sqlite" : "Postgres");
}
}  // namespace hangar::db
