// /filter's `where` and `orderby` (services::viewer::ParseWhere / ParseOrderBy,
// dataset-viewer.md §4.6) are a client's bytes that become SQL. The whole input is parsed as
// both, over a fixed column list. A refusal must be InvalidParameter with the one message; an
// accepted clause must hold nothing of the input outside quoted identifiers: outside them
// only the parser's own keywords, function names and punctuation, no string or number
// literal, and exactly one `?` per bound parameter.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "services/viewer/filter_expr.h"

using namespace hangar;
using hangar::duckdb::Column;
using hangar::duckdb::ColumnType;

namespace {

const std::vector<Column>& Columns() {
  static const std::vector<Column> columns = {
      {"id", ColumnType::Integer, "BIGINT"},
      {"name", ColumnType::String, "VARCHAR"},
      {"Score", ColumnType::Float, "DOUBLE"},
      {"meta", ColumnType::Struct, "STRUCT(lang VARCHAR, n INTEGER)"},
      {"my \"col\"", ColumnType::String, "VARCHAR"},
      {"", ColumnType::String, "VARCHAR"},
  };
  return columns;
}

bool IsWordChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (c >= '0' && c <= '9');
}

// Checks the SQL text outside its quoted identifiers; returns the number of `?` there.
size_t CheckSqlText(const std::string& sql) {
  // clang-format off
  static const std::set<std::string, std::less<>> kWords = {
      "NOT", "AND", "OR", "IS", "NULL", "TRUE", "FALSE", "LIKE", "ILIKE", "GLOB", "SIMILAR",
      "TO", "ASC", "DESC", "lower", "upper", "length", "abs", "trim", "ltrim", "rtrim",
      "round", "CAST", "AS", "INTEGER", "regexp_full_match"};
  // clang-format on
  const std::string_view kPunctuation = " ()<>=.,?";
  size_t placeholders = 0;
  for (size_t i = 0; i < sql.size();) {
    char c = sql[i];
    if (c == '"') {  // a quoted identifier: "" inside, and it must close
      size_t j = i + 1;
      for (; j < sql.size(); ++j) {
        if (sql[j] != '"') continue;
        if (j + 1 < sql.size() && sql[j + 1] == '"') {
          ++j;
          continue;
        }
        break;
      }
      FUZZ_CHECK(j < sql.size());
      i = j + 1;
    } else if (IsWordChar(c)) {
      size_t j = i;
      while (j < sql.size() && IsWordChar(sql[j])) ++j;
      FUZZ_CHECK(kWords.count(std::string_view(sql).substr(i, j - i)) == 1);
      i = j;
    } else {
      FUZZ_CHECK(kPunctuation.find(c) != std::string_view::npos);
      if (c == '?') ++placeholders;
      ++i;
    }
  }
  return placeholders;
}

void Check(const Result<services::viewer::FilterClause>& r, std::string_view param) {
  if (!r) {
    FUZZ_CHECK(r.error().code == ErrorCode::InvalidParameter);
    FUZZ_CHECK(r.error().message ==
               "Parameter '" + std::string(param) + "' contains errors or invalid symbols");
    return;
  }
  FUZZ_CHECK(!r->sql.str().empty());
  FUZZ_CHECK(CheckSqlText(r->sql.str()) == r->params.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input = fuzz::AsText(data, size);
  Check(services::viewer::ParseWhere(input, Columns()), "where");
  Check(services::viewer::ParseOrderBy(input, Columns()), "orderby");
  return 0;
}
