#pragma once
// A split's descriptive statistics (dataset-viewer.md §4.10), computed by DuckDB over the
// split's Parquet files: per column a few aggregate queries (one summary, one histogram on
// edges bound as parameters), never a copy of the data in Hangar. Blocking; runs on the
// statistics job's thread.

#include <boost/json/object.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "duckdb/engine.h"

namespace hangar::services::viewer {

// How the statistics of a split are computed.
struct StatisticsOptions {
  // Deadline of each DuckDB statement (a column takes one to three); 0: the engine's.
  std::chrono::milliseconds timeout{0};
  // Only the split's first max_columns columns (in the order given) are looked at, so a
  // table of 100,000 columns costs a bounded number of queries; the rest get no entry.
  size_t max_columns = 1000;
};

// The /statistics body of one split (§4.10):
//   {"num_examples": <rows of the files>,
//    "statistics": [{"column_name", "column_type", "column_statistics"}, …],
//    "partial": `partial`}
// `parquet_paths`: the split's Parquet files (all of them, or the first ones of a partial
// split) under the engine's allowed directories; `columns`: their schema as the engine reads
// it back (SplitExport::columns). Entries are sorted by column name (byte order). Column
// types by ColumnType: Integer → "int"; Float, Decimal → "float" (NaN and ±infinity counted
// as null: JSON has neither); Boolean → "bool" ({"False": n, "True": m}, only values present);
// String → "string_label" when n_unique ≤ 10, or n_unique / num_examples ≤ 0.2 and n_unique
// ≤ 1000 (n_unique counting null as one value, as the Python viewer does), else
// "string_text" (numbers over character lengths); List (LIST, ARRAY) → "list" (over list
// lengths); Date, Timestamp → "datetime" (seconds from the minimum; strings
// "YYYY-MM-DD HH:MM:SS", "+0000" added for TIMESTAMP WITH TIME ZONE, std as Python prints a
// timedelta). Other types (STRUCT, MAP, BLOB, TIME, INTERVAL, UUID, NULL) get no entry;
// integers outside int64 are counted as floats ("float"). Errors: the engine's, passed
// through (Unavailable past a deadline, Unprocessable for an unreadable file, Forbidden for
// a file outside the allowed directories, PayloadTooLarge for label frequencies past the
// result cap).
Result<boost::json::object> ComputeStatistics(duckdb::Engine& engine,
                                              const std::vector<std::string>& parquet_paths,
                                              const std::vector<duckdb::Column>& columns,
                                              bool partial, const StatisticsOptions& options = {});

// The histogram edges of integers in [min, max] (§4.10): bin_size = ceil((max − min + 1) /
// 10), edges min, min + bin_size, … below max, then max; [min, max] when min == max.
std::vector<int64_t> IntegerBinEdges(int64_t min, int64_t max);

// The histogram edges of floats in [min, max] (§4.10): the values of numpy.arange(min, max,
// (max − min) / 10), to the last bit, then max; [min, max] when min == max. Not rounded.
std::vector<double> FloatBinEdges(double min, double max);

// `x` rounded to 5 decimals as numpy.round does (half to even on x · 10⁵).
double Round5(double x);

// A duration of `seconds` (≥ 0) as Python's str(datetime.timedelta) writes it:
// "0:00:01", "1 day, 2:03:04.500000", "11 days, 4:57:32.322450".
std::string TimedeltaString(double seconds);

}  // namespace hangar::services::viewer
