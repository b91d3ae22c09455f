#include "duckdb/sql.h"

#include "duckdb/value.h"

namespace hangar::duckdb {

Identifier Identifier::Quote(std::string_view name) {
  // DuckDB's delimited identifier: inside double quotes only `"` is special, written twice
  // (no backslash escapes), so nothing in `name` can end the identifier early.
  std::string quoted;
  quoted.reserve(name.size() + 2);
  quoted += '"';
  for (char c : name) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return Identifier(std::move(quoted));
}

std::string_view ColumnTypeName(ColumnType type) {
  switch (type) {
    case ColumnType::Null:
      return "Null";
    case ColumnType::Boolean:
      return "Boolean";
    case ColumnType::Integer:
      return "Integer";
    case ColumnType::Float:
      return "Float";
    case ColumnType::Decimal:
      return "Decimal";
    case ColumnType::String:
      return "String";
    case ColumnType::Blob:
      return "Blob";
    case ColumnType::Date:
      return "Date";
    case ColumnType::Time:
      return "Time";
    case ColumnType::Timestamp:
      return "Timestamp";
    case ColumnType::Interval:
      return "Interval";
    case ColumnType::Uuid:
      return "Uuid";
    case ColumnType::List:
      return "List";
    case ColumnType::Struct:
      return "Struct";
    case ColumnType::Map:
      return "Map";
  }
  return "?";
}

}  // namespace hangar::duckdb
