// A split's descriptive statistics (statistics.h). Every count, extreme, mean, median and
// deviation is a DuckDB aggregate over read_parquet of the split's files; Hangar only picks
// the bins, binds their edges into the histogram query and formats the numbers the way the
// Python viewer (numpy, polars, datetime) prints them, so the figures match its §4.10 rules.

#include "services/viewer/statistics.h"

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

namespace hangar::services::viewer {
namespace json = boost::json;
using duckdb::ColumnType;
using duckdb::Identifier;
using duckdb::Param;
using duckdb::Query;
using duckdb::QueryResult;
using duckdb::SqlText;
using duckdb::StringList;
using duckdb::Value;

namespace {

constexpr int64_t kNumBins = 10;
// A string column is a label when it has at most kAlwaysLabels values, or at most kMaxLabels
// making at most kMaxLabelProportion of the rows (§4.10).
constexpr int64_t kAlwaysLabels = 10;
constexpr int64_t kMaxLabels = 1000;
constexpr double kMaxLabelProportion = 0.2;
constexpr int64_t kMicrosPerSecond = 1'000'000;
constexpr int64_t kMicrosPerDay = 86'400 * kMicrosPerSecond;

// What every query of one split shares.
struct Scan {
  duckdb::Engine& engine;
  StringList files;
  std::chrono::milliseconds timeout;
  int64_t num_examples = 0;
};

// Runs `sql`, whose last placeholder is read_parquet's, with `params` and then the files.
Result<QueryResult> Run(Scan& scan, SqlText sql, std::vector<Param> params) {
  params.emplace_back(scan.files);
  Query q(std::move(sql), std::move(params));
  q.timeout = scan.timeout;
  return scan.engine.Run(q);
}

// The one row of an aggregate query.
Result<std::vector<Value>> RunRow(Scan& scan, SqlText sql, std::vector<Param> params) {
  HANGAR_ASSIGN_OR_RETURN(QueryResult r, Run(scan, std::move(sql), std::move(params)));
  if (r.rows.empty()) return MakeError(ErrorCode::Internal, "an aggregate query returned no row");
  return std::move(r.rows[0]);
}

std::optional<int64_t> IntOf(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return std::nullopt;
}

// A number cell as a double: integers, doubles, and integers past int64 (their digits).
std::optional<double> DoubleOf(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* s = std::get_if<std::string>(&v)) return std::strtod(s->c_str(), nullptr);
  return std::nullopt;
}

double Proportion(int64_t count, int64_t total) {
  return count == 0 || total == 0 ? 0.0 : Round5(static_cast<double>(count) / total);
}

// What a numeric statistic is computed over: a column, or a number derived from each cell.
enum class Measure : uint8_t {
  Integer,     // the integers as they are
  Float,       // the values as DOUBLE, NaN and ±infinity as NULL
  Length,      // characters of a string (code points, as polars' len_chars)
  ListLength,  // elements of a LIST or ARRAY (NULL for a NULL list)
  Seconds,     // whole seconds after a bound minimum, in epoch microseconds
};

// Appends the SQL of `m` over column `c`, as `v` of a subquery; Seconds binds one parameter.
void AppendSubquery(SqlText& sql, Measure m, const Identifier& c) {
  sql += "(SELECT ";
  switch (m) {
    case Measure::Integer:
      sql += c;
      break;
    case Measure::Float:
      sql += "CASE WHEN isfinite(CAST(";
      sql += c;
      sql += " AS DOUBLE)) THEN CAST(";
      sql += c;
      sql += " AS DOUBLE) END";
      break;
    case Measure::Length:
      sql += "length(CAST(";
      sql += c;
      sql += " AS VARCHAR))";
      break;
    case Measure::ListLength:
      sql += "len(";
      sql += c;
      sql += ")";
      break;
    case Measure::Seconds:
      // Truncated like polars' total_seconds: the differences are never negative.
      sql += "(epoch_us(";
      sql += c;
      sql += ") - ?) // 1000000";
      break;
  }
  sql += " AS v FROM read_parquet(?))";
}

// A Measure over one column, with the parameters its SQL binds.
struct Expr {
  Measure measure;
  Identifier column;
  std::vector<Param> params;
};

// The numbers of §4.10 over the non-null values of an Expr, rounded as they are reported.
struct Numbers {
  bool integer = true;  // min, max and edges are int64 (else doubles)
  int64_t count = 0;    // non-null values
  json::value min, max;
  double mean = 0, median = 0;
  std::optional<double> std;  // none for a single value
  json::array edges;
  std::vector<int64_t> hist;
};

// How many values fall in each bin: the bin of v is the number of interior edges ≤ v, so
// bins are half-open and the last holds max (and what rounding put past an end edge).
Result<std::vector<int64_t>> Histogram(Scan& scan, const Expr& e, std::vector<Param> interior,
                                       int64_t count) {
  if (interior.empty()) return std::vector<int64_t>{count};
  SqlText sql("SELECT b, count(*) FROM (SELECT ");
  for (size_t i = 0; i < interior.size(); ++i) {
    if (i > 0) sql += " + ";
    sql += "(v >= ?)::INTEGER";
  }
  sql += " AS b FROM ";
  AppendSubquery(sql, e.measure, e.column);
  sql += " WHERE v IS NOT NULL) GROUP BY b";
  std::vector<int64_t> hist(interior.size() + 1, 0);
  for (const auto& p : e.params) interior.push_back(p);
  HANGAR_ASSIGN_OR_RETURN(QueryResult r, Run(scan, std::move(sql), std::move(interior)));
  for (const auto& row : r.rows) {
    auto bin = IntOf(row[0]);
    auto n = IntOf(row[1]);
    if (!bin || !n || *bin < 0 || static_cast<size_t>(*bin) >= hist.size())
      return MakeError(ErrorCode::Internal, "histogram query returned a bin out of range");
    hist[*bin] = *n;
  }
  return hist;
}

// Min, max and edges: integers when the measure is and its extremes fit int64, else
// doubles rounded before the bins are drawn (as the Python viewer rounds them). Returns the
// interior edges to bind.
std::vector<Param> Extremes(const Expr& e, const Value& min, const Value& max, Numbers& n) {
  std::vector<Param> interior;
  auto imin = IntOf(min), imax = IntOf(max);
  n.integer = e.measure != Measure::Float && imin && imax;
  if (n.integer) {
    n.min = *imin;
    n.max = *imax;
    std::vector<int64_t> edges = IntegerBinEdges(*imin, *imax);
    for (size_t i = 0; i < edges.size(); ++i) {
      n.edges.emplace_back(edges[i]);
      if (i > 0 && i + 1 < edges.size()) interior.emplace_back(edges[i]);
    }
    return interior;
  }
  double lo = Round5(DoubleOf(min).value_or(0)), hi = Round5(DoubleOf(max).value_or(0));
  n.min = lo;
  n.max = hi;
  std::vector<double> edges = FloatBinEdges(lo, hi);
  for (size_t i = 0; i < edges.size(); ++i) {
    n.edges.emplace_back(Round5(edges[i]));
    if (i > 0 && i + 1 < edges.size()) interior.emplace_back(edges[i]);
  }
  return interior;
}

// One summary query (count, min, max, mean, median, sample std), then the histogram's.
Result<Numbers> NumbersOf(Scan& scan, const Expr& e) {
  SqlText sql(
      "SELECT count(v), min(v), max(v), avg(v), median(v), stddev_samp(v) "
      "FROM ");
  AppendSubquery(sql, e.measure, e.column);
  HANGAR_ASSIGN_OR_RETURN(auto row, RunRow(scan, std::move(sql), e.params));
  Numbers n;
  n.count = IntOf(row[0]).value_or(0);
  if (n.count == 0) return n;
  n.mean = Round5(DoubleOf(row[3]).value_or(0));
  n.median = Round5(DoubleOf(row[4]).value_or(0));
  if (auto s = DoubleOf(row[5])) n.std = Round5(*s);
  std::vector<Param> interior = Extremes(e, row[1], row[2], n);
  HANGAR_ASSIGN_OR_RETURN(n.hist, Histogram(scan, e, std::move(interior), n.count));
  return n;
}

// The statistics of a column without a value: every figure null.
json::object AllNull(int64_t num_examples) {
  return json::object{{"nan_count", num_examples},
                      {"nan_proportion", 1.0},
                      {"min", nullptr},
                      {"max", nullptr},
                      {"mean", nullptr},
                      {"median", nullptr},
                      {"std", nullptr},
                      {"histogram", nullptr}};
}

json::object NumericJson(const Numbers& n, int64_t num_examples) {
  if (n.count == 0) return AllNull(num_examples);
  int64_t nulls = num_examples - n.count;
  json::array hist(n.hist.begin(), n.hist.end());
  return json::object{
      {"nan_count", nulls},
      {"nan_proportion", Proportion(nulls, num_examples)},
      {"min", n.min},
      {"max", n.max},
      {"mean", n.mean},
      {"median", n.median},
      {"std", n.std ? json::value(*n.std) : json::value(nullptr)},
      {"histogram", json::object{{"hist", std::move(hist)}, {"bin_edges", n.edges}}}};
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); }

// Epoch microseconds as Python's datetime_to_string writes them: "YYYY-MM-DD HH:MM:SS"
// (sub-seconds dropped), "+0000" after a time-zone-aware value.
std::string DatetimeString(int64_t us, bool tz) {
  using namespace std::chrono;
  sys_seconds t{seconds{FloorDiv(us, kMicrosPerSecond)}};
  sys_days day = floor<days>(t);
  year_month_day ymd{day};
  hh_mm_ss<seconds> hms{t - day};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d%s", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()), tz ? "+0000" : "");
  return buf;
}

// The minimum plus `seconds`, as datetime + timedelta(seconds=…) (microseconds rounded).
std::string Shifted(int64_t min_us, const json::value& seconds, bool tz) {
  double s = seconds.to_number<double>();
  return DatetimeString(min_us + static_cast<int64_t>(std::nearbyint(s * kMicrosPerSecond)), tz);
}

// Datetimes: the integer statistics of the seconds after the minimum, shifted back.
Result<json::object> DatetimeStats(Scan& scan, const Identifier& c, bool tz) {
  SqlText sql("SELECT min(epoch_us(");
  sql += c;
  sql += ")) FROM read_parquet(?)";
  HANGAR_ASSIGN_OR_RETURN(auto row, RunRow(scan, std::move(sql), {}));
  auto min_us = IntOf(row[0]);
  if (!min_us) return AllNull(scan.num_examples);
  HANGAR_ASSIGN_OR_RETURN(Numbers n, NumbersOf(scan, Expr{Measure::Seconds, c, {*min_us}}));
  if (n.count == 0) return AllNull(scan.num_examples);
  json::array edges;
  for (const auto& e : n.edges) edges.emplace_back(Shifted(*min_us, e, tz));
  int64_t nulls = scan.num_examples - n.count;
  json::array hist(n.hist.begin(), n.hist.end());
  return json::object{
      {"nan_count", nulls},
      {"nan_proportion", Proportion(nulls, scan.num_examples)},
      {"min", DatetimeString(*min_us, tz)},
      {"max", Shifted(*min_us, n.max, tz)},
      {"mean", Shifted(*min_us, n.mean, tz)},
      {"median", Shifted(*min_us, n.median, tz)},
      {"std", n.std ? json::value(TimedeltaString(*n.std)) : json::value(nullptr)},
      {"histogram", json::object{{"hist", std::move(hist)}, {"bin_edges", std::move(edges)}}}};
}

// Booleans: counts of the values present, "False" before "True".
Result<json::object> BoolStats(Scan& scan, const Identifier& c) {
  SqlText sql("SELECT count(*) FILTER (WHERE ");
  sql += c;
  sql += "), count(*) FILTER (WHERE NOT ";
  sql += c;
  sql += ") FROM read_parquet(?)";
  HANGAR_ASSIGN_OR_RETURN(auto row, RunRow(scan, std::move(sql), {}));
  int64_t t = IntOf(row[0]).value_or(0), f = IntOf(row[1]).value_or(0);
  int64_t nulls = scan.num_examples - t - f;
  json::object freq;
  if (f > 0) freq["False"] = f;
  if (t > 0) freq["True"] = t;
  return json::object{{"nan_count", nulls},
                      {"nan_proportion", Proportion(nulls, scan.num_examples)},
                      {"frequencies", std::move(freq)}};
}

// A string column's label frequencies, most frequent first (ties by value).
Result<json::object> LabelStats(Scan& scan, const Identifier& c, int64_t nulls) {
  SqlText sql("SELECT ");
  sql += c;
  sql += ", count(*) FROM read_parquet(?) WHERE ";
  sql += c;
  sql += " IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1";
  HANGAR_ASSIGN_OR_RETURN(QueryResult r, Run(scan, std::move(sql), {}));
  json::object freq;
  for (const auto& row : r.rows) {
    const auto* label = std::get_if<std::string>(&row[0]);
    if (label) freq[*label] = IntOf(row[1]).value_or(0);
  }
  auto n_unique = static_cast<int64_t>(freq.size());
  return json::object{
      {"nan_count", nulls},   {"nan_proportion", Proportion(nulls, scan.num_examples)},
      {"no_label_count", 0},  {"no_label_proportion", 0.0},
      {"n_unique", n_unique}, {"frequencies", std::move(freq)}};
}

// What one column's entry says: its column_type and column_statistics.
struct Stats {
  std::string_view type;
  json::object stats;
};

// Whether a string column of `n_unique` values (null counted as one, as polars' n_unique
// that the rule was written against) in `rows` rows is a label (§4.10).
bool IsLabel(int64_t n_unique, int64_t rows) {
  return n_unique <= kAlwaysLabels ||
         (rows > 0 && n_unique <= kMaxLabels &&
          static_cast<double>(n_unique) / static_cast<double>(rows) <= kMaxLabelProportion);
}

// The exact distinct values of a string column, or nullopt when its approximate count
// (HyperLogLog, a few percent off) is so far past any label count that it must be text:
// an exact count of a text column's values would hash every document.
Result<std::optional<int64_t>> DistinctValues(Scan& scan, const Identifier& c, int64_t nulls) {
  SqlText sql("SELECT approx_count_distinct(");
  sql += c;
  sql += ") FROM read_parquet(?)";
  HANGAR_ASSIGN_OR_RETURN(auto approx, RunRow(scan, std::move(sql), {}));
  int64_t most =
      std::max(kAlwaysLabels,
               std::min(kMaxLabels, static_cast<int64_t>(scan.num_examples * kMaxLabelProportion)));
  if (IntOf(approx[0]).value_or(0) > 2 * most + 16) return std::optional<int64_t>();
  SqlText exact("SELECT count(DISTINCT ");
  exact += c;
  exact += ") FROM read_parquet(?)";
  HANGAR_ASSIGN_OR_RETURN(auto row, RunRow(scan, std::move(exact), {}));
  return std::optional<int64_t>(IntOf(row[0]).value_or(0) + (nulls > 0 ? 1 : 0));
}

// Strings: labels with their frequencies, or the numbers of their lengths.
Result<Stats> StringStats(Scan& scan, const Identifier& c) {
  SqlText sql("SELECT count(");
  sql += c;
  sql += ") FROM read_parquet(?)";
  HANGAR_ASSIGN_OR_RETURN(auto row, RunRow(scan, std::move(sql), {}));
  int64_t nulls = scan.num_examples - IntOf(row[0]).value_or(0);
  HANGAR_ASSIGN_OR_RETURN(auto n_unique, DistinctValues(scan, c, nulls));
  if (n_unique && IsLabel(*n_unique, scan.num_examples)) {
    HANGAR_ASSIGN_OR_RETURN(json::object stats, LabelStats(scan, c, nulls));
    return Stats{"string_label", std::move(stats)};
  }
  HANGAR_ASSIGN_OR_RETURN(Numbers lengths, NumbersOf(scan, Expr{Measure::Length, c, {}}));
  return Stats{"string_text", NumericJson(lengths, scan.num_examples)};
}

// Numbers over `m` of the column, typed "int" or "float" by what they turned out to be
// (integers past int64 are counted as floats), or `type` when given.
Result<Stats> NumericStats(Scan& scan, const Identifier& c, Measure m, std::string_view type) {
  HANGAR_ASSIGN_OR_RETURN(Numbers n, NumbersOf(scan, Expr{m, c, {}}));
  if (type.empty()) type = n.integer ? "int" : "float";
  return Stats{type, NumericJson(n, scan.num_examples)};
}

// Whether §4.10 has statistics of a column of this type.
bool HasStatistics(ColumnType type) {
  switch (type) {
    case ColumnType::Integer:
    case ColumnType::Float:
    case ColumnType::Decimal:
    case ColumnType::List:
    case ColumnType::String:
    case ColumnType::Boolean:
    case ColumnType::Date:
    case ColumnType::Timestamp:
      return true;
    default:
      return false;
  }
}

// The entry of one column of a type HasStatistics accepts.
Result<Stats> ColumnStats(Scan& scan, const duckdb::Column& col) {
  Identifier c = Identifier::Quote(col.name);
  switch (col.type) {
    case ColumnType::Integer:
      return NumericStats(scan, c, Measure::Integer, "");
    case ColumnType::Float:
    case ColumnType::Decimal:
      return NumericStats(scan, c, Measure::Float, "float");
    case ColumnType::List:
      return NumericStats(scan, c, Measure::ListLength, "list");
    case ColumnType::String:
      return StringStats(scan, c);
    case ColumnType::Boolean: {
      HANGAR_ASSIGN_OR_RETURN(json::object stats, BoolStats(scan, c));
      return Stats{"bool", std::move(stats)};
    }
    default: {  // Date, Timestamp
      bool tz = col.sql_type == "TIMESTAMP WITH TIME ZONE";
      HANGAR_ASSIGN_OR_RETURN(json::object stats, DatetimeStats(scan, c, tz));
      return Stats{"datetime", std::move(stats)};
    }
  }
}

}  // namespace

double Round5(double x) {
  double scaled = x * 1e5;
  if (!std::isfinite(scaled)) return x;
  return std::nearbyint(scaled) / 1e5;
}

std::vector<int64_t> IntegerBinEdges(int64_t min, int64_t max) {
  if (min >= max) return {min, max};
  // Offsets from min in uint64, where max − min always fits. ceil((range + 1) / 10) is
  // range / 10 + 1 for any range, without computing range + 1.
  uint64_t range = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);
  uint64_t size = range / kNumBins + 1;
  std::vector<int64_t> edges;
  for (uint64_t off = 0;; off += size) {
    edges.push_back(static_cast<int64_t>(static_cast<uint64_t>(min) + off));
    if (range - off <= size) break;  // the next edge would reach max
  }
  edges.push_back(max);
  return edges;
}

std::vector<double> FloatBinEdges(double min, double max) {
  double step = (max - min) / kNumBins;
  if (!(min < max) || !(step > 0) || !std::isfinite(step)) return {min, max};
  // numpy.arange: ceil((stop − start) / step) values; the second is start + step, the rest
  // start + i · (second − start).
  double count = std::ceil((max - min) / step);
  auto len = static_cast<size_t>(std::clamp(count, 1.0, static_cast<double>(kNumBins + 2)));
  std::vector<double> edges{min};
  if (len > 1) edges.push_back(min + step);
  double delta = len > 1 ? edges[1] - min : 0;
  for (size_t i = 2; i < len; ++i) edges.push_back(min + static_cast<double>(i) * delta);
  if (edges.back() != max) edges.push_back(max);
  return edges;
}

std::string TimedeltaString(double seconds) {
  auto us = static_cast<int64_t>(std::nearbyint(seconds * kMicrosPerSecond));
  int64_t days = FloorDiv(us, kMicrosPerDay);
  int64_t rest = us - days * kMicrosPerDay;
  int64_t secs = rest / kMicrosPerSecond, micros = rest % kMicrosPerSecond;
  std::string out;
  if (days != 0) out = std::to_string(days) + (days == 1 || days == -1 ? " day, " : " days, ");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d:%02d", static_cast<int>(secs / 3600),
                static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60));
  out += buf;
  if (micros != 0) {
    std::snprintf(buf, sizeof buf, ".%06d", static_cast<int>(micros));
    out += buf;
  }
  return out;
}

Result<json::object> ComputeStatistics(duckdb::Engine& engine,
                                       const std::vector<std::string>& parquet_paths,
                                       const std::vector<duckdb::Column>& columns, bool partial,
                                       const StatisticsOptions& options) {
  Scan scan{engine, StringList{parquet_paths}, options.timeout};
  HANGAR_ASSIGN_OR_RETURN(auto count,
                          RunRow(scan, SqlText("SELECT count(*) FROM read_parquet(?)"), {}));
  scan.num_examples = IntOf(count[0]).value_or(0);

  std::vector<std::pair<std::string, Stats>> entries;
  size_t n = std::min(columns.size(), options.max_columns);
  for (size_t i = 0; i < n; ++i) {
    if (!HasStatistics(columns[i].type)) continue;
    HANGAR_ASSIGN_OR_RETURN(Stats stats, ColumnStats(scan, columns[i]));
    entries.emplace_back(columns[i].name, std::move(stats));
  }
  // The Python viewer lists columns by name; std::string compares bytes, which for UTF-8
  // is code point order, as Python's str.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  json::array statistics;
  for (auto& entry : entries) {
    statistics.push_back(json::object{{"column_name", entry.first},
                                      {"column_type", entry.second.type},
                                      {"column_statistics", std::move(entry.second.stats)}});
  }
  return json::object{{"num_examples", scan.num_examples},
                      {"statistics", std::move(statistics)},
                      {"partial", partial}};
}

}  // namespace hangar::services::viewer
