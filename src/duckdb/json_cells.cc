// Nested cells (LIST, ARRAY, STRUCT, MAP, UNION) as JSON text, recursively.

#include <cstring>

#include <boost/json/serialize.hpp>
#include <boost/json/string_view.hpp>

#include "duckdb/internal.h"

namespace hangar::duckdb::internal {
namespace {

void AppendList(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row) {
  duckdb_list_entry entry;
  std::memcpy(&entry, static_cast<const duckdb_list_entry*>(duckdb_vector_get_data(v)) + row,
              sizeof entry);
  duckdb_vector child = duckdb_list_vector_get_child(v);
  out += '[';
  for (uint64_t i = 0; i < entry.length; ++i) {
    if (i) out += ',';
    AppendJson(out, child, t.children[0], entry.offset + i);
  }
  out += ']';
}

void AppendArray(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row) {
  duckdb_vector child = duckdb_array_vector_get_child(v);
  out += '[';
  for (uint64_t i = 0; i < t.array_size; ++i) {
    if (i) out += ',';
    AppendJson(out, child, t.children[0], row * t.array_size + i);
  }
  out += ']';
}

void AppendStruct(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row) {
  out += '{';
  for (size_t i = 0; i < t.children.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, t.child_names[i]);
    out += ':';
    AppendJson(out, duckdb_struct_vector_get_child(v, i), t.children[i], row);
  }
  out += '}';
}

// A UNION is a STRUCT whose first child is the tag (UTINYINT) of the member that holds the
// value; the JSON is that member's value alone.
void AppendUnion(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row) {
  duckdb_vector tags = duckdb_struct_vector_get_child(v, 0);
  uint8_t tag = static_cast<const uint8_t*>(duckdb_vector_get_data(tags))[row];
  if (tag >= t.children.size()) {
    out += "null";
    return;
  }
  AppendJson(out, duckdb_struct_vector_get_child(v, tag + 1), t.children[tag], row);
}

// A MAP is a LIST of STRUCT(key, value); its JSON is an object, each key as a string (the
// JSON text of a key that is not a string).
void AppendMap(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row) {
  duckdb_list_entry entry;
  std::memcpy(&entry, static_cast<const duckdb_list_entry*>(duckdb_vector_get_data(v)) + row,
              sizeof entry);
  duckdb_vector pairs = duckdb_list_vector_get_child(v);
  duckdb_vector keys = duckdb_struct_vector_get_child(pairs, 0);
  duckdb_vector values = duckdb_struct_vector_get_child(pairs, 1);
  out += '{';
  for (uint64_t i = 0; i < entry.length; ++i) {
    uint64_t at = entry.offset + i;
    if (i) out += ',';
    if (t.children[0].kind == ColumnType::String) {
      AppendJson(out, keys, t.children[0], at);
    } else {
      std::string key;
      AppendJson(key, keys, t.children[0], at);
      AppendJsonString(out, key);
    }
    out += ':';
    AppendJson(out, values, t.children[1], at);
  }
  out += '}';
}

}  // namespace

void AppendJson(std::string& out, duckdb_vector v, const TypeInfo& t, uint64_t row) {
  if (!IsValid(v, row)) {
    out += "null";
    return;
  }
  switch (t.id) {
    case DUCKDB_TYPE_LIST:
      return AppendList(out, v, t, row);
    case DUCKDB_TYPE_ARRAY:
      return AppendArray(out, v, t, row);
    case DUCKDB_TYPE_STRUCT:
      return AppendStruct(out, v, t, row);
    case DUCKDB_TYPE_UNION:
      return AppendUnion(out, v, t, row);
    case DUCKDB_TYPE_MAP:
      return AppendMap(out, v, t, row);
    default:
      return AppendScalar(out, v, t, row);
  }
}

void AppendJsonString(std::string& out, std::string_view s) {
  // Boost.JSON's serializer escapes quotes, backslashes and control characters.
  out += boost::json::serialize(boost::json::string_view(s.data(), s.size()));
}

}  // namespace hangar::duckdb::internal
