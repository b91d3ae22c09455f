// Parameters stay data, names stay names: hostile text through Param and Identifier.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <type_traits>

#include "duckdb/engine.h"
#include "test_dir.h"

namespace hangar::duckdb {
namespace {

using ::testing::HasSubstr;
using testing::TestDir;
using testing::TestOptions;

// Runtime text never becomes SQL: only literals convert to Sql, only Sql and Identifier to
// SqlText, and a Query takes one of the two.
static_assert(!std::is_constructible_v<Sql, std::string>);
static_assert(!std::is_constructible_v<Sql, std::string_view>);
static_assert(!std::is_constructible_v<SqlText, std::string>);
static_assert(!std::is_constructible_v<SqlText, const std::string&>);
static_assert(!std::is_constructible_v<Query, std::string>);
static_assert(!std::is_constructible_v<Query, std::string, std::vector<Param>>);

const char* const kHostile[] = {
    "it's",
    "'; DROP TABLE t; --",
    "\" OR 1=1 --",
    "/* comment */ 1",
    "a;b;c",
    "$1 ? $2",
    "line\nbreak\r\n\ttab",
    "名前 ünïcödé 🦆",
    "\\x00 backslash \\",
    "read_csv('/etc/passwd')",
};

class DuckDbQuery : public ::testing::Test {
 protected:
  void SetUp() override { engine_ = Engine::Open(TestOptions(dir_.path().string())).value(); }
  TestDir dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(DuckDbQuery, HostileTextBindsAsData) {
  for (const char* text : kHostile) {
    SCOPED_TRACE(text);
    auto r = engine_->Run(Query("SELECT ? AS v, length(?) AS n", {text, text}));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(testing::Text(*r), text);
    // A filter on the value matches only the equal row.
    auto match = engine_->Run(
        Query("SELECT count(*) FROM (VALUES ('x'), (?)) t(s) WHERE s = ?", {text, text}));
    ASSERT_TRUE(match.has_value()) << match.error().message;
    EXPECT_EQ(testing::Int(*match), 1);
  }
}

TEST_F(DuckDbQuery, TextWithNulBytesIsData) {
  std::string with_nul("a\0b", 3);
  auto r = engine_->Run(Query("SELECT length(?)", {with_nul}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(testing::Int(*r), 3);
}

TEST_F(DuckDbQuery, TextThatIsNotUtf8IsRefused) {
  auto r = engine_->Run(Query("SELECT ?", {std::string("\xff\xfe", 2)}));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unprocessable);
  // ... while the same bytes as a Blob are data.
  auto blob = engine_->Run(Query("SELECT octet_length(?)", {Blob{std::string("\xff\xfe", 2)}}));
  ASSERT_TRUE(blob.has_value()) << blob.error().message;
  EXPECT_EQ(testing::Int(*blob), 2);
}

TEST_F(DuckDbQuery, EveryParamKindBinds) {
  auto r = engine_->Run(
      Query("SELECT ? IS NULL, ?, ?, ?, ?, ?, ?, ?, len(?)",
            {nullptr, true, -7, uint64_t{18446744073709551615ull}, 2.5, "text",
             std::string_view("view"), Blob{"\x01\x02"}, StringList{{"a", "b", "c"}}}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto& row = r->rows[0];
  EXPECT_EQ(row[0], Value(true));
  EXPECT_EQ(row[1], Value(true));
  EXPECT_EQ(row[2], Value(int64_t{-7}));
  EXPECT_EQ(row[3], Value(std::string("18446744073709551615")));  // UBIGINT past int64
  EXPECT_EQ(row[4], Value(2.5));
  EXPECT_EQ(row[5], Value(std::string("text")));
  EXPECT_EQ(row[6], Value(std::string("view")));
  EXPECT_EQ(row[7], Value(Blob{"\x01\x02"}));
  EXPECT_EQ(row[8], Value(int64_t{3}));
}

TEST_F(DuckDbQuery, TableFunctionsTakeParameters) {
  std::string a = dir_.Write("a.csv", "x;y\n1;2\n");
  std::string b = dir_.Write("b.csv", "x;y\n3;4\n");
  auto r = engine_->Run(Query("SELECT sum(y) FROM read_csv(?, delim = ?, header = ?)",
                              {StringList{{a, b}}, ";", true}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->rows[0][0], Value(int64_t{6})) << r->columns[0].sql_type;  // a HUGEINT sum
}

TEST(DuckDbIdentifier, QuotesByDoublingQuotes) {
  EXPECT_EQ(Identifier::Quote("plain").quoted(), "\"plain\"");
  EXPECT_EQ(Identifier::Quote("a\"b").quoted(), "\"a\"\"b\"");
  EXPECT_EQ(Identifier::Quote("\"").quoted(), "\"\"\"\"");
  SqlText sql("SELECT ");
  sql += Identifier::Quote("x\"; --");
  sql += " FROM t";
  EXPECT_EQ(sql.str(), "SELECT \"x\"\"; --\" FROM t");
}

TEST_F(DuckDbQuery, HostileNamesStayOneColumn) {
  for (const char* name : kHostile) {
    SCOPED_TRACE(name);
    // A column called `name`, then selected by it and filtered on it.
    SqlText sql("SELECT ");
    sql += Identifier::Quote(name);
    sql += " AS v, count(*) OVER () AS n FROM (SELECT 7 AS ";
    sql += Identifier::Quote(name);
    sql += ") WHERE ";
    sql += Identifier::Quote(name);
    sql += " = ?";
    auto r = engine_->Run(Query(std::move(sql), {7}));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_EQ(r->rows.size(), 1u);
    EXPECT_EQ(testing::Int(*r, 0, 0), 7);
    EXPECT_EQ(testing::Int(*r, 0, 1), 1);
    // The alias comes back as it was written.
    SqlText alias("SELECT 1 AS ");
    alias += Identifier::Quote(name);
    auto named = engine_->Run(Query(std::move(alias)));
    ASSERT_TRUE(named.has_value()) << named.error().message;
    EXPECT_EQ(named->columns[0].name, name);
  }
}

TEST_F(DuckDbQuery, HostileCsvHeadersAreReadThroughQuotedNames) {
  std::string csv = dir_.Write("h.csv", "\"a\"\"; DROP TABLE x; --\",\"/* c */\"\n1,2\n");
  auto columns = engine_->Run(Query("SELECT * FROM read_csv(?)", {csv}));
  ASSERT_TRUE(columns.has_value()) << columns.error().message;
  ASSERT_EQ(columns->columns.size(), 2u);
  EXPECT_EQ(columns->columns[0].name, "a\"; DROP TABLE x; --");
  SqlText sql("SELECT ");
  sql += Identifier::Quote(columns->columns[0].name);
  sql += " + ";
  sql += Identifier::Quote(columns->columns[1].name);
  sql += " FROM read_csv(?)";
  auto r = engine_->Run(Query(std::move(sql), {csv}));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(testing::Int(*r), 3);
}

TEST_F(DuckDbQuery, NamesThatCannotBeQuotedFailWithoutRunning) {
  SqlText empty("SELECT 1 AS ");
  empty += Identifier::Quote("");
  EXPECT_FALSE(engine_->Run(Query(std::move(empty))).has_value());
  SqlText nul("SELECT 1 AS ");
  nul += Identifier::Quote(std::string("a\0b", 3));
  auto r = engine_->Run(Query(std::move(nul)));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unprocessable);
  EXPECT_THAT(r.error().message, HasSubstr("NUL"));
}

}  // namespace
}  // namespace hangar::duckdb
