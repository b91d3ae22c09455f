// DuckDB logical types → ColumnType, the SQL spelling, and what cells.cc needs to read them.

#include <string>

#include "duckdb/internal.h"
#include "duckdb/sql.h"

namespace hangar::duckdb::internal {
namespace {

struct Scalar {
  duckdb_type id;
  ColumnType kind;
  const char* name;
};

// The types without parameters, with their SQL names.
constexpr Scalar kScalars[] = {
    {DUCKDB_TYPE_SQLNULL, ColumnType::Null, "NULL"},
    {DUCKDB_TYPE_BOOLEAN, ColumnType::Boolean, "BOOLEAN"},
    {DUCKDB_TYPE_TINYINT, ColumnType::Integer, "TINYINT"},
    {DUCKDB_TYPE_SMALLINT, ColumnType::Integer, "SMALLINT"},
    {DUCKDB_TYPE_INTEGER, ColumnType::Integer, "INTEGER"},
    {DUCKDB_TYPE_BIGINT, ColumnType::Integer, "BIGINT"},
    {DUCKDB_TYPE_HUGEINT, ColumnType::Integer, "HUGEINT"},
    {DUCKDB_TYPE_UTINYINT, ColumnType::Integer, "UTINYINT"},
    {DUCKDB_TYPE_USMALLINT, ColumnType::Integer, "USMALLINT"},
    {DUCKDB_TYPE_UINTEGER, ColumnType::Integer, "UINTEGER"},
    {DUCKDB_TYPE_UBIGINT, ColumnType::Integer, "UBIGINT"},
    {DUCKDB_TYPE_UHUGEINT, ColumnType::Integer, "UHUGEINT"},
    {DUCKDB_TYPE_FLOAT, ColumnType::Float, "FLOAT"},
    {DUCKDB_TYPE_DOUBLE, ColumnType::Float, "DOUBLE"},
    {DUCKDB_TYPE_VARCHAR, ColumnType::String, "VARCHAR"},
    {DUCKDB_TYPE_BLOB, ColumnType::Blob, "BLOB"},
    {DUCKDB_TYPE_BIT, ColumnType::Blob, "BIT"},
    {DUCKDB_TYPE_DATE, ColumnType::Date, "DATE"},
    {DUCKDB_TYPE_TIME, ColumnType::Time, "TIME"},
    {DUCKDB_TYPE_TIME_NS, ColumnType::Time, "TIME_NS"},
    {DUCKDB_TYPE_TIME_TZ, ColumnType::Time, "TIME WITH TIME ZONE"},
    {DUCKDB_TYPE_TIMESTAMP, ColumnType::Timestamp, "TIMESTAMP"},
    {DUCKDB_TYPE_TIMESTAMP_S, ColumnType::Timestamp, "TIMESTAMP_S"},
    {DUCKDB_TYPE_TIMESTAMP_MS, ColumnType::Timestamp, "TIMESTAMP_MS"},
    {DUCKDB_TYPE_TIMESTAMP_NS, ColumnType::Timestamp, "TIMESTAMP_NS"},
    {DUCKDB_TYPE_TIMESTAMP_TZ, ColumnType::Timestamp, "TIMESTAMP WITH TIME ZONE"},
    {DUCKDB_TYPE_INTERVAL, ColumnType::Interval, "INTERVAL"},
    {DUCKDB_TYPE_UUID, ColumnType::Uuid, "UUID"},
};

// Members of a STRUCT (`is_union` false) or UNION, their names and types described.
Result<void> DescribeMembers(duckdb_logical_type type, bool is_union, std::string_view column,
                             TypeInfo& info) {
  idx_t n = is_union ? duckdb_union_type_member_count(type) : duckdb_struct_type_child_count(type);
  info.sql_type = is_union ? "UNION(" : "STRUCT(";
  for (idx_t i = 0; i < n; ++i) {
    std::string name = TakeString(is_union ? duckdb_union_type_member_name(type, i)
                                           : duckdb_struct_type_child_name(type, i));
    LogicalTypeHandle child(is_union ? duckdb_union_type_member_type(type, i)
                                     : duckdb_struct_type_child_type(type, i));
    HANGAR_ASSIGN_OR_RETURN(TypeInfo child_info, DescribeType(child.get(), column));
    info.sql_type += (i ? ", " : "") + Identifier::Quote(name).quoted() + " " + child_info.sql_type;
    info.child_names.push_back(std::move(name));
    info.children.push_back(std::move(child_info));
  }
  info.sql_type += ")";
  return {};
}

// The parameterised and nested types: DECIMAL, ENUM, LIST, ARRAY, MAP, STRUCT, UNION.
Result<void> DescribeComposite(duckdb_logical_type type, std::string_view column, TypeInfo& info) {
  switch (info.id) {
    case DUCKDB_TYPE_DECIMAL:
      info.kind = ColumnType::Decimal;
      info.decimal_scale = duckdb_decimal_scale(type);
      info.physical = duckdb_decimal_internal_type(type);
      info.sql_type = "DECIMAL(" + std::to_string(duckdb_decimal_width(type)) + "," +
                      std::to_string(info.decimal_scale) + ")";
      return {};
    case DUCKDB_TYPE_ENUM: {
      info.kind = ColumnType::String;
      info.physical = duckdb_enum_internal_type(type);
      uint32_t n = duckdb_enum_dictionary_size(type);
      for (uint32_t i = 0; i < n; ++i)
        info.labels.push_back(TakeString(duckdb_enum_dictionary_value(type, i)));
      info.sql_type = "ENUM(" + std::to_string(n) + " labels)";
      return {};
    }
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_ARRAY: {
      bool list = info.id == DUCKDB_TYPE_LIST;
      info.kind = ColumnType::List;
      LogicalTypeHandle child(list ? duckdb_list_type_child_type(type)
                                   : duckdb_array_type_child_type(type));
      HANGAR_ASSIGN_OR_RETURN(TypeInfo child_info, DescribeType(child.get(), column));
      if (!list) info.array_size = duckdb_array_type_array_size(type);
      info.sql_type = child_info.sql_type +
                      (list ? std::string("[]") : "[" + std::to_string(info.array_size) + "]");
      info.children.push_back(std::move(child_info));
      return {};
    }
    case DUCKDB_TYPE_MAP: {
      info.kind = ColumnType::Map;
      LogicalTypeHandle key(duckdb_map_type_key_type(type));
      LogicalTypeHandle value(duckdb_map_type_value_type(type));
      HANGAR_ASSIGN_OR_RETURN(TypeInfo key_info, DescribeType(key.get(), column));
      HANGAR_ASSIGN_OR_RETURN(TypeInfo value_info, DescribeType(value.get(), column));
      info.sql_type = "MAP(" + key_info.sql_type + ", " + value_info.sql_type + ")";
      info.children.push_back(std::move(key_info));
      info.children.push_back(std::move(value_info));
      return {};
    }
    case DUCKDB_TYPE_STRUCT:
    case DUCKDB_TYPE_UNION:
      info.kind = ColumnType::Struct;
      return DescribeMembers(type, info.id == DUCKDB_TYPE_UNION, column, info);
    default:
      return MakeError(ErrorCode::Internal, "column '" + std::string(column) +
                                                "' has a DuckDB type (id " +
                                                std::to_string(info.id) +
                                                ") the engine does not read; cast it in the query");
  }
}

}  // namespace

Result<TypeInfo> DescribeType(duckdb_logical_type type, std::string_view column) {
  TypeInfo info;
  info.id = duckdb_get_type_id(type);
  bool scalar = false;
  for (const Scalar& s : kScalars) {
    if (s.id != info.id) continue;
    info.kind = s.kind;
    info.sql_type = s.name;
    scalar = true;
  }
  if (!scalar) HANGAR_TRY(DescribeComposite(type, column, info));
  // An alias (JSON is VARCHAR under the alias "JSON") is the name DuckDB shows.
  std::string alias = TakeString(duckdb_logical_type_get_alias(type));
  if (!alias.empty()) info.sql_type = alias;
  return info;
}

}  // namespace hangar::duckdb::internal
