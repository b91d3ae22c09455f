// DuckDB's types through the engine: each ColumnType, its SQL spelling, and its Value.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "duckdb/engine.h"
#include "test_dir.h"

namespace hangar::duckdb {
namespace {

using testing::TestDir;
using testing::TestOptions;

class DuckDbTypes : public ::testing::Test {
 protected:
  void SetUp() override { engine_ = Engine::Open(TestOptions(dir_.path().string())).value(); }

  // The one column of `sql`'s one row.
  void Expect(Sql sql, ColumnType type, std::string_view sql_type, const Value& value) {
    SCOPED_TRACE(sql.text());
    auto r = engine_->Run(Query(sql));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    ASSERT_EQ(r->columns.size(), 1u);
    ASSERT_EQ(r->rows.size(), 1u);
    EXPECT_EQ(ColumnTypeName(r->columns[0].type), ColumnTypeName(type));
    EXPECT_EQ(r->columns[0].sql_type, sql_type);
    EXPECT_EQ(r->rows[0][0], value);
  }
  Value Text(std::string s) { return Value(std::move(s)); }

  TestDir dir_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(DuckDbTypes, Scalars) {
  Expect("SELECT NULL", ColumnType::Integer, "INTEGER", std::monostate{});  // DuckDB's choice
  Expect("SELECT NULL::INTEGER", ColumnType::Integer, "INTEGER", std::monostate{});
  Expect("SELECT true", ColumnType::Boolean, "BOOLEAN", true);
  Expect("SELECT (-128)::TINYINT", ColumnType::Integer, "TINYINT", int64_t{-128});
  Expect("SELECT 65535::USMALLINT", ColumnType::Integer, "USMALLINT", int64_t{65535});
  Expect("SELECT 9223372036854775807::BIGINT", ColumnType::Integer, "BIGINT",
         int64_t{9223372036854775807});
  Expect("SELECT 18446744073709551615::UBIGINT", ColumnType::Integer, "UBIGINT",
         Text("18446744073709551615"));
  Expect("SELECT (-170141183460469231731687303715884105727)::HUGEINT", ColumnType::Integer,
         "HUGEINT", Text("-170141183460469231731687303715884105727"));
  Expect("SELECT 42::HUGEINT", ColumnType::Integer, "HUGEINT", int64_t{42});
  Expect("SELECT 340282366920938463463374607431768211455::UHUGEINT", ColumnType::Integer,
         "UHUGEINT", Text("340282366920938463463374607431768211455"));
  Expect("SELECT 1.5::FLOAT", ColumnType::Float, "FLOAT", 1.5);
  Expect("SELECT 0.1::DOUBLE", ColumnType::Float, "DOUBLE", 0.1);
  Expect("SELECT 12.345::DECIMAL(10,3)", ColumnType::Decimal, "DECIMAL(10,3)", 12.345);
  Expect("SELECT (-0.5)::DECIMAL(38,10)", ColumnType::Decimal, "DECIMAL(38,10)", -0.5);
  Expect("SELECT 'héllo 🦆'", ColumnType::String, "VARCHAR", Text("héllo 🦆"));
  Expect("SELECT '\\x00\\xFFab'::BLOB", ColumnType::Blob, "BLOB",
         Blob{std::string("\x00\xff"
                          "ab",
                          4)});
  Expect("SELECT '10110'::BIT", ColumnType::Blob, "BIT", Text("10110"));
  Expect("SELECT '{\"a\": 1}'::JSON", ColumnType::String, "JSON", Text("{\"a\": 1}"));
  Expect("SELECT 'b'::ENUM('a', 'b')", ColumnType::String, "ENUM(2 labels)", Text("b"));
  Expect("SELECT '0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9'::UUID", ColumnType::Uuid, "UUID",
         Text("0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"));
}

TEST_F(DuckDbTypes, NanAndInfinityStayDoubles) {
  auto r = engine_->Run(Query("SELECT 'nan'::DOUBLE, '-inf'::DOUBLE"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(std::isnan(std::get<double>(r->rows[0][0])));
  EXPECT_EQ(std::get<double>(r->rows[0][1]), -INFINITY);
}

TEST_F(DuckDbTypes, TemporalValuesAreIso8601) {
  Expect("SELECT DATE '2024-02-19'", ColumnType::Date, "DATE", Text("2024-02-19"));
  Expect("SELECT DATE '1969-12-31'", ColumnType::Date, "DATE", Text("1969-12-31"));
  Expect("SELECT 'infinity'::DATE", ColumnType::Date, "DATE", Text("infinity"));
  Expect("SELECT TIME '10:57:45'", ColumnType::Time, "TIME", Text("10:57:45"));
  Expect("SELECT TIME '10:57:45.5'", ColumnType::Time, "TIME", Text("10:57:45.500000"));
  Expect("SELECT TIMESTAMP '2024-02-19 10:57:45'", ColumnType::Timestamp, "TIMESTAMP",
         Text("2024-02-19T10:57:45"));
  Expect("SELECT TIMESTAMP '1900-01-01 00:00:00.000001'", ColumnType::Timestamp, "TIMESTAMP",
         Text("1900-01-01T00:00:00.000001"));
  Expect("SELECT TIMESTAMP_S '2024-02-19 10:57:45'", ColumnType::Timestamp, "TIMESTAMP_S",
         Text("2024-02-19T10:57:45"));
  Expect("SELECT TIMESTAMP_MS '2024-02-19 10:57:45.123'", ColumnType::Timestamp, "TIMESTAMP_MS",
         Text("2024-02-19T10:57:45.123000"));
  Expect("SELECT TIMESTAMP_NS '2024-02-19 10:57:45.123456789'", ColumnType::Timestamp,
         "TIMESTAMP_NS", Text("2024-02-19T10:57:45.123456789"));
  Expect("SELECT '2024-02-19 10:57:45+02'::TIMESTAMPTZ", ColumnType::Timestamp,
         "TIMESTAMP WITH TIME ZONE", Text("2024-02-19T08:57:45Z"));
  Expect("SELECT '10:57:45+02:30'::TIMETZ", ColumnType::Time, "TIME WITH TIME ZONE",
         Text("10:57:45+02:30"));
  Expect("SELECT INTERVAL '14 months 3 days 4 hours 5.5 seconds'", ColumnType::Interval, "INTERVAL",
         Text("P1Y2M3DT4H5.5S"));
  Expect("SELECT INTERVAL '0 seconds'", ColumnType::Interval, "INTERVAL", Text("PT0S"));
}

TEST_F(DuckDbTypes, NestedValuesAreJson) {
  Expect("SELECT [1, NULL, 3]", ColumnType::List, "INTEGER[]", Text("[1,null,3]"));
  Expect("SELECT ['a\"b', 'c']", ColumnType::List, "VARCHAR[]", Text("[\"a\\\"b\",\"c\"]"));
  Expect("SELECT [[1.5], []]", ColumnType::List, "DECIMAL(2,1)[][]", Text("[[1.5],[]]"));
  Expect("SELECT [1.5::DOUBLE, 'nan'::DOUBLE]", ColumnType::List, "DOUBLE[]", Text("[1.5,null]"));
  Expect("SELECT array_value(1, 2, 3)", ColumnType::List, "INTEGER[3]", Text("[1,2,3]"));
  Expect("SELECT {'a': 1, 'b': 'x', 'c': NULL::INTEGER}", ColumnType::Struct,
         "STRUCT(\"a\" INTEGER, \"b\" VARCHAR, \"c\" INTEGER)",
         Text("{\"a\":1,\"b\":\"x\",\"c\":null}"));
  Expect("SELECT MAP {'k': 1, 'l': 2}", ColumnType::Map, "MAP(VARCHAR, INTEGER)",
         Text("{\"k\":1,\"l\":2}"));
  Expect("SELECT MAP {1: 'one'}", ColumnType::Map, "MAP(INTEGER, VARCHAR)",
         Text("{\"1\":\"one\"}"));
  Expect("SELECT [{'d': DATE '2024-02-19', 'b': '\\x01'::BLOB}]", ColumnType::List,
         "STRUCT(\"d\" DATE, \"b\" BLOB)[]", Text("[{\"d\":\"2024-02-19\",\"b\":\"AQ==\"}]"));
  Expect("SELECT union_value(n := 5)::UNION(n INTEGER, s VARCHAR)", ColumnType::Struct,
         "UNION(\"n\" INTEGER, \"s\" VARCHAR)", Text("5"));
  Expect("SELECT [12.345::DECIMAL(10,3), (-0.5)::DECIMAL(10,3)]", ColumnType::List,
         "DECIMAL(10,3)[]", Text("[12.345,-0.500]"));
  Expect("SELECT [12345678901234567890123456789.012::DECIMAL(38,3)]", ColumnType::List,
         "DECIMAL(38,3)[]", Text("[12345678901234567890123456789.012]"));
  Expect("SELECT NULL::INTEGER[]", ColumnType::List, "INTEGER[]", std::monostate{});
}

TEST_F(DuckDbTypes, ManyRowsAcrossChunks) {
  auto r = engine_->Run(Query("SELECT range AS i, range::VARCHAR AS s FROM range(5000)"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->rows.size(), 5000u);  // three of DuckDB's 2048-row chunks
  for (int64_t i : {0, 2047, 2048, 4999}) {
    EXPECT_EQ(testing::Int(*r, i, 0), i);
    EXPECT_EQ(testing::Text(*r, i, 1), std::to_string(i));
  }
  uint64_t bytes = 0;
  for (const auto& row : r->rows) bytes += ResultBytes(row);
  EXPECT_EQ(r->bytes, bytes);
}

}  // namespace
}  // namespace hangar::duckdb
