#pragma once
// The SQL text the engine runs (issue 15): written in Hangar's source, never spliced from
// what a client sent. Values reach a query only as bound parameters (duckdb/value.h Param);
// the one kind of name that must appear in the text, a column name, goes through
// Identifier::Quote. The types make that a compile-time rule: an Sql comes only from a string
// literal (its constructor is consteval), and an SqlText only from Sqls and Identifiers.
//
//   SqlText sql("SELECT ");
//   sql += Identifier::Quote(column);           // user data, quoted as a name
//   sql += " FROM read_parquet(?) LIMIT ? OFFSET ?";
//   engine.Run(Query(std::move(sql), {files, int64_t{100}, offset}));

#include <string>
#include <string_view>

namespace hangar::duckdb {

// A piece of SQL written in Hangar's source: only a string literal (or another constant
// expression) converts to one, so a runtime std::string cannot. Holds a view of the literal.
class Sql {
 public:
  consteval Sql(const char* literal) : text_(literal) {}  // NOLINT: implicit on purpose
  constexpr std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

// A name quoted for DuckDB's SQL: the bytes of `name` between double quotes, each `"`
// doubled, so any name (quotes, semicolons, comments, newlines, non-ASCII) stays one
// identifier. DuckDB matches quoted identifiers case-insensitively, so "A" and "a" name the
// same column. An empty name or one holding a NUL byte still quotes, but no query runs with
// it: DuckDB refuses `""` (Unprocessable) and Engine::Run refuses SQL text holding a NUL.
class Identifier {
 public:
  // `name`: any bytes, as the column was called in the data.
  static Identifier Quote(std::string_view name);
  // The quoted form, `"na""me"`.
  const std::string& quoted() const { return quoted_; }

 private:
  explicit Identifier(std::string quoted) : quoted_(std::move(quoted)) {}
  std::string quoted_;
};

// SQL composed at run time from Sql pieces and Identifiers only. Not thread-safe (a value).
class SqlText {
 public:
  SqlText() = default;
  SqlText(Sql literal) : text_(literal.text()) {}  // NOLINT: implicit on purpose
  SqlText& operator+=(Sql literal) {
    text_.append(literal.text());
    return *this;
  }
  SqlText& operator+=(const Identifier& name) {
    text_.append(name.quoted());
    return *this;
  }
  // Another composed text: still only Sql pieces and Identifiers.
  SqlText& operator+=(const SqlText& more) {
    text_.append(more.text_);
    return *this;
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

}  // namespace hangar::duckdb
