// DuckDB's error types mapped to the catalog (engine.h, Engine::Run lists the codes).

#include "duckdb/internal.h"

namespace hangar::duckdb::internal {
namespace {

ErrorCode CodeOf(duckdb_error_type type) {
  switch (type) {
    case DUCKDB_ERROR_INTERRUPT:  // the deadline's watchdog (engine.cc words that message)
    case DUCKDB_ERROR_OUT_OF_MEMORY:
      return ErrorCode::Unavailable;
    case DUCKDB_ERROR_PERMISSION:  // the sandbox: a path outside, an extension
      return ErrorCode::Forbidden;
    // The data, or a value a client gave, does not fit what the query asks of it.
    case DUCKDB_ERROR_OUT_OF_RANGE:
    case DUCKDB_ERROR_CONVERSION:
    case DUCKDB_ERROR_DECIMAL:
    case DUCKDB_ERROR_MISMATCH_TYPE:
    case DUCKDB_ERROR_DIVIDE_BY_ZERO:
    case DUCKDB_ERROR_OBJECT_SIZE:
    case DUCKDB_ERROR_INVALID_TYPE:
    case DUCKDB_ERROR_CATALOG:  // an unknown column or function named through user data
    case DUCKDB_ERROR_BINDER:
    case DUCKDB_ERROR_CONSTRAINT:
    case DUCKDB_ERROR_INVALID_INPUT:  // a malformed CSV, JSON or Parquet file
    case DUCKDB_ERROR_EXPRESSION:
      return ErrorCode::Unprocessable;
    default:  // parser, planner, IO, internal, fatal, ...: our SQL or the engine
      return ErrorCode::Internal;
  }
}

// `message` without what follows `marker` (when present).
std::string_view CutAt(std::string_view message, std::string_view marker) {
  size_t at = message.find(marker);
  return at == std::string_view::npos ? message : message.substr(0, at);
}

// The message prefixes DuckDB writes for each error type ("Binder Error: ..."), for the
// one call whose error comes without its type (duckdb_prepare).
struct Prefix {
  std::string_view text;
  duckdb_error_type type;
};
constexpr Prefix kPrefixes[] = {
    {"Parser Error:", DUCKDB_ERROR_PARSER},
    {"Syntax Error:", DUCKDB_ERROR_SYNTAX},
    {"Binder Error:", DUCKDB_ERROR_BINDER},
    {"Catalog Error:", DUCKDB_ERROR_CATALOG},
    {"Permission Error:", DUCKDB_ERROR_PERMISSION},
    {"Invalid Input Error:", DUCKDB_ERROR_INVALID_INPUT},
    {"Conversion Error:", DUCKDB_ERROR_CONVERSION},
    {"Out of Range Error:", DUCKDB_ERROR_OUT_OF_RANGE},
    {"Mismatch Type Error:", DUCKDB_ERROR_MISMATCH_TYPE},
    {"Invalid Type Error:", DUCKDB_ERROR_INVALID_TYPE},
    {"Out of Memory Error:", DUCKDB_ERROR_OUT_OF_MEMORY},
    {"INTERRUPT Error:", DUCKDB_ERROR_INTERRUPT},
    {"IO Error:", DUCKDB_ERROR_IO},
};

}  // namespace

duckdb_error_type ErrorTypeOfMessage(std::string_view message) {
  for (const Prefix& p : kPrefixes)
    if (message.substr(0, p.text.size()) == p.text) return p.type;
  return DUCKDB_ERROR_INVALID;
}

std::string TakeString(char* s) {
  if (!s) return {};
  std::string out(s);
  duckdb_free(s);
  return out;
}

Error FromDuckDb(duckdb_error_type type, std::string_view message) {
  // DuckDB echoes the statement ("\n\nLINE 1: SELECT …\n ^") and, for memory, advice to
  // raise settings the sandbox has locked; neither helps whoever reads the message.
  std::string_view m = CutAt(message, "\n\nLINE ");
  m = CutAt(m, "\n\nPossible solutions:");
  if (m.empty()) m = "DuckDB failed without a message";
  return MakeError(CodeOf(type), std::string(m));
}

std::string_view StatementTypeName(duckdb_statement_type type) {
  switch (type) {
    case DUCKDB_STATEMENT_TYPE_SELECT:
      return "SELECT";
    case DUCKDB_STATEMENT_TYPE_INSERT:
      return "INSERT";
    case DUCKDB_STATEMENT_TYPE_UPDATE:
      return "UPDATE";
    case DUCKDB_STATEMENT_TYPE_EXPLAIN:
      return "EXPLAIN";
    case DUCKDB_STATEMENT_TYPE_DELETE:
      return "DELETE";
    case DUCKDB_STATEMENT_TYPE_PREPARE:
      return "PREPARE";
    case DUCKDB_STATEMENT_TYPE_CREATE:
      return "CREATE";
    case DUCKDB_STATEMENT_TYPE_EXECUTE:
      return "EXECUTE";
    case DUCKDB_STATEMENT_TYPE_ALTER:
      return "ALTER";
    case DUCKDB_STATEMENT_TYPE_TRANSACTION:
      return "TRANSACTION";
    case DUCKDB_STATEMENT_TYPE_COPY:
      return "COPY";
    case DUCKDB_STATEMENT_TYPE_ANALYZE:
      return "ANALYZE";
    case DUCKDB_STATEMENT_TYPE_VARIABLE_SET:
      return "SET";
    case DUCKDB_STATEMENT_TYPE_CREATE_FUNC:
      return "CREATE FUNCTION";
    case DUCKDB_STATEMENT_TYPE_DROP:
      return "DROP";
    case DUCKDB_STATEMENT_TYPE_EXPORT:
      return "EXPORT";
    case DUCKDB_STATEMENT_TYPE_PRAGMA:
      return "PRAGMA";
    case DUCKDB_STATEMENT_TYPE_VACUUM:
      return "VACUUM";
    case DUCKDB_STATEMENT_TYPE_CALL:
      return "CALL";
    case DUCKDB_STATEMENT_TYPE_SET:
      return "SET";
    case DUCKDB_STATEMENT_TYPE_LOAD:
      return "LOAD/INSTALL";
    case DUCKDB_STATEMENT_TYPE_ATTACH:
      return "ATTACH";
    case DUCKDB_STATEMENT_TYPE_DETACH:
      return "DETACH";
    case DUCKDB_STATEMENT_TYPE_MULTI:
      return "MULTI";
    default:
      return "unknown";
  }
}

}  // namespace hangar::duckdb::internal
