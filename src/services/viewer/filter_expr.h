#pragma once
// The `where` and `orderby` parameters of /filter (dataset-viewer.md §4.6), parsed by a
// tokenizer and a recursive-descent parser of our own into SQL built only from literals of
// this module, quoted column names (duckdb::Identifier) and bound values (duckdb::Param):
// nothing a client wrote reaches the engine as SQL text. Pure functions, thread-safe.
//
// The language (keywords in any case; blanks between tokens are free):
//   where      := or ; or := and ( OR and )* ; and := unary ( AND unary )*
//   unary      := NOT unary | "(" or ")" | term predicate
//   predicate  := ( = | <> | != | < | <= | > | >= ) value
//               | [NOT] ( LIKE | ILIKE | GLOB ) value | [NOT] SIMILAR TO value
//               | IS [NOT] ( NULL | TRUE | FALSE )
//   term       := column | "(" column ")" | func "(" term ( "," literal )* ")"
//               | term "." func "(" [ literal ( "," literal )* ] ")"
//   column     := "name" ( "." "field" )*    names in double quotes, "" for a quote
//   value      := literal | true | false | null
//   literal    := 'text' ('' for a quote) | 123 | 1.5 | -123 | -1.5
//   orderby    := term [ ASC | DESC ]
// The first part of a column must name one of the split's columns (matched as DuckDB
// does, case-insensitively; an exact match wins); further parts are STRUCT fields, allowed
// only on a STRUCT column. func is one of lower, upper, length, abs, trim, ltrim, rtrim,
// round; its literal arguments are bound too. Integers bind as int64 (uint64 above
// INT64_MAX), decimals as double. A leading '-' on a number is accepted, unlike the
// reference (whose regex refuses negative numbers): the sign is part of the bound value,
// never SQL text, and `--` is refused anyway.
//
// Refused (InvalidParameter, "Parameter 'where' contains errors or invalid symbols", or
// 'orderby'): an empty or blank text, more than kMaxFilterBytes bytes, `;` `--` `/*` `*/`
// anywhere (§4.6 rule 1, inside strings too), a NUL byte, invalid UTF-8, a character
// outside the language, an unknown column or function, unbalanced quotes or parentheses,
// nesting deeper than kMaxFilterDepth, more than kMaxFilterTerms comparisons, and anything
// left over after the expression.
//
// What the engine may still refuse is the caller's to map to InvalidParameter (§4.6 rule 4):
// a type mismatch ("age" = 'abc'), an unknown STRUCT field, a bad SIMILAR TO pattern.

#include <cstddef>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "duckdb/sql.h"
#include "duckdb/value.h"

namespace hangar::services::viewer {

inline constexpr size_t kMaxFilterBytes = 10'000;  // longer `where`/`orderby` is refused
inline constexpr int kMaxFilterDepth = 64;         // parentheses, NOT and calls, nested
inline constexpr int kMaxFilterTerms = 256;        // comparisons in one `where`

// SQL with `?` placeholders and the values they take, in the order of the `?` in `sql`.
struct FilterClause {
  duckdb::SqlText sql;
  std::vector<duckdb::Param> params;
};

// `where` (what the client sent, percent-decoded) as a boolean SQL expression for after
// WHERE, over `columns` (the split's columns, as a query of its data reports them). It uses
// `?` placeholders: a caller composing a query binds `params` in order, after the params of
// any `?` written before it. Errors: InvalidParameter as the header says.
Result<FilterClause> ParseWhere(std::string_view where, const std::vector<duckdb::Column>& columns);

// `orderby` as one ORDER BY item, "<term> ASC" or "<term> DESC" (ASC when none is given),
// with `?` placeholders for its functions' arguments as in ParseWhere. The order is not
// total: a caller wanting stable pages appends its own tiebreak (the row index). Errors:
// InvalidParameter, with 'orderby' in the message.
Result<FilterClause> ParseOrderBy(std::string_view orderby,
                                  const std::vector<duckdb::Column>& columns);

}  // namespace hangar::services::viewer
