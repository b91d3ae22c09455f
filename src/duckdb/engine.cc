// Engine::Run: prepare, bind, execute under the watchdog, read the result chunk by chunk.

#include <limits>
#include <string>

#include "duckdb/engine_state.h"

namespace hangar::duckdb {
namespace {

using internal::ChunkHandle;
using internal::FromDuckDb;
using internal::LogicalTypeHandle;
using internal::PendingHandle;
using internal::PreparedHandle;
using internal::ResultHandle;
using internal::TypeInfo;
using internal::ValueHandle;
using Clock = std::chrono::steady_clock;

Error DeadlineError(std::chrono::milliseconds timeout) {
  return MakeError(ErrorCode::Unavailable, "query took too long (over its " +
                                               std::to_string(timeout.count()) +
                                               " ms deadline) and was interrupted");
}

// The statement kinds a query may be: nothing that attaches, loads, sets, or keeps state in
// a pooled connection (transactions, prepared names, temporary tables).
Result<void> CheckStatement(duckdb_prepared_statement ps, bool allow_writes) {
  duckdb_statement_type type = duckdb_prepared_statement_type(ps);
  if (type == DUCKDB_STATEMENT_TYPE_SELECT || type == DUCKDB_STATEMENT_TYPE_EXPLAIN ||
      (type == DUCKDB_STATEMENT_TYPE_COPY && allow_writes))
    return {};
  return MakeError(ErrorCode::Forbidden,
                   std::string("the DuckDB engine does not run ") +
                       std::string(internal::StatementTypeName(type)) + " statements (only " +
                       (allow_writes ? "SELECT, EXPLAIN and COPY" : "SELECT and EXPLAIN") + ")");
}

Result<void> BindList(duckdb_prepared_statement ps, idx_t at, const StringList& list) {
  std::vector<ValueHandle> owned;
  std::vector<duckdb_value> items;
  for (const std::string& s : list.items) {
    owned.emplace_back(duckdb_create_varchar_length(s.data(), s.size()));
    if (!owned.back()) return MakeError(ErrorCode::Unprocessable, "a list item is not UTF-8");
    items.push_back(owned.back().get());
  }
  LogicalTypeHandle varchar(duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR));
  ValueHandle value(duckdb_create_list_value(varchar.get(), items.data(), items.size()));
  if (duckdb_bind_value(ps, at, value.get()) != DuckDBSuccess)
    return MakeError(ErrorCode::Internal, "cannot bind a list parameter");
  return {};
}

duckdb_state BindOne(duckdb_prepared_statement ps, idx_t at, const Param::Variant& v) {
  if (std::holds_alternative<std::nullptr_t>(v)) return duckdb_bind_null(ps, at);
  if (const auto* b = std::get_if<bool>(&v)) return duckdb_bind_boolean(ps, at, *b);
  if (const auto* i = std::get_if<int64_t>(&v)) return duckdb_bind_int64(ps, at, *i);
  if (const auto* u = std::get_if<uint64_t>(&v)) {
    if (*u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return duckdb_bind_int64(ps, at, static_cast<int64_t>(*u));
    return duckdb_bind_uint64(ps, at, *u);
  }
  if (const auto* d = std::get_if<double>(&v)) return duckdb_bind_double(ps, at, *d);
  if (const auto* s = std::get_if<std::string>(&v))
    return duckdb_bind_varchar_length(ps, at, s->data(), s->size());
  const auto& blob = std::get<Blob>(v);
  return duckdb_bind_blob(ps, at, blob.bytes.data(), blob.bytes.size());
}

Result<void> Bind(duckdb_prepared_statement ps, const std::vector<Param>& params) {
  idx_t expected = duckdb_nparams(ps);
  if (expected != params.size())
    return MakeError(ErrorCode::Internal, "query has " + std::to_string(expected) +
                                              " parameters but " + std::to_string(params.size()) +
                                              " were given");
  for (idx_t i = 0; i < params.size(); ++i) {
    const Param::Variant& v = params[i].value();
    if (const auto* list = std::get_if<StringList>(&v)) {
      HANGAR_TRY(BindList(ps, i + 1, *list));
    } else if (BindOne(ps, i + 1, v) != DuckDBSuccess) {
      // The one way binding a value of these types fails: text that is not UTF-8.
      return MakeError(ErrorCode::Unprocessable,
                       "parameter " + std::to_string(i + 1) + " is not valid UTF-8 text");
    }
  }
  return {};
}

// The columns of `r`, and how to read each.
Result<void> ReadColumns(duckdb_result* r, QueryResult& out, std::vector<TypeInfo>& types) {
  idx_t n = duckdb_column_count(r);
  for (idx_t c = 0; c < n; ++c) {
    std::string name = duckdb_column_name(r, c);
    LogicalTypeHandle type(duckdb_column_logical_type(r, c));
    HANGAR_ASSIGN_OR_RETURN(TypeInfo info, internal::DescribeType(type.get(), name));
    out.columns.push_back(Column{std::move(name), info.kind, info.sql_type});
    types.push_back(std::move(info));
  }
  return {};
}

struct ReadLimits {
  Clock::time_point deadline;
  std::chrono::milliseconds timeout;
  uint64_t max_bytes;
  OnCap on_cap;
};

// Reads every chunk of the streaming result `r` into `out`, within `limits`.
Result<void> ReadRows(duckdb_result* r, const ReadLimits& limits, QueryResult& out) {
  std::vector<TypeInfo> types;
  HANGAR_TRY(ReadColumns(r, out, types));
  for (;;) {
    ChunkHandle chunk(duckdb_fetch_chunk(*r));
    if (!chunk) break;  // the end, or an error (below)
    idx_t rows = duckdb_data_chunk_get_size(chunk.get());
    std::vector<duckdb_vector> vectors;
    for (idx_t c = 0; c < types.size(); ++c)
      vectors.push_back(duckdb_data_chunk_get_vector(chunk.get(), c));
    for (idx_t row = 0; row < rows; ++row) {
      std::vector<Value> cells;
      cells.reserve(types.size());
      for (idx_t c = 0; c < types.size(); ++c)
        cells.push_back(internal::ReadCell(vectors[c], types[c], row));
      uint64_t bytes = ResultBytes(cells);
      if (out.bytes + bytes > limits.max_bytes) {
        if (limits.on_cap == OnCap::Truncate) {
          out.truncated = true;
          return {};  // destroying the result cancels the rest of the query
        }
        return MakeError(
            ErrorCode::PayloadTooLarge,
            "query result is over its cap of " + std::to_string(limits.max_bytes) + " bytes");
      }
      out.bytes += bytes;
      out.rows.push_back(std::move(cells));
    }
    // The watchdog interrupts DuckDB's work; this stops a query whose rows keep coming.
    if (Clock::now() > limits.deadline) return DeadlineError(limits.timeout);
  }
  const char* error = duckdb_result_error(r);
  if (error) return FromDuckDb(duckdb_result_error_type(r), error);
  return {};
}

Result<QueryResult> Execute(duckdb_connection c, const Query& q, const ReadLimits& limits,
                            bool allow_writes) {
  PreparedHandle ps;
  if (duckdb_prepare(c, q.sql.str().c_str(), ps.out()) != DuckDBSuccess) {
    std::string message = duckdb_prepare_error(ps.get());
    return FromDuckDb(internal::ErrorTypeOfMessage(message), message);
  }
  HANGAR_TRY(CheckStatement(ps.get(), allow_writes));
  HANGAR_TRY(Bind(ps.get(), q.params));
  PendingHandle pending;
  if (duckdb_pending_prepared_streaming(ps.get(), pending.out()) != DuckDBSuccess) {
    std::string message = duckdb_pending_error(pending.get());
    return FromDuckDb(internal::ErrorTypeOfMessage(message), message);
  }
  ResultHandle r;
  if (duckdb_execute_pending(pending.get(), r.out()) != DuckDBSuccess)
    return FromDuckDb(duckdb_result_error_type(r.get()), duckdb_result_error(r.get()));
  QueryResult out;
  HANGAR_TRY(ReadRows(r.get(), limits, out));
  return out;
}

}  // namespace

uint64_t ResultBytes(const std::vector<Value>& row) {
  uint64_t bytes = 16 * row.size();
  for (const Value& v : row) {
    if (const auto* s = std::get_if<std::string>(&v)) bytes += s->size();
    if (const auto* b = std::get_if<Blob>(&v)) bytes += b->bytes.size();
  }
  return bytes;
}

Result<QueryResult> Engine::Run(const Query& query) {
  State& s = *state_;
  ReadLimits limits;
  limits.timeout = query.timeout.count() > 0 ? query.timeout : s.options.default_timeout;
  limits.deadline = Clock::now() + limits.timeout;
  limits.max_bytes =
      query.max_result_bytes > 0 ? query.max_result_bytes : s.options.default_max_result_bytes;
  limits.on_cap = query.on_cap;
  // duckdb_prepare reads the text up to its first NUL: refuse what it would cut short.
  if (query.sql.str().find('\0') != std::string::npos)
    return MakeError(ErrorCode::Unprocessable, "query text holds a NUL byte (in a quoted name?)");
  HANGAR_ASSIGN_OR_RETURN(auto lease, s.pool.Acquire(limits.deadline));
  uint64_t ticket = s.watchdog.Arm(lease.get(), limits.deadline);
  Result<QueryResult> result = Execute(lease.get(), query, limits, s.options.allow_writes);
  // Disarmed before the connection goes back (the Lease, below): no stray interrupt can
  // reach the next query on it.
  bool interrupted = s.watchdog.Disarm(ticket);
  if (!result && interrupted) return DeadlineError(limits.timeout);
  return result;
}

}  // namespace hangar::duckdb
