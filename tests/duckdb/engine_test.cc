// Engine::Open: the version check, option checks, and which statements run.

#include "duckdb/engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_dir.h"

namespace hangar::duckdb {
namespace {

using ::testing::HasSubstr;
using testing::TestDir;
using testing::TestOptions;

TEST(DuckDbVersion, LoadedLibraryIsThePinnedHeadersRelease) {
  EXPECT_EQ(LibraryVersion(), HeaderVersion());
  EXPECT_EQ(HeaderVersion().substr(0, 1), "v");
  EXPECT_TRUE(CheckLibraryVersion(HeaderVersion()).has_value());
}

TEST(DuckDbVersion, AMismatchingHeaderVersionIsRefusedNamingBoth) {
  auto r = CheckLibraryVersion("v0.9.2");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Internal);
  EXPECT_THAT(r.error().message, HasSubstr("v0.9.2"));
  EXPECT_THAT(r.error().message, HasSubstr(std::string(LibraryVersion())));
  EXPECT_THAT(r.error().message, HasSubstr("scripts/install-deps.sh"));
}

TEST(DuckDbEngine, OpensAndAnswersASelect) {
  TestDir dir;
  auto engine = Engine::Open(TestOptions(dir.path().string()));
  ASSERT_TRUE(engine.has_value()) << engine.error().message;
  auto r = (*engine)->Run(Query("SELECT 40 + 2 AS answer"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->columns.size(), 1u);
  EXPECT_EQ(r->columns[0].name, "answer");
  EXPECT_EQ(r->columns[0].type, ColumnType::Integer);
  EXPECT_EQ(r->columns[0].sql_type, "INTEGER");
  EXPECT_EQ(testing::Int(*r), 42);
  EXPECT_EQ((*engine)->options().allowed_directories[0], dir.path().string() + "/");
}

TEST(DuckDbEngine, RefusesBadOptions) {
  EngineOptions relative = TestOptions("data/files");
  EXPECT_EQ(Engine::Open(relative).error().code, ErrorCode::BadRequest);
  EngineOptions root = TestOptions("/");
  auto r = Engine::Open(root);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("every file"));
  EngineOptions traversal = TestOptions("/tmp/..");  // normalises to "/"
  EXPECT_EQ(Engine::Open(traversal).error().code, ErrorCode::BadRequest);
  EngineOptions no_threads = TestOptions("/tmp/x");
  no_threads.threads = 0;
  EXPECT_EQ(Engine::Open(no_threads).error().code, ErrorCode::BadRequest);
}

TEST(DuckDbEngine, RunsOnlySelectAndExplain) {
  TestDir dir;
  auto engine = Engine::Open(TestOptions(dir.path().string())).value();
  EXPECT_TRUE(engine->Run(Query("EXPLAIN SELECT 1")).has_value());
  EXPECT_TRUE(engine->Run(Query("PRAGMA version")).has_value());  // a SELECT underneath
  for (auto sql : {Sql("CREATE TABLE t (a INTEGER)"), Sql("SET threads = 1"),
                   Sql("RESET memory_limit"), Sql("BEGIN TRANSACTION"), Sql("USE memory"),
                   Sql("SET VARIABLE x = 1"), Sql("PREPARE p AS SELECT 1"), Sql("CHECKPOINT"),
                   Sql("VACUUM"), Sql("CALL pragma_version()")}) {
    auto r = engine->Run(Query(sql));
    ASSERT_FALSE(r.has_value()) << sql.text();
    EXPECT_EQ(r.error().code, ErrorCode::Forbidden) << sql.text() << ": " << r.error().message;
    EXPECT_THAT(r.error().message, HasSubstr("does not run")) << sql.text();
  }
}

TEST(DuckDbEngine, RefusesSeveralStatementsInOneQuery) {
  TestDir dir;
  auto engine = Engine::Open(TestOptions(dir.path().string())).value();
  auto r = engine->Run(Query("SELECT 1; SELECT 2"));
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("multiple statements"));
}

TEST(DuckDbEngine, ParametersMustMatchThePlaceholders) {
  TestDir dir;
  auto engine = Engine::Open(TestOptions(dir.path().string())).value();
  auto few = engine->Run(Query("SELECT ?, ?", {1}));
  ASSERT_FALSE(few.has_value());
  EXPECT_EQ(few.error().code, ErrorCode::Internal);
  EXPECT_THAT(few.error().message, HasSubstr("2 parameters but 1"));
  EXPECT_FALSE(engine->Run(Query("SELECT 1", {1})).has_value());
  // $1 used twice is one parameter.
  auto twice = engine->Run(Query("SELECT $1 + $1", {21}));
  ASSERT_TRUE(twice.has_value()) << twice.error().message;
  EXPECT_EQ(testing::Int(*twice), 42);
}

TEST(DuckDbEngine, SqlOfHangarsSourceHasItsErrorsMapped) {
  TestDir dir;
  auto engine = Engine::Open(TestOptions(dir.path().string())).value();
  auto parse = engine->Run(Query("SELEC 1"));
  ASSERT_FALSE(parse.has_value());
  EXPECT_EQ(parse.error().code, ErrorCode::Internal);
  EXPECT_THAT(parse.error().message, HasSubstr("Parser Error"));
  EXPECT_THAT(parse.error().message, ::testing::Not(HasSubstr("LINE 1")));
  auto column = engine->Run(Query("SELECT nope FROM range(3)"));
  ASSERT_FALSE(column.has_value());
  EXPECT_EQ(column.error().code, ErrorCode::Unprocessable);
  auto cast = engine->Run(Query("SELECT CAST(? AS INTEGER)", {"twelve"}));
  ASSERT_FALSE(cast.has_value());
  EXPECT_EQ(cast.error().code, ErrorCode::Unprocessable);
  EXPECT_THAT(cast.error().message, HasSubstr("Conversion Error"));
}

}  // namespace
}  // namespace hangar::duckdb
