// DuckDB type spellings → datasets features (features.h). The spellings are those of
// duckdb/types.cc: scalars by name, DECIMAL(w,s), ENUM(n labels), T[] and T[n], MAP(K, V),
// STRUCT("name" T, …) and UNION(…) with quoted member names, or an alias.

#include "services/viewer/features.h"

#include <array>
#include <charconv>
#include <optional>
#include <string>

namespace hangar::services::viewer {
namespace json = boost::json;

namespace {

// Nesting deeper than this reads as text: DuckDB's own types never come close.
constexpr int kMaxDepth = 64;

struct ScalarDtype {
  std::string_view sql;
  std::string_view dtype;
};

// Longest names first where one is a prefix of another ("TIMESTAMP WITH TIME ZONE").
constexpr std::array<ScalarDtype, 28> kScalars{{
    {"TIMESTAMP WITH TIME ZONE", "timestamp[us, tz=UTC]"},
    {"TIME WITH TIME ZONE", "time64[us]"},
    {"TIMESTAMP_NS", "timestamp[ns]"},
    {"TIMESTAMP_MS", "timestamp[ms]"},
    {"TIMESTAMP_S", "timestamp[s]"},
    {"TIMESTAMP", "timestamp[us]"},
    {"TIME_NS", "time64[ns]"},
    {"TIME", "time64[us]"},
    {"DATE", "date32"},
    {"INTERVAL", "duration[us]"},
    {"BOOLEAN", "bool"},
    {"TINYINT", "int8"},
    {"SMALLINT", "int16"},
    {"INTEGER", "int32"},
    {"BIGINT", "int64"},
    {"HUGEINT", "decimal128(38, 0)"},
    {"UTINYINT", "uint8"},
    {"USMALLINT", "uint16"},
    {"UINTEGER", "uint32"},
    {"UBIGINT", "uint64"},
    {"UHUGEINT", "decimal128(38, 0)"},
    {"FLOAT", "float32"},
    {"DOUBLE", "float64"},
    {"VARCHAR", "string"},
    {"BLOB", "binary"},
    {"BIT", "string"},
    {"UUID", "string"},
    {"NULL", "null"},
}};

json::object Value(std::string_view dtype) {
  return json::object{{"dtype", dtype}, {"_type", "Value"}};
}

// A recursive-descent reader of one spelling; a failure anywhere gives nullopt.
class TypeReader {
 public:
  explicit TypeReader(std::string_view text) : s_(text) {}

  std::optional<json::value> Whole() {
    auto v = Type(0);
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  bool Eat(std::string_view token) {
    if (s_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  std::optional<uint64_t> Number() {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), n);
    if (ec != std::errc()) return std::nullopt;
    pos_ = end - s_.data();
    return n;
  }

  // A base type, then any number of `[]` / `[n]` suffixes.
  std::optional<json::value> Type(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    auto base = Base(depth);
    while (base && Eat("[")) {
      json::object list{{"feature", std::move(*base)}};
      if (!Eat("]")) {
        auto n = Number();
        if (!n || !Eat("]")) return std::nullopt;
        list["length"] = *n;
      }
      list["_type"] = "List";
      base = json::value(std::move(list));
    }
    return base;
  }

  std::optional<json::value> Base(int depth) {
    if (Eat("STRUCT(")) return Members(depth, false);
    if (Eat("UNION(")) return Members(depth, true);
    if (Eat("MAP(")) {
      if (!Type(depth + 1) || !Eat(", ") || !Type(depth + 1) || !Eat(")")) return std::nullopt;
      return json::value(json::object{{"_type", "Json"}});
    }
    if (Eat("DECIMAL(")) {
      auto w = Number();
      if (!w || !Eat(",")) return std::nullopt;
      auto scale = Number();
      if (!scale || !Eat(")")) return std::nullopt;
      std::string dtype = (*w > 38 ? "decimal256(" : "decimal128(") + std::to_string(*w) + ", " +
                          std::to_string(*scale) + ")";
      return json::value(Value(dtype));
    }
    if (Eat("ENUM(")) {
      // The labels are not in the spelling; the cells are the labels as text.
      if (!Number() || !Eat(" labels)")) return std::nullopt;
      return json::value(Value("string"));
    }
    for (const auto& scalar : kScalars)
      if (Eat(scalar.sql)) return json::value(Value(scalar.dtype));
    return Alias();
  }

  // An alias (JSON, a user type): a word; its cells are text.
  std::optional<json::value> Alias() {
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != ',' && s_[pos_] != ')' && s_[pos_] != '[') ++pos_;
    if (pos_ == start) return std::nullopt;
    return json::value(Value("string"));
  }

  // `"name" T, "name" T)`: a dict for a STRUCT; a UNION's cells are JSON of one member.
  std::optional<json::value> Members(int depth, bool is_union) {
    json::object dict;
    do {
      auto name = QuotedName();
      if (!name || !Eat(" ")) return std::nullopt;
      auto type = Type(depth + 1);
      if (!type) return std::nullopt;
      dict[*name] = std::move(*type);
    } while (Eat(", "));
    if (!Eat(")")) return std::nullopt;
    if (is_union) return json::value(json::object{{"_type", "Json"}});
    return json::value(std::move(dict));
  }

  // `"na""me"` → na"me.
  std::optional<std::string> QuotedName() {
    if (!Eat("\"")) return std::nullopt;
    std::string out;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c != '"') {
        out += c;
      } else if (pos_ < s_.size() && s_[pos_] == '"') {
        out += '"';
        ++pos_;
      } else {
        return out;
      }
    }
    return std::nullopt;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

json::value FeatureOf(std::string_view sql_type) {
  if (auto v = TypeReader(sql_type).Whole()) return std::move(*v);
  return Value("string");
}

json::array FeatureList(const std::vector<duckdb::Column>& columns) {
  json::array out;
  out.reserve(columns.size());
  for (size_t i = 0; i < columns.size(); ++i)
    out.push_back(json::object{
        {"feature_idx", i}, {"name", columns[i].name}, {"type", FeatureOf(columns[i].sql_type)}});
  return out;
}

json::object FeatureDict(const std::vector<duckdb::Column>& columns) {
  json::object out;
  for (const auto& c : columns) out[c.name] = FeatureOf(c.sql_type);
  return out;
}

bool IsIndexable(const json::value& feature) {
  const auto* o = feature.if_object();
  if (!o) return false;
  auto type = o->find("_type");
  if (type == o->end()) {  // a dict: any sub-feature
    for (const auto& kv : *o)
      if (IsIndexable(kv.value())) return true;
    return false;
  }
  const auto& t = type->value();
  if (t == "Value") {
    auto dtype = o->find("dtype");
    return dtype != o->end() && (dtype->value() == "string" || dtype->value() == "large_string");
  }
  if (t == "List" || t == "LargeList" || t == "Sequence") {
    auto f = o->find("feature");
    return f != o->end() && IsIndexable(f->value());
  }
  return t == "Json" || t == "Translation" || t == "TranslationVariableLanguages";
}

}  // namespace hangar::services::viewer
