// services/viewer/filter_expr.h: /filter's `where` and `orderby` (dataset-viewer.md §4.6)
// parsed into SQL of quoted names and bound values, run on a real Engine over a small table:
// every construct of the §4.6 table, three-valued logic with NULLs, quotes in names and
// strings, STRUCT fields, ordering; and hostile inputs refused before any SQL exists.

#include "services/viewer/filter_expr.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../duckdb/test_dir.h"

namespace hangar::services::viewer {
namespace {

using duckdb::Engine;
using duckdb::Param;
using duckdb::Query;
using duckdb::Sql;
using duckdb::SqlText;
using duckdb::testing::TestDir;

// Six rows with NULLs in every column but id. `data` is a STRUCT column named like the
// table alias, so "data"."id" must read the field, not the table's id column.
constexpr Sql kTable =
    "(SELECT * FROM (VALUES "
    "(0, 'Alice', 30, 1.5::DOUBLE, true, {'lang': 'en', 'n': 1}, 'a\"b', 'X', "
    "  DATE '2024-01-01', {'id': 100}),"
    "(1, 'Bob', 25, 2.0, false, {'lang': 'fr', 'n': 2}, 'O''Hara', 'y', DATE '2024-02-01', "
    "  {'id': 101}),"
    "(2, 'Simpson', NULL, NULL, NULL, NULL, NULL, NULL, NULL, {'id': 102}),"
    "(3, 'Dickson', 41, -3.25, true, {'lang': NULL, 'n': 3}, 'plain', 'x', DATE '2023-12-31', "
    "  {'id': 103}),"
    "(4, 'alice', 30, 0.1, false, {'lang': 'en', 'n': 4}, '%_', 'X', DATE '2024-03-01', "
    "  {'id': 104}),"
    "(5, NULL, 52, 10.0, true, {'lang': 'de', 'n': 5}, '', 'z', NULL, NULL)"
    ") AS data(id, name, age, score, flag, meta, \"my \"\"col\"\"\", \"Mixed\", day, data))";

using Ids = std::vector<int64_t>;

class FilterExpr : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_ = Engine::Open(duckdb::testing::TestOptions(dir_.path().string())).value();
    SqlText sql("SELECT * FROM ");
    sql += kTable;
    sql += " AS data LIMIT 0";
    columns_ = engine_->Run(Query(std::move(sql))).value().columns;
  }

  // The ids of the rows `where` matches, in id order; empty with a failure when it does not
  // parse or run.
  Ids Where(std::string_view where) {
    auto clause = ParseWhere(where, columns_);
    EXPECT_TRUE(clause.has_value()) << where;
    if (!clause) return {};
    SqlText sql("SELECT id FROM ");
    sql += kTable;
    sql += " AS data WHERE ";
    sql += clause->sql;
    sql += " ORDER BY id";
    return RunIds(Query(std::move(sql), clause->params), where);
  }

  // The ids in the order `orderby` gives, id breaking ties.
  Ids OrderBy(std::string_view orderby) {
    auto clause = ParseOrderBy(orderby, columns_);
    EXPECT_TRUE(clause.has_value()) << orderby;
    if (!clause) return {};
    SqlText sql("SELECT id FROM ");
    sql += kTable;
    sql += " AS data ORDER BY ";
    sql += clause->sql;
    sql += ", id";
    return RunIds(Query(std::move(sql), clause->params), orderby);
  }

  Ids RunIds(const Query& query, std::string_view input) {
    auto r = engine_->Run(query);
    EXPECT_TRUE(r.has_value()) << input << ": " << (r ? "" : r.error().message) << "\n"
                               << query.sql.str();
    if (!r) return {};
    Ids ids;
    for (size_t i = 0; i < r->rows.size(); ++i) ids.push_back(duckdb::testing::Int(*r, i));
    return ids;
  }

  // The SQL `where` becomes (empty when it does not parse).
  std::string WhereSql(std::string_view where) {
    auto clause = ParseWhere(where, columns_);
    EXPECT_TRUE(clause.has_value()) << where;
    return clause ? clause->sql.str() : "";
  }

  TestDir dir_;
  std::unique_ptr<Engine> engine_;
  std::vector<duckdb::Column> columns_;
};

void ExpectRefused(const Result<FilterClause>& r, std::string_view input, const char* param) {
  ASSERT_FALSE(r.has_value()) << "accepted: " << input << "\nas: " << r->sql.str();
  EXPECT_EQ(r.error().code, ErrorCode::InvalidParameter) << input;
  EXPECT_EQ(r.error().message,
            std::string("Parameter '") + param + "' contains errors or invalid symbols");
}

TEST_F(FilterExpr, ComparisonOperatorsOnNumbers) {
  EXPECT_EQ(Where("\"age\" = 30"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"age\" <> 30"), (Ids{1, 3, 5}));
  EXPECT_EQ(Where("\"age\" != 30"), (Ids{1, 3, 5}));
  EXPECT_EQ(Where("\"age\" > 30"), (Ids{3, 5}));
  EXPECT_EQ(Where("\"age\" >= 30"), (Ids{0, 3, 4, 5}));
  EXPECT_EQ(Where("\"age\" < 30"), (Ids{1}));
  EXPECT_EQ(Where("\"age\" <= 30"), (Ids{0, 1, 4}));
  EXPECT_EQ(Where("\"age\"=30"), (Ids{0, 4}));  // blanks are optional
  EXPECT_EQ(Where("\"score\" = 0.1"), (Ids{4}));
  EXPECT_EQ(Where("\"score\" > 1.75"), (Ids{1, 5}));
  EXPECT_EQ(Where("\"age\" = 30.0"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"age\" < 18446744073709551615"), (Ids{0, 1, 3, 4, 5}));  // a UBIGINT
}

TEST_F(FilterExpr, NegativeNumbersAreBoundWithTheirSign) {
  EXPECT_EQ(Where("\"score\" < -1"), (Ids{3}));
  EXPECT_EQ(Where("\"score\" = -3.25"), (Ids{3}));
  EXPECT_EQ(Where("\"age\" > -9223372036854775808"), (Ids{0, 1, 3, 4, 5}));
  EXPECT_EQ(WhereSql("\"score\" < -1"), "(\"score\" < ?)");
}

TEST_F(FilterExpr, ComparisonsOnStringsBooleansAndDates) {
  EXPECT_EQ(Where("\"name\" = 'Bob'"), (Ids{1}));
  EXPECT_EQ(Where("\"name\" > 'B'"), (Ids{1, 2, 3, 4}));  // 'alice' sorts after upper case
  EXPECT_EQ(Where("\"flag\" = true"), (Ids{0, 3, 5}));
  EXPECT_EQ(Where("\"flag\" = false"), (Ids{1, 4}));
  EXPECT_EQ(Where("\"day\" >= '2024-02-01'"), (Ids{1, 4}));
}

TEST_F(FilterExpr, QuotesInNamesAndStrings) {
  EXPECT_EQ(Where("\"my \"\"col\"\"\" = 'O''Hara'"), (Ids{1}));
  EXPECT_EQ(Where("\"my \"\"col\"\"\" = 'a\"b'"), (Ids{0}));
  EXPECT_EQ(Where("\"my \"\"col\"\"\" = ''"), (Ids{5}));
  // A string that would end the literal and add a condition stays one bound value.
  EXPECT_EQ(Where("\"name\" = ''' OR 1=1 OR '''"), (Ids{}));
  EXPECT_EQ(WhereSql("\"name\" = ''' OR 1=1 OR '''"), "(\"name\" = ?)");
  EXPECT_EQ(WhereSql("\"my \"\"col\"\"\" = 'x'"), "(\"my \"\"col\"\"\" = ?)");
}

TEST_F(FilterExpr, ColumnsMatchIgnoringCaseAndAreWrittenAsNamed) {
  EXPECT_EQ(Where("\"AGE\" = 30"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"mixed\" = 'X'"), (Ids{0, 4}));
  EXPECT_EQ(WhereSql("\"mixed\" = 'X'"), "(\"Mixed\" = ?)");
}

TEST_F(FilterExpr, PatternTests) {
  EXPECT_EQ(Where("\"name\" LIKE 'Sim%'"), (Ids{2}));
  EXPECT_EQ(Where("\"name\" LIKE '_ob'"), (Ids{1}));
  EXPECT_EQ(Where("\"name\" ILIKE '%son'"), (Ids{2, 3}));
  EXPECT_EQ(Where("\"name\" ILIKE 'ALICE'"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"name\" NOT LIKE 'A%'"), (Ids{1, 2, 3, 4}));
  EXPECT_EQ(Where("\"name\" NOT ILIKE 'a%'"), (Ids{1, 2, 3}));
  EXPECT_EQ(Where("\"name\" GLOB '[AB]*'"), (Ids{0, 1}));
  EXPECT_EQ(Where("\"name\" NOT GLOB '*son'"), (Ids{0, 1, 4}));
  // Patterns with wildcards inside run as RE2 regexes (DuckDB's LIKE and GLOB backtrack).
  EXPECT_EQ(WhereSql("\"name\" NOT GLOB 'x'"), "(NOT (\"name\" GLOB ?))");
  EXPECT_EQ(WhereSql("\"name\" NOT GLOB 'x*y'"), "(NOT (regexp_full_match(\"name\", ?)))");
  EXPECT_EQ(WhereSql("\"name\" LIKE 'x%y'"), "(regexp_full_match(\"name\", ?))");
  EXPECT_EQ(WhereSql("\"name\" LIKE 'x_'"), "(regexp_full_match(\"name\", ?))");
  // Prefix, suffix and contains tests stay DuckDB's (linear, and faster than a regex).
  EXPECT_EQ(WhereSql("\"name\" LIKE 'x%'"), "(\"name\" LIKE ?)");
  EXPECT_EQ(WhereSql("\"name\" ILIKE '%x%'"), "(\"name\" ILIKE ?)");
  EXPECT_EQ(WhereSql("\"name\" GLOB '*x'"), "(\"name\" GLOB ?)");
  EXPECT_EQ(WhereSql("\"name\" GLOB '*x?'"), "(regexp_full_match(\"name\", ?))");
  EXPECT_EQ(Where("\"name\" GLOB '[!AB]*'"), (Ids{2, 3, 4}));
  EXPECT_EQ(Where("\"name\" GLOB '?ob'"), (Ids{1}));
  EXPECT_EQ(Where("\"name\" SIMILAR TO '[a-z]+'"), (Ids{4}));
  EXPECT_EQ(Where("\"name\" NOT SIMILAR TO '.*i.*'"), (Ids{1}));
  EXPECT_EQ(Where("\"my \"\"col\"\"\" LIKE '%'"), (Ids{0, 1, 3, 4, 5}));
}

TEST_F(FilterExpr, PatternsMatchTheirCharactersLiterallyBesidesTheirWildcards) {
  // Regex metacharacters in a pattern stand for themselves.
  for (std::string_view p :
       {"'A.ice'", "'(x'", "'a|b'", "'^Alice$'", "'Al+ce'", "'[a'", "'\\d'", "'a{2}'"}) {
    EXPECT_EQ(Where("\"name\" LIKE " + std::string(p)), (Ids{})) << p;
    EXPECT_EQ(Where("\"name\" GLOB " + std::string(p)), (Ids{})) << p;
  }
  // What made DuckDB's LIKE run for minutes is an ordinary regex here.
  EXPECT_EQ(Where("\"name\" LIKE '%_%_%_%_%_%_%_%_%#'"), (Ids{}));
  EXPECT_EQ(Where("\"name\" ILIKE '%a%l%i%c%e%'"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"name\" GLOB '*A*l*i*c*e*'"), (Ids{0}));
  // An escaped GLOB wildcard is itself.
  EXPECT_EQ(Where("\"name\" GLOB 'Alice\\*'"), (Ids{}));
}

TEST_F(FilterExpr, NullTests) {
  EXPECT_EQ(Where("\"age\" IS NULL"), (Ids{2}));
  EXPECT_EQ(Where("\"age\" IS NOT NULL"), (Ids{0, 1, 3, 4, 5}));
  EXPECT_EQ(Where("\"name\" IS NULL"), (Ids{5}));
  EXPECT_EQ(Where("\"flag\" IS TRUE"), (Ids{0, 3, 5}));
  EXPECT_EQ(Where("\"flag\" IS NOT TRUE"), (Ids{1, 2, 4}));
  EXPECT_EQ(Where("\"flag\" IS FALSE"), (Ids{1, 4}));
  EXPECT_EQ(Where("\"flag\" IS NOT FALSE"), (Ids{0, 2, 3, 5}));
}

TEST_F(FilterExpr, ThreeValuedLogicDropsUnknownRows) {
  EXPECT_EQ(Where("\"age\" = null"), (Ids{}));  // unknown for every row
  EXPECT_EQ(Where("\"age\" <> null"), (Ids{}));
  EXPECT_EQ(Where("NOT \"age\" = 30"), (Ids{1, 3, 5}));  // NOT unknown is unknown
  EXPECT_EQ(Where("NOT (\"age\" = 30 AND \"flag\" = true)"), (Ids{1, 3, 4, 5}));
  EXPECT_EQ(Where("\"age\" > 100 OR \"age\" IS NULL"), (Ids{2}));
  EXPECT_EQ(Where("\"age\" = 30 OR \"flag\" = true"), (Ids{0, 3, 4, 5}));  // unknown OR …
  EXPECT_EQ(Where("\"age\" IS NULL AND \"flag\" IS NULL"), (Ids{2}));
}

TEST_F(FilterExpr, AndBindsTighterThanOrAndParenthesesGroup) {
  EXPECT_EQ(Where("\"age\" = 30 OR \"age\" = 25 AND \"flag\" = true"), (Ids{0, 4}));
  EXPECT_EQ(Where("(\"age\" = 30 OR \"age\" = 25) AND \"flag\" = true"), (Ids{0}));
  EXPECT_EQ(Where("\"age\">1 AND (\"name\"='Bob' OR \"score\"=0.1)"), (Ids{1, 4}));
  EXPECT_EQ(Where("((((\"age\" = 30))))"), (Ids{0, 4}));
  EXPECT_EQ(Where("(\"age\") = 30"), (Ids{0, 4}));  // the reference's parenthesized column
  EXPECT_EQ(Where("((\"age\") = 30 AND (\"flag\" = true))"), (Ids{0}));
  EXPECT_EQ(Where("NOT NOT \"age\" = 25"), (Ids{1}));
}

TEST_F(FilterExpr, KeywordsInEitherCase) {
  EXPECT_EQ(Where("\"age\" = 30 and \"flag\" = true or \"name\" like 'B%'"), (Ids{0, 1}));
  EXPECT_EQ(Where("\"age\" is not null and not \"flag\" is true"), (Ids{1, 4}));
  EXPECT_EQ(Where("\"name\" similar to 'B.*' OR \"age\" = NULL"), (Ids{1}));
  EXPECT_EQ(Where("\"flag\" = TRUE"), (Ids{0, 3, 5}));
}

TEST_F(FilterExpr, StructFields) {
  EXPECT_EQ(Where("\"meta\".\"lang\" = 'en'"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"META\".\"lang\" = 'en'"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"meta\".\"n\" >= 4"), (Ids{4, 5}));
  EXPECT_EQ(Where("\"meta\".\"lang\" IS NULL"), (Ids{2, 3}));
  EXPECT_EQ(Where("(\"meta\".\"lang\") = 'fr'"), (Ids{1}));
  // The field of the STRUCT column "data", not the id column of the table called data.
  EXPECT_EQ(Where("\"data\".\"id\" = 103"), (Ids{3}));
  SqlText bare("SELECT id FROM ");  // why the parser writes ("data")."id"
  bare += kTable;
  bare += " AS data WHERE \"data\".\"id\" = 103";
  EXPECT_EQ(RunIds(Query(std::move(bare)), "bare"), (Ids{})) << "read as the table's id";
  EXPECT_EQ(WhereSql("\"meta\".\"lang\" = 'en'"), "((\"meta\").\"lang\" = ?)");
}

TEST_F(FilterExpr, WhitelistedFunctions) {
  EXPECT_EQ(Where("lower(\"name\") = 'alice'"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"name\".lower() = 'alice'"), (Ids{0, 4}));  // the reference's form
  EXPECT_EQ(Where("upper(\"name\") = 'BOB'"), (Ids{1}));
  EXPECT_EQ(Where("length(\"name\") > 5"), (Ids{2, 3}));
  EXPECT_EQ(Where("\"name\".length() = 3"), (Ids{1}));
  EXPECT_EQ(Where("abs(\"score\") > 3"), (Ids{3, 5}));
  EXPECT_EQ(Where("\"score\".round(0) = 2"), (Ids{0, 1}));
  EXPECT_EQ(Where("round(\"score\", 1) = 0.1"), (Ids{4}));
  EXPECT_EQ(Where("trim(\"my \"\"col\"\"\", '%') = '_'"), (Ids{4}));
  EXPECT_EQ(Where("upper(lower(\"name\")) = 'ALICE'"), (Ids{0, 4}));
  EXPECT_EQ(Where("\"name\".trim().upper() LIKE 'A%'"), (Ids{0, 4}));
  EXPECT_EQ(Where("LOWER(\"meta\".\"lang\") = 'de'"), (Ids{5}));
  EXPECT_EQ(WhereSql("\"score\".round(2) > 1"), "(round(\"score\", CAST(? AS INTEGER)) > ?)");
}

TEST_F(FilterExpr, ParamsBindInTheOrderOfTheirPlaceholders) {
  auto clause = ParseWhere("round(\"score\", 1) = 2.5 OR \"name\" = 'x'", columns_).value();
  EXPECT_EQ(clause.sql.str(), "(round(\"score\", CAST(? AS INTEGER)) = ?) OR (\"name\" = ?)");
  ASSERT_EQ(clause.params.size(), 3u);
  EXPECT_EQ(std::get<int64_t>(clause.params[0].value()), 1);
  EXPECT_EQ(std::get<double>(clause.params[1].value()), 2.5);
  EXPECT_EQ(std::get<std::string>(clause.params[2].value()), "x");
}

TEST_F(FilterExpr, ManyTermsUpToTheLimit) {
  std::string where = "\"age\" = 25";
  for (int i = 1; i < kMaxFilterTerms; ++i) where += " OR \"age\" = 25";
  EXPECT_EQ(Where(where), (Ids{1}));
  ExpectRefused(ParseWhere(where + " OR \"age\" = 25", columns_), "257 terms", "where");
  std::string nested = std::string(kMaxFilterDepth - 1, '(') + "\"age\" = 25" +
                       std::string(kMaxFilterDepth - 1, ')');
  EXPECT_EQ(Where(nested), (Ids{1}));
  ExpectRefused(ParseWhere("(" + nested + ")", columns_), "64 levels", "where");
}

TEST_F(FilterExpr, TheEngineJudgesTypes) {
  // A type mismatch parses; the engine refuses it, and the caller says InvalidParameter.
  auto clause = ParseWhere("\"age\" = 'abc'", columns_).value();
  SqlText sql("SELECT id FROM ");
  sql += kTable;
  sql += " AS data WHERE ";
  sql += clause.sql;
  auto r = engine_->Run(Query(std::move(sql), clause.params));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unprocessable);
}

TEST_F(FilterExpr, OrderBy) {
  EXPECT_EQ(OrderBy("\"age\" DESC"), (Ids{5, 3, 0, 4, 1, 2}));  // NULL last
  EXPECT_EQ(OrderBy("\"age\" desc"), (Ids{5, 3, 0, 4, 1, 2}));
  EXPECT_EQ(OrderBy("\"age\""), (Ids{1, 0, 4, 3, 5, 2}));
  EXPECT_EQ(OrderBy("\"age\" ASC"), (Ids{1, 0, 4, 3, 5, 2}));
  EXPECT_EQ(OrderBy("\"meta\".\"n\" DESC"), (Ids{5, 4, 3, 1, 0, 2}));
  EXPECT_EQ(OrderBy("lower(\"name\")"), (Ids{0, 4, 1, 3, 2, 5}));
  EXPECT_EQ(OrderBy("\"name\".length() desc"), (Ids{2, 3, 0, 4, 1, 5}));
  EXPECT_EQ(OrderBy("(\"score\")"), (Ids{3, 4, 0, 1, 5, 2}));
  EXPECT_EQ(ParseOrderBy("\"AGE\" desc", columns_).value().sql.str(), "\"age\" DESC");
}

TEST_F(FilterExpr, HostileWhereIsRefusedBeforeAnySql) {
  std::vector<std::string> hostile = {
      "",
      "   ",
      "\"age\"=1; DROP TABLE data",
      "\"age\"=1 OR 1=1 -- ",
      "\"age\"=1 /* comment */",
      "\"age\"=1 */",
      "\"name\" = 'it''s ; fine'",  // rule 1 holds inside strings too
      "\"name\" = 'abc",
      "\"name = 'abc'",
      "\"age\"=1) OR (1=1",
      "(\"age\"=1",
      "\"age\"=1)",
      "\"nope\" = 1",
      "\"\" = 1",
      "1 = 1",
      "\"age\" = 1 OR 1=1",
      "'a' = \"name\"",
      "\"age\" = \"age\"",
      "\"age\" == 1",
      "\"age\" = = 1",
      "\"age\" =",
      "\"age\" 1",
      "\"age\"",
      "\"age\" = 1 AND",
      "AND \"age\" = 1",
      "\"age\" = 1 \"age\" = 2",
      "\"age\" = 1.2.3",
      "\"age\" = 1.",
      "\"age\" = .5",
      "\"age\" = 1e5",
      "\"age\" = 0x10",
      "\"age\" = 99999999999999999999999",
      "\"age\" = -99999999999999999999",
      "\"age\" = - 1",
      "\"age\" = ?",
      "\"age\" = $1",
      "\"age\" IN (1, 2)",
      "\"age\" BETWEEN 1 AND 2",
      "\"age\" = 1 UNION SELECT 1",
      "\"age\" = (SELECT 1)",
      "\"name\" IS 'x'",
      "\"name\" IS NOT",
      "\"name\" LIKE",
      "\"name\" SIMILAR 'x'",
      "\"name\".\"x\" = 1",  // a field of a column that is not a STRUCT
      "\"meta\".\"\" = 1",
      "\"meta\".lang = 'en'",
      "name = 'Bob'",
      "read_csv('/etc/passwd') = 1",
      "\"name\" = read_csv('/etc/passwd')",
      "\"name\".read_csv('/etc/passwd') = 1",
      "getenv('HOME') = 'x'",
      "lower(\"name\", 'x') = 'a'",
      "round(\"score\", 1, 2) = 1",
      "\"name\".lower('x') = 'a'",
      "lower() = 'a'",
      "lower('a') = 'a'",
      "\"score\".round(\"age\") = 1",
      "NOT",
      "()",
      "(())",
      "((\"age\")) = 1",
      "\"age\" = 1 `x`",
      "\"age\" = 1 \\",
      "\"age\" ~ 1",
      "\"age\" = 1 ESCAPE",
      std::string("\"age\" = 1\0", 10),
      std::string("\"name\" = 'a\0b'", 14),
      "\"name\" = '\xff'",
      "\"name\" = '\xc3'",
      "\"\xed\xa0\x80\" = 1",
      std::string(100'000, '(') + "\"age\" = 1" + std::string(100'000, ')'),
      std::string(4'000, '(') + "\"age\" = 1" + std::string(4'000, ')'),
      std::string(4'000, '(') + "\"age\" = 1",
      "\"age\" = 1" + std::string(4'000, ')'),
      "NOT " + std::string(2'000, '!'),
      [] {
        std::string many;
        for (int i = 0; i < 200; ++i) many += "NOT ";
        return many + "\"age\" = 1";
      }(),
      [] {
        std::string calls = "\"name\"";
        for (int i = 0; i < 100; ++i) calls += ".lower()";
        return calls + " = 'a'";
      }(),
      "\"name\" = '" + std::string(kMaxFilterBytes, 'x') + "'",
  };
  for (const std::string& where : hostile)
    ExpectRefused(ParseWhere(where, columns_), where, "where");
}

TEST_F(FilterExpr, LengthLimitIsInclusive) {
  std::string prefix = "\"name\" = '";
  std::string at_limit = prefix + std::string(kMaxFilterBytes - prefix.size() - 1, 'x') + "'";
  ASSERT_EQ(at_limit.size(), kMaxFilterBytes);
  EXPECT_EQ(Where(at_limit), (Ids{}));
  ExpectRefused(ParseWhere(at_limit + " ", columns_), "limit + 1", "where");
}

TEST_F(FilterExpr, HostileOrderByIsRefused) {
  for (std::string orderby :
       {"", "\"age\"; DROP TABLE data", "\"age\" DESC, \"name\"", "\"age\" DESC NULLS FIRST",
        "\"age\" -- x", "1", "\"nope\"", "\"age\" = 1", "\"age\" DESC DESC", "random()",
        "\"age\" ASC)", "(\"age\" DESC)", "read_csv('/etc/passwd')", "\"name\" COLLATE nocase"}) {
    ExpectRefused(ParseOrderBy(orderby, columns_), orderby, "orderby");
  }
}

TEST(FilterExprColumns, AnEmptyColumnListAcceptsNoName) {
  ExpectRefused(ParseWhere("\"a\" = 1", {}), "no columns", "where");
  ExpectRefused(ParseOrderBy("\"a\"", {}), "no columns", "orderby");
}

}  // namespace
}  // namespace hangar::services::viewer
