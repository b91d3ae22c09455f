// services/viewer/statistics.h: a split's /statistics body (dataset-viewer.md §4.10) over
// Parquet fixtures written by a real engine, every figure worked out by hand (or with
// Python's statistics and datetime modules, as the Python viewer computes them).

#include "services/viewer/statistics.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <cstdint>
#include <limits>

#include "../../duckdb/test_dir.h"

namespace hangar::services::viewer {
namespace {

namespace json = boost::json;
using duckdb::Engine;
using duckdb::Query;
using duckdb::SqlText;
using duckdb::testing::TestDir;

class Statistics : public ::testing::Test {
 protected:
  void SetUp() override {
    auto o = duckdb::testing::TestOptions(dir_.path().string());
    o.allow_writes = true;
    engine_ = Engine::Open(o).value();
  }

  // Writes the rows of `select` to a new Parquet file and returns its path.
  std::string Write(duckdb::Sql select) {
    std::string path = dir_.File("f" + std::to_string(++files_) + ".parquet");
    SqlText sql("COPY (");
    sql += select;
    sql += ") TO $1 (FORMAT parquet)";
    auto r = engine_->Run(Query(std::move(sql), {path}));
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return path;
  }
  std::vector<duckdb::Column> ColumnsOf(const std::string& path) {
    return engine_->Run(Query("SELECT * FROM read_parquet($1) LIMIT 0", {path})).value().columns;
  }
  // The body for the files, with the first file's columns.
  json::object Compute(const std::vector<std::string>& paths, bool partial = false,
                       StatisticsOptions options = {}) {
    auto r = ComputeStatistics(*engine_, paths, ColumnsOf(paths[0]), partial, options);
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return r.has_value() ? *r : json::object();
  }
  json::object Compute(duckdb::Sql select) { return Compute({Write(select)}); }

  TestDir dir_;
  int files_ = 0;
  std::unique_ptr<Engine> engine_;
};

// The entry of `column` in `body` (an empty object when there is none).
json::object Entry(const json::object& body, std::string_view column) {
  for (const auto& e : body.at("statistics").as_array())
    if (e.as_object().at("column_name").as_string() == column) return e.as_object();
  ADD_FAILURE() << "no entry for column " << column;
  return {};
}

// Whether the entry of `column` has type `type` and statistics equal to `expected` (JSON
// text; write doubles with a point, integers without).
void ExpectColumn(const json::object& body, std::string_view column, std::string_view type,
                  std::string_view expected) {
  json::object e = Entry(body, column);
  if (e.empty()) return;
  EXPECT_EQ(e.at("column_type").as_string(), type) << column;
  EXPECT_EQ(e.at("column_statistics"), json::parse(expected))
      << column << ": " << json::serialize(e.at("column_statistics"));
}

std::vector<std::string> Names(const json::object& body) {
  std::vector<std::string> out;
  for (const auto& e : body.at("statistics").as_array())
    out.emplace_back(e.as_object().at("column_name").as_string());
  return out;
}

TEST_F(Statistics, TheSpecExample) {
  json::object body = Compute("SELECT range AS idx FROM range(8551)");
  EXPECT_EQ(body.at("num_examples"), json::value(8551));
  EXPECT_EQ(body.at("partial"), json::value(false));
  ASSERT_EQ(body.at("statistics").as_array().size(), 1u);
  // §4.10: bin_size ceil(8551 / 10) = 856; nine full bins and [7704, 8550] of 847.
  ExpectColumn(body, "idx", "int",
               R"({"nan_count": 0, "nan_proportion": 0.0, "min": 0, "max": 8550,
                   "mean": 4275.0, "median": 4275.0, "std": 2468.60541,
                   "histogram": {"hist": [856, 856, 856, 856, 856, 856, 856, 856, 856, 847],
                                 "bin_edges": [0, 856, 1712, 2568, 3424, 4280, 5136, 5992,
                                               6848, 7704, 8550]}})");
}

TEST_F(Statistics, FloatsCountNanAndNullAsNull) {
  json::object body = Compute(
      "SELECT * FROM (VALUES (0.5::DOUBLE), (1.5), ('nan'::DOUBLE), (NULL), (2.5), (4.0)) t(x)");
  // Of 6 rows 2 are null; [0.5, 1.5, 2.5, 4.0]: mean 2.125, median (1.5 + 2.5) / 2, sample
  // std sqrt(6.6875 / 3); bins of 0.35 from 0.5, 1.55 and 2.6 rounded from 1.5499… and
  // 2.5999… (1.5 and 2.5 fall below them).
  ExpectColumn(body, "x", "float",
               R"({"nan_count": 2, "nan_proportion": 0.33333, "min": 0.5, "max": 4.0,
                   "mean": 2.125, "median": 2.0, "std": 1.49304,
                   "histogram": {"hist": [1, 0, 1, 0, 0, 1, 0, 0, 0, 1],
                                 "bin_edges": [0.5, 0.85, 1.2, 1.55, 1.9, 2.25, 2.6, 2.95,
                                               3.3, 3.65, 4.0]}})");
}

TEST_F(Statistics, FloatAndDecimalColumnsAndInfinities) {
  json::object body = Compute(
      "SELECT * FROM (VALUES (0.1::FLOAT, 0.1::DECIMAL(5,2), 1.0::DOUBLE), "
      "(0.2, 0.2, 'inf'), (0.3, 0.3, '-inf'), (0.7, 0.7, 3.0)) t(f, d, i)");
  // FLOAT's 0.1 is 0.10000000149…: rounded to 5 decimals it is 0.1 again.
  const char* expected =
      R"({"nan_count": 0, "nan_proportion": 0.0, "min": 0.1, "max": 0.7, "mean": 0.325,
          "median": 0.25, "std": 0.263,
          "histogram": {"hist": [1, 1, 0, 1, 0, 0, 0, 0, 0, 1],
                        "bin_edges": [0.1, 0.16, 0.22, 0.28, 0.34, 0.4, 0.46, 0.52, 0.58,
                                      0.64, 0.7]}})";
  ExpectColumn(body, "f", "float", expected);
  ExpectColumn(body, "d", "float", expected);
  // JSON has no infinity: they count as null, as NaN does.
  ExpectColumn(body, "i", "float",
               R"({"nan_count": 2, "nan_proportion": 0.5, "min": 1.0, "max": 3.0, "mean": 2.0,
                   "median": 2.0, "std": 1.41421,
                   "histogram": {"hist": [1, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                                 "bin_edges": [1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.2, 2.4, 2.6,
                                               2.8, 3.0]}})");
}

TEST_F(Statistics, MinEqualToMaxIsOneBin) {
  json::object body = Compute(
      "SELECT 7::INTEGER AS n, CASE WHEN range = 2 THEN NULL ELSE 2.5 END::DOUBLE AS x "
      "FROM range(5)");
  ExpectColumn(body, "n", "int",
               R"({"nan_count": 0, "nan_proportion": 0.0, "min": 7, "max": 7, "mean": 7.0,
                   "median": 7.0, "std": 0.0,
                   "histogram": {"hist": [5], "bin_edges": [7, 7]}})");
  ExpectColumn(body, "x", "float",
               R"({"nan_count": 1, "nan_proportion": 0.2, "min": 2.5, "max": 2.5, "mean": 2.5,
                   "median": 2.5, "std": 0.0,
                   "histogram": {"hist": [4], "bin_edges": [2.5, 2.5]}})");
}

TEST_F(Statistics, AllNullColumns) {
  json::object body = Compute(
      "SELECT NULL::BIGINT AS n, NULL::DOUBLE AS d, NULL::INTEGER[] AS l, NULL::TIMESTAMP AS t, "
      "NULL::VARCHAR AS s, NULL::BOOLEAN AS b FROM range(4)");
  const char* all_null =
      R"({"nan_count": 4, "nan_proportion": 1.0, "min": null, "max": null, "mean": null,
          "median": null, "std": null, "histogram": null})";
  ExpectColumn(body, "n", "int", all_null);
  ExpectColumn(body, "d", "float", all_null);
  ExpectColumn(body, "l", "list", all_null);
  ExpectColumn(body, "t", "datetime", all_null);
  ExpectColumn(body, "s", "string_label",
               R"({"nan_count": 4, "nan_proportion": 1.0, "no_label_count": 0,
                   "no_label_proportion": 0.0, "n_unique": 0, "frequencies": {}})");
  ExpectColumn(body, "b", "bool", R"({"nan_count": 4, "nan_proportion": 1.0, "frequencies": {}})");
}

TEST_F(Statistics, AnEmptySplitDividesByNothing) {
  json::object body = Compute("SELECT range AS n, 'a' AS s FROM range(0)");
  EXPECT_EQ(body.at("num_examples"), json::value(0));
  ExpectColumn(body, "n", "int",
               R"({"nan_count": 0, "nan_proportion": 1.0, "min": null, "max": null,
                   "mean": null, "median": null, "std": null, "histogram": null})");
  ExpectColumn(body, "s", "string_label",
               R"({"nan_count": 0, "nan_proportion": 0.0, "no_label_count": 0,
                   "no_label_proportion": 0.0, "n_unique": 0, "frequencies": {}})");
}

TEST_F(Statistics, BoolFrequencies) {
  json::object body = Compute(
      "SELECT * FROM (VALUES (true, true), (false, true), (true, true), (NULL, true)) t(b, t)");
  ExpectColumn(body, "b", "bool",
               R"({"nan_count": 1, "nan_proportion": 0.25,
                   "frequencies": {"False": 1, "True": 2}})");
  // Only the values present are counted.
  ExpectColumn(body, "t", "bool",
               R"({"nan_count": 0, "nan_proportion": 0.0, "frequencies": {"True": 4}})");
  auto freq = Entry(body, "b").at("column_statistics").as_object().at("frequencies").as_object();
  EXPECT_EQ(freq.begin()->key(), "False");
}

TEST_F(Statistics, StringLabelsUpToAFifthOfTheRows) {
  // 20 values in 100 rows is 0.2: labels; 21 is past it and past 10: text, whose numbers are
  // of lengths 1..21 (1..16 five times, 17..21 four times).
  json::object body = Compute(
      "SELECT 'v' || (range % 20) AS lab, repeat('a', (range % 21)::INTEGER + 1) AS txt "
      "FROM range(100)");
  json::object lab = Entry(body, "lab");
  EXPECT_EQ(lab.at("column_type").as_string(), "string_label");
  const auto& ls = lab.at("column_statistics").as_object();
  EXPECT_EQ(ls.at("n_unique"), json::value(20));
  EXPECT_EQ(ls.at("frequencies").as_object().size(), 20u);
  EXPECT_EQ(ls.at("frequencies").as_object().at("v7"), json::value(5));
  EXPECT_EQ(ls.at("nan_count"), json::value(0));
  ExpectColumn(body, "txt", "string_text",
               R"({"nan_count": 0, "nan_proportion": 0.0, "min": 1, "max": 21, "mean": 10.6,
                   "median": 10.5, "std": 5.94928,
                   "histogram": {"hist": [15, 15, 15, 15, 15, 13, 12],
                                 "bin_edges": [1, 4, 7, 10, 13, 16, 19, 21]}})");
}

TEST_F(Statistics, TenValuesAreAlwaysLabelsElevenAreNot) {
  json::object ten = Compute("SELECT 'w' || range AS s FROM range(10)");
  EXPECT_EQ(Entry(ten, "s").at("column_type").as_string(), "string_label");
  // Characters, not bytes: 'é0' is 2 long. 2 × 10 and 3 × 1.
  json::object eleven = Compute("SELECT 'é' || range AS s FROM range(11)");
  ExpectColumn(eleven, "s", "string_text",
               R"({"nan_count": 0, "nan_proportion": 0.0, "min": 2, "max": 3, "mean": 2.09091,
                   "median": 2.0, "std": 0.30151,
                   "histogram": {"hist": [11], "bin_edges": [2, 3]}})");
  // Ten values and a null are eleven, as the Python viewer counts them.
  json::object with_null =
      Compute("SELECT CASE WHEN range < 10 THEN 'w' || range END AS s FROM range(11)");
  ExpectColumn(with_null, "s", "string_text",
               R"({"nan_count": 1, "nan_proportion": 0.09091, "min": 2, "max": 2, "mean": 2.0,
                   "median": 2.0, "std": 0.0,
                   "histogram": {"hist": [10], "bin_edges": [2, 2]}})");
}

TEST_F(Statistics, LabelFrequenciesMostFrequentFirst) {
  json::object body = Compute(
      "SELECT * FROM (VALUES ('b'), ('a'), ('c'), ('c'), ('a'), (NULL), ('a'), ('c')) t(s)");
  ExpectColumn(body, "s", "string_label",
               R"({"nan_count": 1, "nan_proportion": 0.125, "no_label_count": 0,
                   "no_label_proportion": 0.0, "n_unique": 3,
                   "frequencies": {"a": 3, "c": 3, "b": 1}})");
  auto freq = Entry(body, "s").at("column_statistics").as_object().at("frequencies").as_object();
  std::vector<std::string> keys;
  for (const auto& kv : freq) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "c", "b"}));
}

TEST_F(Statistics, ListLengths) {
  json::object body =
      Compute("SELECT * FROM (VALUES ([1, 2, 3]), ([]), (NULL), ([4]), ([5, 6])) t(l)");
  // Lengths 3, 0, 1, 2: bin_size ceil(4 / 10) = 1, edges 0, 1, 2 and then 3.
  ExpectColumn(body, "l", "list",
               R"({"nan_count": 1, "nan_proportion": 0.2, "min": 0, "max": 3, "mean": 1.5,
                   "median": 1.5, "std": 1.29099,
                   "histogram": {"hist": [1, 1, 2], "bin_edges": [0, 1, 2, 3]}})");
}

TEST_F(Statistics, TimestampsAsSecondsAfterTheMinimum) {
  json::object body = Compute(
      "SELECT * FROM (VALUES (TIMESTAMP '2024-01-01 00:00:00.25'), (TIMESTAMP '2024-01-02'), "
      "(NULL), (TIMESTAMP '2024-01-11 12:00:00')) t(t)");
  // Whole seconds after 00:00:00.25: 0, 86399, 907199; each string is that minimum plus
  // seconds, its fraction dropped. std 500697.4224 s; bins of 90720 s.
  ExpectColumn(body, "t", "datetime",
               R"({"nan_count": 1, "nan_proportion": 0.25, "min": "2024-01-01 00:00:00",
                   "max": "2024-01-11 11:59:59", "mean": "2024-01-04 19:59:59",
                   "median": "2024-01-01 23:59:59", "std": "5 days, 19:04:57.422400",
                   "histogram": {"hist": [2, 0, 0, 0, 0, 0, 0, 0, 0, 1],
                                 "bin_edges": ["2024-01-01 00:00:00", "2024-01-02 01:12:00",
                                   "2024-01-03 02:24:00", "2024-01-04 03:36:00",
                                   "2024-01-05 04:48:00", "2024-01-06 06:00:00",
                                   "2024-01-07 07:12:00", "2024-01-08 08:24:00",
                                   "2024-01-09 09:36:00", "2024-01-10 10:48:00",
                                   "2024-01-11 11:59:59"]}})");
}

TEST_F(Statistics, DatesAndTimeZones) {
  json::object body = Compute(
      "SELECT * FROM (VALUES (DATE '2020-01-01', TIMESTAMPTZ '2024-05-06 07:08:09+00'), "
      "(DATE '2020-03-01', NULL), (DATE '2021-01-01', NULL)) t(d, z)");
  json::object d = Entry(body, "d");
  EXPECT_EQ(d.at("column_type").as_string(), "datetime");
  const auto& ds = d.at("column_statistics").as_object();
  EXPECT_EQ(ds.at("min"), json::value("2020-01-01 00:00:00"));
  EXPECT_EQ(ds.at("max"), json::value("2021-01-01 00:00:00"));
  EXPECT_EQ(ds.at("mean"), json::value("2020-05-22 00:00:00"));
  EXPECT_EQ(ds.at("median"), json::value("2020-03-01 00:00:00"));
  EXPECT_EQ(ds.at("std"), json::value("196 days, 7:05:48.075390"));
  const auto& hist = ds.at("histogram").as_object();
  EXPECT_EQ(hist.at("hist"), json::parse("[1, 1, 0, 0, 0, 0, 0, 0, 0, 1]"));
  EXPECT_EQ(hist.at("bin_edges").as_array()[1], json::value("2020-02-06 14:24:01"));
  // A time-zone-aware column is written in UTC with its offset, as Python's %z does.
  ExpectColumn(body, "z", "datetime",
               R"({"nan_count": 2, "nan_proportion": 0.66667,
                   "min": "2024-05-06 07:08:09+0000", "max": "2024-05-06 07:08:09+0000",
                   "mean": "2024-05-06 07:08:09+0000", "median": "2024-05-06 07:08:09+0000",
                   "std": null,
                   "histogram": {"hist": [1], "bin_edges": ["2024-05-06 07:08:09+0000",
                                                            "2024-05-06 07:08:09+0000"]}})");
}

TEST_F(Statistics, PartialSplitsCountTheirFilesOnly) {
  std::string first = Write("SELECT range AS n FROM range(5)");
  std::string second = Write("SELECT range + 5 AS n FROM range(5)");
  json::object both = Compute({first, second});
  EXPECT_EQ(both.at("num_examples"), json::value(10));
  EXPECT_EQ(both.at("partial"), json::value(false));
  EXPECT_EQ(Entry(both, "n").at("column_statistics").as_object().at("max"), json::value(9));
  json::object part = Compute({first}, /*partial=*/true);
  EXPECT_EQ(part.at("num_examples"), json::value(5));
  EXPECT_EQ(part.at("partial"), json::value(true));
  EXPECT_EQ(Entry(part, "n").at("column_statistics").as_object().at("max"), json::value(4));
}

TEST_F(Statistics, ColumnNamesWithQuotesAndSpaces) {
  json::object body = Compute(
      "SELECT range AS \"a \"\"b\"\" c\", 'x' AS \"x'); DROP TABLE t; --\", "
      "range AS \"v\" FROM range(3)");
  EXPECT_EQ(Names(body), (std::vector<std::string>{"a \"b\" c", "v", "x'); DROP TABLE t; --"}));
  EXPECT_EQ(Entry(body, "a \"b\" c").at("column_statistics").as_object().at("max"), json::value(2));
  // `v` is also the name the queries give their values.
  EXPECT_EQ(Entry(body, "v").at("column_statistics").as_object().at("mean"), json::value(1.0));
}

TEST_F(Statistics, OtherTypesAreSkippedAndEntriesSortedByName) {
  json::object body = Compute(
      "SELECT {'a': 1} AS s, 'x'::BLOB AS blob, MAP {'k': 1} AS m, INTERVAL 1 DAY AS i, "
      "TIME '10:00:00' AS tm, 2 AS zeta, 1 AS alpha, 18446744073709551615::UBIGINT AS big");
  EXPECT_EQ(Names(body), (std::vector<std::string>{"alpha", "big", "zeta"}));
  // Past int64, integers are counted as floats.
  EXPECT_EQ(Entry(body, "big").at("column_type").as_string(), "float");
}

TEST_F(Statistics, OnlyTheFirstColumnsUpToTheCap) {
  std::string path = Write("SELECT 1 AS b, 2 AS a, 3 AS c");
  StatisticsOptions options;
  options.max_columns = 2;
  EXPECT_EQ(Names(Compute({path}, false, options)), (std::vector<std::string>{"a", "b"}));
}

TEST_F(Statistics, EngineErrorsPassThrough) {
  std::string path = Write("SELECT 1 AS n");
  auto columns = ColumnsOf(path);
  auto outside = ComputeStatistics(*engine_, {"/etc/passwd"}, columns, false);
  ASSERT_FALSE(outside.has_value());
  EXPECT_EQ(outside.error().code, ErrorCode::Forbidden);
  auto garbage =
      ComputeStatistics(*engine_, {dir_.Write("bad.parquet", "not parquet")}, columns, false);
  ASSERT_FALSE(garbage.has_value());
  EXPECT_EQ(garbage.error().code, ErrorCode::Unprocessable);
}

TEST(StatisticsBins, IntegerEdges) {
  EXPECT_EQ(IntegerBinEdges(0, 8550),
            (std::vector<int64_t>{0, 856, 1712, 2568, 3424, 4280, 5136, 5992, 6848, 7704, 8550}));
  EXPECT_EQ(IntegerBinEdges(0, 9), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(IntegerBinEdges(0, 1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(IntegerBinEdges(-3, -3), (std::vector<int64_t>{-3, -3}));
  EXPECT_EQ(IntegerBinEdges(1, 21), (std::vector<int64_t>{1, 4, 7, 10, 13, 16, 19, 21}));
  // The widest range overflows nothing: 2^64 / 10 rounded up is the bin size.
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr int64_t hi = std::numeric_limits<int64_t>::max();
  auto wide = IntegerBinEdges(lo, hi);
  ASSERT_EQ(wide.size(), 11u);
  EXPECT_EQ(wide.front(), lo);
  EXPECT_EQ(wide[1], lo + 1844674407370955162);
  EXPECT_EQ(wide.back(), hi);
}

TEST(StatisticsBins, FloatEdgesAsNumpyArange) {
  // numpy.arange(0.5, 4.0, 0.35): the 4th is 0.5 + 3 × 0.35 in doubles, 1.5499999999999998.
  auto e = FloatBinEdges(0.5, 4.0);
  ASSERT_EQ(e.size(), 11u);
  EXPECT_EQ(e[1], 0.85);
  EXPECT_EQ(e[3], 1.5499999999999998);
  EXPECT_EQ(e[6], 2.5999999999999996);
  EXPECT_EQ(e[10], 4.0);
  EXPECT_EQ(FloatBinEdges(2.5, 2.5), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(Round5(1.5499999999999998), 1.55);
  EXPECT_EQ(Round5(2468.605414), 2468.60541);
  EXPECT_EQ(Round5(0.000025), 0.00002);  // half to even
}

TEST(StatisticsBins, TimedeltaAsPythonPrintsIt) {
  EXPECT_EQ(TimedeltaString(968252.32245), "11 days, 4:57:32.322450");
  EXPECT_EQ(TimedeltaString(1), "0:00:01");
  EXPECT_EQ(TimedeltaString(86400), "1 day, 0:00:00");
  EXPECT_EQ(TimedeltaString(0.5), "0:00:00.500000");
  EXPECT_EQ(TimedeltaString(2 * 86400 + 3723.000001), "2 days, 1:02:03.000001");
}

}  // namespace
}  // namespace hangar::services::viewer
