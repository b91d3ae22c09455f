#include "api/registry/mlflow_filter.h"

#include <cctype>

#include "core/util.h"

namespace hangar::api::registry {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<std::vector<FilterCondition>> Run() {
    std::vector<FilterCondition> out;
    Blanks();
    if (pos_ == s_.size()) return out;
    while (true) {
      if (out.size() == 20) return Fail("more than 20 conditions");
      HANGAR_ASSIGN_OR_RETURN(auto c, Condition());
      out.push_back(std::move(c));
      Blanks();
      if (pos_ == s_.size()) return out;
      std::string word = Word();
      if (AsciiLower(word) != "and") return Fail("expected AND between conditions");
    }
  }

 private:
  Error Fail(const std::string& what) const {
    return MakeError(ErrorCode::BadRequest,
                     "invalid filter at character " + std::to_string(pos_) + ": " + what);
  }
  void Blanks() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  static bool WordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  }
  std::string Word() {
    size_t start = pos_;
    while (pos_ < s_.size() && WordChar(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }
  // A quoted text opening at pos_ with `quote`; a doubled quote stands for itself.
  Result<std::string> Quoted(char quote) {
    std::string out;
    ++pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c != quote) {
        out += c;
      } else if (pos_ < s_.size() && s_[pos_] == quote) {
        out += quote;
        ++pos_;
      } else {
        return out;
      }
    }
    return Fail("unterminated quoted text");
  }
  Result<FilterCondition> Condition() {
    FilterCondition c;
    Blanks();
    c.field = Word();
    if (c.field.empty()) return Fail("expected a field name");
    if (AsciiLower(c.field).rfind("tags.", 0) == 0 || AsciiLower(c.field) == "tags") {
      std::string key = c.field.size() > 5 ? c.field.substr(5) : "";
      if (key.empty() && pos_ < s_.size() && (s_[pos_] == '`' || s_[pos_] == '"')) {
        HANGAR_ASSIGN_OR_RETURN(key, Quoted(s_[pos_]));
      } else if (c.field.size() == 4) {
        return Fail("expected tags.<key>");
      }
      if (key.empty()) return Fail("empty tag key");
      c.field = "tags";
      c.tag = std::move(key);
    }
    Blanks();
    if (s_.substr(pos_, 2) == "!=" || s_.substr(pos_, 2) == "<>") {
      c.op = "!=";
      pos_ += 2;
    } else if (s_.substr(pos_, 1) == "=") {
      c.op = "=";
      pos_ += 1;
    } else {
      std::string op = AsciiLower(Word());
      if (op != "like" && op != "ilike") return Fail("expected =, !=, LIKE or ILIKE");
      c.op = op == "like" ? "LIKE" : "ILIKE";
    }
    Blanks();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return Fail("expected a quoted value");
    HANGAR_ASSIGN_OR_RETURN(c.value, Quoted(s_[pos_]));
    return c;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Result<std::vector<FilterCondition>> ParseMlflowFilter(std::string_view filter) {
  if (filter.size() > 1000)
    return MakeError(ErrorCode::BadRequest, "the filter is over 1,000 bytes");
  return Parser(filter).Run();
}

}  // namespace hangar::api::registry
