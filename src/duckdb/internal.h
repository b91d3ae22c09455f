#pragma once
// Internal to src/duckdb: the one header that includes DuckDB's C API (duckdb.h), RAII
// owners of its handles, and the helpers engine.cc builds on (types.cc, cells.cc,
// json_cells.cc, temporal.cc, errors.cc).

#include <duckdb.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "duckdb/value.h"

namespace hangar::duckdb::internal {

// Owns one DuckDB handle `T` (a pointer type), destroyed with `Destroy(&handle)` as the C
// API's destroy functions take it. Move-only.
template <typename T, auto Destroy>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      Reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~Handle() { Reset(); }
  T get() const { return h_; }
  T* out() {  // for the C API's out-parameters; frees what was held
    Reset();
    return &h_;
  }
  explicit operator bool() const { return h_ != nullptr; }

 private:
  void Reset() {
    if (h_) Destroy(&h_);
    h_ = nullptr;
  }
  T h_ = nullptr;
};

using DatabaseHandle = Handle<duckdb_database, duckdb_close>;
using ConnectionHandle = Handle<duckdb_connection, duckdb_disconnect>;
using ConfigHandle = Handle<duckdb_config, duckdb_destroy_config>;
using PreparedHandle = Handle<duckdb_prepared_statement, duckdb_destroy_prepare>;
using PendingHandle = Handle<duckdb_pending_result, duckdb_destroy_pending>;
using ChunkHandle = Handle<duckdb_data_chunk, duckdb_destroy_data_chunk>;
using LogicalTypeHandle = Handle<duckdb_logical_type, duckdb_destroy_logical_type>;
using ValueHandle = Handle<duckdb_value, duckdb_destroy_value>;

// Owns a duckdb_result (a struct, not a pointer); destroyed once it was filled in.
class ResultHandle {
 public:
  ResultHandle() = default;
  ResultHandle(const ResultHandle&) = delete;
  ResultHandle& operator=(const ResultHandle&) = delete;
  ~ResultHandle() {
    if (filled_) duckdb_destroy_result(&r_);
  }
  duckdb_result* out() {  // once
    filled_ = true;
    return &r_;
  }
  duckdb_result* get() { return &r_; }

 private:
  duckdb_result r_{};
  bool filled_ = false;
};

// A string DuckDB allocated (duckdb_free), copied; null gives "".
std::string TakeString(char* s);

// ---- errors.cc

// The Hangar error for a DuckDB error of `type` with DuckDB's `message` (the codes are listed
// at Engine::Run). The echo of the SQL ("LINE 1: …") and DuckDB's tuning advice are cut.
Error FromDuckDb(duckdb_error_type type, std::string_view message);
// The error type DuckDB names at the start of `message` ("Binder Error: …"); INVALID when
// it names none it is known to write (duckdb_prepare gives only the message).
duckdb_error_type ErrorTypeOfMessage(std::string_view message);
// "SELECT", "ATTACH", ... for messages.
std::string_view StatementTypeName(duckdb_statement_type type);

// ---- types.cc

// What a result column's cells are and how to read them: a tree mirroring the logical type.
struct TypeInfo {
  duckdb_type id = DUCKDB_TYPE_INVALID;
  ColumnType kind = ColumnType::Null;
  std::string sql_type;
  uint8_t decimal_scale = 0;
  duckdb_type physical = DUCKDB_TYPE_INVALID;  // DECIMAL's and ENUM's storage type
  std::vector<std::string> labels;             // ENUM: its labels by index
  std::vector<std::string> child_names;        // STRUCT, UNION: member names
  std::vector<TypeInfo> children;              // LIST/ARRAY: 1, MAP: key and value, STRUCT
  uint64_t array_size = 0;                     // ARRAY
};

// The TypeInfo of `type`. Errors: Internal for a type the engine does not read (BIGNUM,
// VARINT, ANY, ...), naming `column`.
Result<TypeInfo> DescribeType(duckdb_logical_type type, std::string_view column);

// ---- cells.cc

// The cell at `row` of the flat vector `v` of type `t`.
Value ReadCell(duckdb_vector v, const TypeInfo& t, uint64_t row);
// Whether `row` of `v` holds a value (not NULL).
inline bool IsValid(duckdb_vector v, uint64_t row) {
  uint64_t* validity = duckdb_vector_get_validity(v);
  return validity == nullptr || duckdb_validity_row_is_valid(validity, row);
}
// Text of a VARCHAR or BLOB cell at `row` of `v`.
std::string_view StringAt(duckdb_vector v, uint64_t row);
// Appends a scalar (not nested), non-null cell of type `t` as JSON: numbers bare (decimals
// exact, NaN and infinities as null), text and temporal values as strings, blobs as base64.
void AppendScalar(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row);

// ---- json_cells.cc

// Appends the cell at `row` of `v` (any type, nested ones recursively) as JSON text.
void AppendJson(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row);
// Appends `s` as a JSON string, quotes included (RFC 8259 §7; bytes >= 0x80 kept).
void AppendJsonString(std::string& out, std::string_view s);

// ---- temporal.cc: ISO 8601 text of DuckDB's temporal values (Python's isoformat shapes:
// no fraction when it is 0, else 6 digits, 9 for nanoseconds).

void AppendDate(std::string& out, int32_t days);                      // since 1970-01-01
void AppendTime(std::string& out, int64_t micros);                    // since midnight
void AppendTimeNs(std::string& out, int64_t nanos);                   // since midnight
void AppendTimestamp(std::string& out, int64_t micros);               // since the epoch
void AppendTimestampNs(std::string& out, int64_t nanos);              // since the epoch
void AppendTimeTz(std::string& out, duckdb_time_tz value);            // "10:57:45+02:00"
void AppendInterval(std::string& out, const duckdb_interval& value);  // "P1M2DT3.5S"

}  // namespace hangar::duckdb::internal
