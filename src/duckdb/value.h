#pragma once
// The values that cross the engine's boundary (issue 15): parameters bound into a query
// (Param) and the cells of its result (Value), with the column types a result reports.

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hangar::duckdb {

// Bytes of a BLOB, kept apart from text so a caller never mistakes one for the other.
struct Blob {
  std::string bytes;
  bool operator==(const Blob&) const = default;
};

// A result cell: null, BOOLEAN, an integer, a floating or decimal number, text, or bytes.
// Which alternative each ColumnType gives is listed at ColumnType.
using Value = std::variant<std::monostate, bool, int64_t, double, std::string, Blob>;

// What a result column holds: DuckDB's logical types, folded into the kinds a caller
// renders differently. Column::sql_type keeps the exact type ("DECIMAL(18,3)", "INTEGER[]").
enum class ColumnType : uint8_t {
  Null,       // SQL NULL literal type: always std::monostate
  Boolean,    // bool
  Integer,    // TINYINT … BIGINT, UTINYINT … UBIGINT, HUGEINT, UHUGEINT: int64_t, or the
              // decimal digits as std::string for a value outside int64's range
  Float,      // FLOAT, DOUBLE: double (NaN and infinities as they are)
  Decimal,    // DECIMAL(w,s): double, the nearest to the exact value
  String,     // VARCHAR, ENUM (its label): std::string
  Blob,       // BLOB: Blob; BIT: std::string of '0'/'1'
  Date,       // DATE: std::string "2024-02-19" (ISO 8601), or "infinity"/"-infinity"
  Time,       // TIME, TIME_NS, TIME WITH TIME ZONE: std::string "10:57:45[.ffffff][+hh:mm]"
  Timestamp,  // TIMESTAMP[_S|_MS|_NS]: std::string "2024-02-19T10:57:45[.ffffff]";
              // TIMESTAMP WITH TIME ZONE: the same in UTC with a "Z"
  Interval,   // INTERVAL: std::string, ISO 8601 duration "P1Y2M3DT4H5M6.5S"
  Uuid,       // UUID: std::string "0a1b…" (8-4-4-4-12 hex)
  List,       // LIST, ARRAY: std::string of JSON text "[1,2]"
  Struct,     // STRUCT, UNION: std::string of JSON text {"a":1}
  Map,        // MAP: std::string of JSON text, an object with the keys as strings
};

// Name of `type` as in ColumnType ("Integer"), for messages and tests.
std::string_view ColumnTypeName(ColumnType type);

// A list of strings bound as one parameter: a VARCHAR[] (read_parquet(?) of several files).
struct StringList {
  std::vector<std::string> items;
};

// A value bound to one `?` (or `$n`) of a Query. Implicit from the C++ types it holds, so
// parameter lists read as `{path, int64_t{100}, "text"}`: nullptr (NULL), bool, any integer
// (as BIGINT; an unsigned one over INT64_MAX as UBIGINT), float or double (as DOUBLE), text
// (as VARCHAR; it must be UTF-8), Blob (as BLOB), StringList (as VARCHAR[]).
class Param {
 public:
  using Variant =
      std::variant<std::nullptr_t, bool, int64_t, uint64_t, double, std::string, Blob, StringList>;

  Param(std::nullptr_t) : v_(nullptr) {}  // NOLINT: implicit on purpose (all of them)
  Param(bool b) : v_(b) {}                // NOLINT
  template <std::signed_integral T>
  Param(T i) : v_(int64_t{i}) {}  // NOLINT
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool>) Param(T u) : v_(uint64_t{u}) {}  // NOLINT
  Param(double d) : v_(d) {}                                        // NOLINT
  Param(float f) : v_(double{f}) {}                                 // NOLINT
  Param(std::string s) : v_(std::move(s)) {}                        // NOLINT
  Param(std::string_view s) : v_(std::string(s)) {}                 // NOLINT
  Param(const char* s) : v_(std::string(s)) {}                      // NOLINT
  Param(Blob b) : v_(std::move(b)) {}                               // NOLINT
  Param(StringList list) : v_(std::move(list)) {}                   // NOLINT

  const Variant& value() const { return v_; }

 private:
  Variant v_;
};

// One column of a result.
struct Column {
  std::string name;      // as DuckDB names it (an alias, or the expression's text)
  ColumnType type;       // which Value alternative its cells hold
  std::string sql_type;  // DuckDB's spelling of the full type: "BIGINT", "DECIMAL(18,3)",
                         // "VARCHAR[]", "STRUCT(\"a\" INTEGER)", "MAP(VARCHAR, BIGINT)"
};

}  // namespace hangar::duckdb
