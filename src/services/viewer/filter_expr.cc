#include "services/viewer/filter_expr.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/util.h"

namespace hangar::services::viewer {
namespace {

using duckdb::Column;
using duckdb::ColumnType;
using duckdb::Identifier;
using duckdb::Param;
using duckdb::Sql;
using duckdb::SqlText;

// ---- Tokens ----------------------------------------------------------------------------

enum class Tok : uint8_t {
  Name,    // "…": text unescaped
  Word,    // a bare word: keyword or function name, as written
  String,  // '…': text unescaped
  Number,  // [-][0-9][0-9.]*, as written
  LParen,
  RParen,
  Dot,
  Comma,
  Op,  // = <> != < <= > >=, as written
  End,
};

struct Token {
  Tok kind;
  std::string text;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWordStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsWordChar(char c) { return IsWordStart(c) || IsDigit(c); }

// §4.6 rule 1, applied to the whole text as the reference does (inside strings too), and
// the bytes no parameter may hold.
bool HasForbiddenBytes(std::string_view s) {
  constexpr std::string_view kForbidden[] = {";", "--", "/*", "*/", {"\0", 1}};
  for (std::string_view bad : kForbidden) {
    if (s.find(bad) != std::string_view::npos) return true;
  }
  return !IsUtf8(s);
}

// The text of a token quoted by `quote` starting at s[i] (the opening quote), a doubled
// quote standing for one; moves `i` past the closing quote. nullopt when it never closes.
std::optional<std::string> Quoted(std::string_view s, size_t& i, char quote) {
  std::string text;
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] != quote) {
      text += s[j];
    } else if (j + 1 < s.size() && s[j + 1] == quote) {
      text += quote;
      ++j;
    } else {
      i = j + 1;
      return text;
    }
  }
  return std::nullopt;
}

// The operator at s[i], if any: the longest of = <> != <= >= < >.
std::string_view OperatorAt(std::string_view s, size_t i) {
  for (std::string_view op : {"<>", "!=", "<=", ">=", "=", "<", ">"}) {
    if (s.substr(i, op.size()) == op) return op;
  }
  return {};
}

// `s` as tokens ending with End; nullopt on a character outside the language or an
// unclosed quote.
std::optional<std::vector<Token>> Tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '"' || c == '\'') {
      auto text = Quoted(s, i, c);
      if (!text) return std::nullopt;
      out.push_back({c == '"' ? Tok::Name : Tok::String, std::move(*text)});
    } else if (IsDigit(c) || (c == '-' && i + 1 < s.size() && IsDigit(s[i + 1]))) {
      size_t j = i + 1;
      while (j < s.size() && (IsDigit(s[j]) || s[j] == '.')) ++j;
      out.push_back({Tok::Number, std::string(s.substr(i, j - i))});
      i = j;
    } else if (IsWordStart(c)) {
      size_t j = i + 1;
      while (j < s.size() && IsWordChar(s[j])) ++j;
      out.push_back({Tok::Word, std::string(s.substr(i, j - i))});
      i = j;
    } else if (c == '(' || c == ')' || c == '.' || c == ',') {
      Tok kind = c == '(' ? Tok::LParen : c == ')' ? Tok::RParen : c == '.' ? Tok::Dot : Tok::Comma;
      out.push_back({kind, std::string(1, c)});
      ++i;
    } else if (std::string_view op = OperatorAt(s, i); !op.empty()) {
      out.push_back({Tok::Op, std::string(op)});
      i += op.size();
    } else {
      return std::nullopt;
    }
  }
  out.push_back({Tok::End, ""});
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && AsciiLower(a) == AsciiLower(b);
}

// A number token as the Param it binds: an integer as int64 (uint64 past INT64_MAX), a
// decimal ("1.5", digits on both sides of one dot) as double. nullopt for anything else
// ("1.", "1.2.3") or a value no 64-bit type holds.
std::optional<Param> NumberParam(std::string_view text) {
  size_t dot = text.find('.');
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (dot == std::string_view::npos) {
    int64_t i = 0;
    auto [end, ec] = std::from_chars(first, last, i);
    if (ec == std::errc() && end == last) return Param(i);
    if (text[0] == '-') return std::nullopt;
    auto u = ParseUint64(text);
    if (!u) return std::nullopt;
    return Param(*u);
  }
  if (dot + 1 == text.size() || text.find('.', dot + 1) != std::string_view::npos)
    return std::nullopt;
  double d = 0;
  auto [end, ec] = std::from_chars(first, last, d);
  if (ec != std::errc() || end != last) return std::nullopt;
  return Param(d);
}

// ---- Functions allowed on a column term ------------------------------------------------

struct Function {
  std::string_view name;
  Sql call;      // "lower(": the term and the arguments follow
  Sql arg;       // one literal argument after the term: ", ?" and how it is typed
  int max_args;  // literal arguments after the term
};

// round's digits are an INTEGER in DuckDB, which a BIGINT parameter does not narrow to.
constexpr Function kFunctions[] = {
    {"lower", "lower(", "", 0},    {"upper", "upper(", "", 0},
    {"length", "length(", "", 0},  {"abs", "abs(", "", 0},
    {"trim", "trim(", ", ?", 1},   {"ltrim", "ltrim(", ", ?", 1},
    {"rtrim", "rtrim(", ", ?", 1}, {"round", "round(", ", CAST(? AS INTEGER)", 1},
};

const Function* FindFunction(std::string_view name) {
  for (const Function& f : kFunctions) {
    if (EqualsIgnoreCase(f.name, name)) return &f;
  }
  return nullptr;
}

// ---- Parser ----------------------------------------------------------------------------

// Recursive descent over the tokens, writing SQL as it goes. Every `?` it writes binds the
// Param appended to params_ at the same moment, so params_ is in the order of the `?`s.
// Every method returns nullopt on a syntax error; the caller words the one message.
enum class PatternKind : uint8_t { None, Like, ILike, Glob };

// A regex metacharacter of RE2 (escaped when it stands for itself).
bool IsRegexMeta(char c) {
  return std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos;
}

// Whether DuckDB's own matcher runs `p` in linear time: wildcards only as a leading and a
// trailing "any run" (% or *), none inside and no single-character ones — DuckDB turns
// those into prefix, suffix and contains tests, faster than any regex.
bool LinearPattern(std::string_view p, PatternKind kind) {
  char any = kind == PatternKind::Glob ? '*' : '%';
  std::string_view others = kind == PatternKind::Glob ? "?[\\" : "_";
  std::string_view inner = p;
  if (!inner.empty() && inner.front() == any) inner.remove_prefix(1);
  if (!inner.empty() && inner.back() == any) inner.remove_suffix(1);
  return inner.find(any) == std::string_view::npos &&
         inner.find_first_of(others) == std::string_view::npos;
}

// The RE2 regex matching what the LIKE / ILIKE / GLOB pattern `p` matches, whole string:
// LIKE's % and _ (no escape character, as DuckDB's LIKE without ESCAPE), GLOB's * and ?
// and [classes] ([!…] negated; a [ without its ] stands for itself; \ escapes the next
// character). Every other character stands for itself.
std::string PatternRegex(std::string_view p, PatternKind kind) {
  std::string out = kind == PatternKind::ILike ? "(?si)" : "(?s)";
  auto literal = [&](char c) {
    if (IsRegexMeta(c)) out += '\\';
    out += c;
  };
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (kind != PatternKind::Glob) {
      if (c == '%')
        out += ".*";
      else if (c == '_')
        out += ".";
      else
        literal(c);
      continue;
    }
    if (c == '*') {
      out += ".*";
    } else if (c == '?') {
      out += ".";
    } else if (c == '\\' && i + 1 < p.size()) {
      literal(p[++i]);
    } else if (c == '[' && p.find(']', i + 2) != std::string_view::npos) {
      size_t end = p.find(']', i + 2);  // a ] right after [ (or [!) is a member
      std::string_view members = p.substr(i + 1, end - i - 1);
      out += '[';
      if (!members.empty() && members[0] == '!') {
        out += '^';
        members.remove_prefix(1);
      }
      for (char m : members) {
        if (m == '\\' || m == '[' || m == ']' || m == '^') out += '\\';
        out += m;
      }
      out += ']';
      i = end;
    } else {
      literal(c);
    }
  }
  return out;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, const std::vector<Column>& columns)
      : tokens_(std::move(tokens)), columns_(columns) {}

  std::optional<SqlText> Where() {
    auto sql = Or(0);
    if (!sql || Peek().kind != Tok::End) return std::nullopt;
    return sql;
  }

  std::optional<SqlText> OrderBy() {
    auto sql = Term(0);
    if (!sql) return std::nullopt;
    if (AcceptWord("desc")) {
      *sql += " DESC";
    } else {
      AcceptWord("asc");
      *sql += " ASC";
    }
    if (Peek().kind != Tok::End) return std::nullopt;
    return sql;
  }

  std::vector<Param> TakeParams() { return std::move(params_); }

 private:
  const Token& Peek(size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  bool IsWord(std::string_view keyword, size_t ahead = 0) const {
    return Peek(ahead).kind == Tok::Word && EqualsIgnoreCase(Peek(ahead).text, keyword);
  }
  bool Accept(Tok kind) {
    if (Peek().kind != kind) return false;
    ++pos_;
    return true;
  }
  bool AcceptWord(std::string_view keyword) {
    if (!IsWord(keyword)) return false;
    ++pos_;
    return true;
  }

  std::optional<SqlText> Or(int depth);
  std::optional<SqlText> And(int depth);
  std::optional<SqlText> Unary(int depth);
  std::optional<SqlText> Comparison(int depth);
  struct Test {
    SqlText sql;           // " = ?", " LIKE ?", " IS NOT NULL"
    bool negated = false;  // NOT before LIKE, ILIKE, GLOB or SIMILAR TO
    // A LIKE, ILIKE or GLOB of a text literal with wildcards inside, bound as the RE2 regex
    // it means: DuckDB's own matchers backtrack on those (a pattern of a few % took
    // minutes, past any deadline), RE2 runs in linear time. The term is then written
    // regexp_full_match(term, ?). Patterns LinearPattern accepts stay DuckDB's.
    bool regex = false;
  };
  std::optional<Test> Predicate();
  std::optional<SqlText> Value();
  bool Literal();
  std::optional<SqlText> Term(int depth);
  std::optional<SqlText> BaseTerm(int depth);
  std::optional<SqlText> Call(const Function& f, SqlText receiver, bool more_args);
  std::optional<SqlText> ColumnRef();
  bool ParenthesizedColumnAhead() const;
  const Column* FindColumn(std::string_view name) const;

  std::vector<Token> tokens_;
  const std::vector<Column>& columns_;
  size_t pos_ = 0;
  int terms_ = 0;
  std::vector<Param> params_;
};

std::optional<SqlText> Parser::Or(int depth) {
  auto sql = And(depth);
  while (sql && AcceptWord("or")) {
    auto next = And(depth);
    if (!next) return std::nullopt;
    *sql += " OR ";
    *sql += *next;
  }
  return sql;
}

std::optional<SqlText> Parser::And(int depth) {
  auto sql = Unary(depth);
  while (sql && AcceptWord("and")) {
    auto next = Unary(depth);
    if (!next) return std::nullopt;
    *sql += " AND ";
    *sql += *next;
  }
  return sql;
}

std::optional<SqlText> Parser::Unary(int depth) {
  if (depth >= kMaxFilterDepth) return std::nullopt;  // bounds the recursion (the stack)
  if (AcceptWord("not")) {
    auto inner = Unary(depth + 1);
    if (!inner) return std::nullopt;
    SqlText sql("NOT ");
    sql += *inner;  // a comparison or a group: in parentheses already
    return sql;
  }
  // `("a") = 1` is a parenthesized column (the reference's grammar allows it), not a group.
  if (Peek().kind == Tok::LParen && !ParenthesizedColumnAhead()) {
    ++pos_;
    auto inner = Or(depth + 1);
    if (!inner || !Accept(Tok::RParen)) return std::nullopt;
    SqlText sql("(");
    sql += *inner;
    sql += ")";
    return sql;
  }
  return Comparison(depth);
}

std::optional<SqlText> Parser::Comparison(int depth) {
  if (++terms_ > kMaxFilterTerms) return std::nullopt;
  auto term = Term(depth);
  if (!term) return std::nullopt;
  auto predicate = Predicate();
  if (!predicate) return std::nullopt;
  // A negated pattern test is written NOT (…): DuckDB has NOT LIKE but no NOT GLOB.
  SqlText sql(predicate->negated ? Sql("(NOT (") : Sql("("));
  if (predicate->regex) {
    sql += "regexp_full_match(";
    sql += *term;
    sql += ", ?)";
  } else {
    sql += *term;
    sql += predicate->sql;
  }
  sql += predicate->negated ? Sql("))") : Sql(")");
  return sql;
}

// The operator and the value after a term.
std::optional<Parser::Test> Parser::Predicate() {
  Test test;
  PatternKind pattern = PatternKind::None;
  SqlText& sql = test.sql;
  if (Peek().kind == Tok::Op) {
    std::string_view op = Peek().text;
    ++pos_;
    if (op == "=") sql = Sql(" = ");
    if (op == "<>" || op == "!=") sql = Sql(" <> ");
    if (op == "<") sql = Sql(" < ");
    if (op == "<=") sql = Sql(" <= ");
    if (op == ">") sql = Sql(" > ");
    if (op == ">=") sql = Sql(" >= ");
  } else if (AcceptWord("is")) {
    sql = Sql(" IS");
    if (AcceptWord("not")) sql += " NOT";
    if (AcceptWord("null")) {
      sql += " NULL";
    } else if (AcceptWord("true")) {
      sql += " TRUE";
    } else if (AcceptWord("false")) {
      sql += " FALSE";
    } else {
      return std::nullopt;
    }
    return test;  // no value follows
  } else {
    test.negated = AcceptWord("not");
    if (AcceptWord("like")) {
      sql += " LIKE ";
      pattern = PatternKind::Like;
    } else if (AcceptWord("ilike")) {
      sql += " ILIKE ";
      pattern = PatternKind::ILike;
    } else if (AcceptWord("glob")) {
      sql += " GLOB ";
      pattern = PatternKind::Glob;
    } else if (IsWord("similar") && IsWord("to", 1)) {
      pos_ += 2;
      sql += " SIMILAR TO ";
    } else {
      return std::nullopt;
    }
  }
  auto value = Value();
  if (!value) return std::nullopt;
  sql += *value;
  if (pattern != PatternKind::None && !params_.empty() && value->str() == "?") {
    const auto* text = std::get_if<std::string>(&params_.back().value());
    if (text && !LinearPattern(*text, pattern)) {
      params_.back() = PatternRegex(*text, pattern);
      test.regex = true;
    }
  }
  return test;
}

// A literal bound as "?", or TRUE / FALSE / NULL written as SQL keywords.
std::optional<SqlText> Parser::Value() {
  if (AcceptWord("true")) return SqlText("TRUE");
  if (AcceptWord("false")) return SqlText("FALSE");
  if (AcceptWord("null")) return SqlText("NULL");
  if (!Literal()) return std::nullopt;
  return SqlText("?");
}

// Binds the string or number token at the cursor (the caller writes its "?").
bool Parser::Literal() {
  const Token& t = Peek();
  if (t.kind == Tok::String) {
    params_.emplace_back(t.text);
  } else if (t.kind == Tok::Number) {
    auto number = NumberParam(t.text);
    if (!number) return false;
    params_.push_back(std::move(*number));
  } else {
    return false;
  }
  ++pos_;
  return true;
}

// A column, a function of a term, or a term with functions applied as methods:
// `"name".lower().trim()` is trim(lower("name")).
std::optional<SqlText> Parser::Term(int depth) {
  auto sql = BaseTerm(depth);
  while (sql && Peek().kind == Tok::Dot && Peek(1).kind == Tok::Word) {
    if (++depth >= kMaxFilterDepth) return std::nullopt;
    const Function* f = FindFunction(Peek(1).text);
    if (!f || Peek(2).kind != Tok::LParen) return std::nullopt;
    pos_ += 3;
    // After the receiver, the method's own arguments: none, or literals after no comma.
    sql = Call(*f, std::move(*sql), Peek().kind != Tok::RParen);
  }
  return sql;
}

std::optional<SqlText> Parser::BaseTerm(int depth) {
  if (depth >= kMaxFilterDepth) return std::nullopt;
  if (Peek().kind == Tok::Name) return ColumnRef();
  if (Peek().kind == Tok::LParen && ParenthesizedColumnAhead()) {
    ++pos_;
    auto sql = ColumnRef();
    if (!sql || !Accept(Tok::RParen)) return std::nullopt;
    return sql;
  }
  if (Peek().kind == Tok::Word && Peek(1).kind == Tok::LParen) {
    const Function* f = FindFunction(Peek().text);
    if (!f) return std::nullopt;  // read_csv('/etc/passwd') and the like
    pos_ += 2;
    auto receiver = Term(depth + 1);
    if (!receiver) return std::nullopt;
    bool more_args = Accept(Tok::Comma);
    return Call(*f, std::move(*receiver), more_args);
  }
  return std::nullopt;
}

// `f(receiver, ?, …)` with the literal arguments at the cursor (when `more_args`) and the
// closing parenthesis, which the cursor must reach.
std::optional<SqlText> Parser::Call(const Function& f, SqlText receiver, bool more_args) {
  SqlText sql(f.call);
  sql += receiver;
  int args = 0;
  if (more_args) {
    do {
      if (++args > f.max_args || !Literal()) return std::nullopt;
      sql += f.arg;
    } while (Accept(Tok::Comma));
  }
  if (!Accept(Tok::RParen)) return std::nullopt;
  sql += ")";
  return sql;
}

// "col" or "col"."field"…: the column must be one of columns_, written with its own name;
// fields only on a STRUCT column.
std::optional<SqlText> Parser::ColumnRef() {
  const Column* column = FindColumn(Peek().text);
  if (!column) return std::nullopt;
  ++pos_;
  if (Peek().kind != Tok::Dot || Peek(1).kind != Tok::Name) {
    return SqlText() += Identifier::Quote(column->name);
  }
  if (column->type != ColumnType::Struct) return std::nullopt;
  // ("col")."field": the parentheses make DuckDB read "col" as an expression, never as a
  // table name, whatever the caller calls its table.
  SqlText sql("(");
  sql += Identifier::Quote(column->name);
  sql += ")";
  while (Peek().kind == Tok::Dot && Peek(1).kind == Tok::Name) {
    if (Peek(1).text.empty()) return std::nullopt;
    sql += ".";
    sql += Identifier::Quote(Peek(1).text);
    pos_ += 2;
  }
  return sql;
}

// Whether the cursor is at "(" Name ("." Name)* ")".
bool Parser::ParenthesizedColumnAhead() const {
  if (Peek().kind != Tok::LParen || Peek(1).kind != Tok::Name) return false;
  size_t i = 2;
  while (Peek(i).kind == Tok::Dot && Peek(i + 1).kind == Tok::Name) i += 2;
  return Peek(i).kind == Tok::RParen;
}

// The column called `name`: the exact name, else the first equal to it ignoring ASCII case
// (as DuckDB binds quoted names).
const Column* Parser::FindColumn(std::string_view name) const {
  for (const Column& c : columns_) {
    if (c.name == name) return &c;
  }
  for (const Column& c : columns_) {
    if (EqualsIgnoreCase(c.name, name)) return &c;
  }
  return nullptr;
}

Result<FilterClause> Parse(std::string_view text, const std::vector<Column>& columns, bool where) {
  auto invalid = [where] {
    return MakeError(ErrorCode::InvalidParameter,
                     where ? "Parameter 'where' contains errors or invalid symbols"
                           : "Parameter 'orderby' contains errors or invalid symbols");
  };
  if (text.size() > kMaxFilterBytes || HasForbiddenBytes(text)) return invalid();
  auto tokens = Tokenize(text);
  if (!tokens) return invalid();
  Parser parser(std::move(*tokens), columns);
  auto sql = where ? parser.Where() : parser.OrderBy();
  if (!sql) return invalid();
  return FilterClause{std::move(*sql), parser.TakeParams()};
}

}  // namespace

Result<FilterClause> ParseWhere(std::string_view where, const std::vector<Column>& columns) {
  return Parse(where, columns, true);
}

Result<FilterClause> ParseOrderBy(std::string_view orderby, const std::vector<Column>& columns) {
  return Parse(orderby, columns, false);
}

}  // namespace hangar::services::viewer
