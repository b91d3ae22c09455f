// The sandbox of Engine::Open: files only under the allowed directories, no extensions, no
// ATTACH, no writes unless allowed, and a configuration no query can change.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "duckdb/engine.h"
#include "test_dir.h"

namespace hangar::duckdb {
namespace {

using ::testing::HasSubstr;
using testing::TestDir;
using testing::TestOptions;

class DuckDbSandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    allowed_ = root_.path() / "allowed";
    std::filesystem::create_directories(allowed_);
    csv_ = root_.Write("allowed/a.csv", "x,y\n1,2\n3,4\n");
    outside_csv_ = root_.Write("allowedX/b.csv", "x,y\n5,6\n");  // shares the prefix
    EngineOptions o = TestOptions(allowed_.string());
    o.allow_writes = true;
    engine_ = Engine::Open(o).value();
  }

  // Runs `q` and expects the sandbox to refuse it.
  void ExpectForbidden(const Query& q) {
    auto r = engine_->Run(q);
    ASSERT_FALSE(r.has_value()) << q.sql.str() << " ran";
    EXPECT_EQ(r.error().code, ErrorCode::Forbidden) << q.sql.str() << ": " << r.error().message;
  }

  TestDir root_;
  std::filesystem::path allowed_;
  std::string csv_, outside_csv_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(DuckDbSandbox, ReadsAFileUnderTheAllowedDirectory) {
  auto r = engine_->Run(Query("SELECT sum(x) AS s FROM read_csv(?)", {csv_}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(testing::Int(*r), 4);
}

TEST_F(DuckDbSandbox, RefusesFilesOutsideWhateverFunctionReadsThem) {
  for (std::string path :
       {std::string("/etc/passwd"), std::string("/proc/self/environ"), outside_csv_,
        allowed_.string() + "/../allowedX/b.csv", allowed_.string() + "/../../../../etc/passwd"}) {
    SCOPED_TRACE(path);
    ExpectForbidden(Query("SELECT * FROM read_csv(?)", {path}));
    ExpectForbidden(Query("SELECT * FROM read_text(?)", {path}));
    ExpectForbidden(Query("SELECT * FROM read_blob(?)", {path}));
    ExpectForbidden(Query("SELECT * FROM read_json(?)", {path}));
    ExpectForbidden(Query("SELECT * FROM parquet_metadata(?)", {path}));
  }
  // Literal paths in the text are refused alike, as are globs over other directories.
  ExpectForbidden(Query("SELECT * FROM read_csv('/etc/passwd')"));
  ExpectForbidden(Query("SELECT * FROM '/etc/hangar-absent.csv'"));  // a replacement scan
  ExpectForbidden(Query("SELECT * FROM glob('/etc/*')"));
  ExpectForbidden(Query("SELECT * FROM read_csv(?)", {StringList{{csv_, "/etc/passwd"}}}));
}

TEST_F(DuckDbSandbox, WritesOnlyUnderTheAllowedDirectory) {
  auto inside = engine_->Run(
      Query("COPY (SELECT 1 AS a) TO ? (FORMAT parquet)", {(allowed_ / "out.parquet").string()}));
  ASSERT_TRUE(inside.has_value()) << inside.error().message;
  EXPECT_TRUE(std::filesystem::exists(allowed_ / "out.parquet"));
  for (std::string path : {root_.File("out.csv"), allowed_.string() + "/../escaped.csv",
                           std::string("/tmp/hangar-duckdb-escaped.csv")}) {
    ExpectForbidden(Query("COPY (SELECT 1 AS a) TO ? (FORMAT csv)", {path}));
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
  }
  ExpectForbidden(Query("COPY (SELECT 1 AS a) TO '/tmp/hangar-duckdb-escaped.csv'"));
}

TEST_F(DuckDbSandbox, AReadingEngineRefusesCopy) {
  auto reader = Engine::Open(TestOptions(allowed_.string())).value();
  std::string target = (allowed_ / "nope.parquet").string();
  auto r = reader->Run(Query("COPY (SELECT 1 AS a) TO ? (FORMAT parquet)", {target}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Forbidden);
  EXPECT_THAT(r.error().message, HasSubstr("COPY"));
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(DuckDbSandbox, RefusesExtensionsAttachAndSettings) {
  for (auto sql :
       {Sql("INSTALL httpfs"), Sql("LOAD httpfs"), Sql("LOAD json"), Sql("FORCE INSTALL parquet"),
        Sql("ATTACH ':memory:' AS other"), Sql("DETACH memory"),
        Sql("EXPORT DATABASE '/tmp/hangar-duckdb-export'"),
        Sql("SET enable_external_access = true"), Sql("SET allowed_directories = ['/']"),
        Sql("SET GLOBAL lock_configuration = false"), Sql("RESET allowed_directories")}) {
    SCOPED_TRACE(sql.text());
    ExpectForbidden(Query(sql));
  }
  // DuckDB's sandbox alone lets ATTACH create a database file under an allowed directory
  // (it checks only the path); the engine refuses the statement.
  ExpectForbidden(Query("ATTACH '/tmp/hangar-duckdb-attached.duckdb' AS other"));
  EXPECT_FALSE(std::filesystem::exists("/tmp/hangar-duckdb-attached.duckdb"));
}

TEST_F(DuckDbSandbox, ConfigurationIsLockedAndExternalAccessOff) {
  auto r =
      engine_->Run(Query("SELECT current_setting('enable_external_access') AS ext, "
                         "current_setting('lock_configuration') AS locked, "
                         "current_setting('autoinstall_known_extensions') AS autoinstall, "
                         "current_setting('parquet_metadata_cache') AS footers"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->rows[0][0], Value(false));
  EXPECT_EQ(r->rows[0][1], Value(true));
  EXPECT_EQ(r->rows[0][2], Value(false));
  EXPECT_EQ(r->rows[0][3], Value(true));  // EngineOptions::cache_parquet_metadata
}

}  // namespace
}  // namespace hangar::duckdb
