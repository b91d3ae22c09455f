#include "api/hf/commit_body.h"

#include <boost/json/basic_parser_impl.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/base64.h"

namespace hangar::api {

namespace json = boost::json;

namespace {

constexpr size_t kMaxSummary = 64 * 1024;    // a commit's summary line, bytes
constexpr size_t kMaxDescription = 1 << 20;  // its description, bytes

Error Bad(std::string_view where, std::string_view what) {
  return MakeError(ErrorCode::BadRequest, std::string(where) + ": " + std::string(what));
}

// Strict padded base64 (RFC 4648 §4) decoded as its text arrives, whole quanta at a time.
class Base64Stream {
 public:
  // Room for `n` decoded bytes before they come: growing by doubling would hold up to
  // three times the content at once. Pages reserved but never written cost no memory.
  void Reserve(size_t n) { out_.reserve(n); }
  void Append(std::string_view text) {
    if (bad_ || text.empty()) return;
    if (padded_) {  // '=' ended the text already
      bad_ = true;
      return;
    }
    if (!held_.empty()) {
      size_t take = std::min(text.size(), 4 - held_.size());
      held_.append(text.substr(0, take));
      text.remove_prefix(take);
      if (held_.size() < 4) return;
      Decode(held_);
      held_.clear();
    }
    size_t whole = text.size() / 4 * 4;
    if (whole > 0) Decode(text.substr(0, whole));
    held_.assign(text.substr(whole));
  }
  // The decoded bytes, or nullopt when the text was not base64 (or ended mid-quantum).
  std::optional<std::string> Finish() && {
    if (bad_ || !held_.empty()) return std::nullopt;
    // Room reserved past the content (it was the rest of the body) goes back now, so that
    // a commit's many files do not each keep a mapping of that size.
    if (out_.capacity() > out_.size() + (1 << 20)) out_.shrink_to_fit();
    return std::move(out_);
  }

 private:
  void Decode(std::string_view quanta) {
    if (padded_) {
      bad_ = true;
      return;
    }
    auto bytes = Base64Decode(quanta);
    if (!bytes) {
      bad_ = true;
      return;
    }
    out_.append(*bytes);
    padded_ = quanta.back() == '=';
  }

  std::string out_;
  std::string held_;  // < 4 characters of an unfinished quantum
  bool padded_ = false;
  bool bad_ = false;
};

// A JSON value as a line's checks need to see it.
struct Value {
  enum class Kind { String, Count, Null, Object, Other };
  Value() = default;
  explicit Value(Kind k, std::string t = {}, uint64_t n = 0)
      : kind(k), text(std::move(t)), count(n) {}
  Kind kind = Kind::Other;
  std::string text;    // String
  uint64_t count = 0;  // Count: a non-negative integer
};

// What one NDJSON line holds: its top-level "key", and the members of its "value" object
// (a file's "content" decoded on the way). Boost.JSON's event handler (basic_parser).
struct LineHandler {
  static constexpr std::size_t max_array_size = -1;
  static constexpr std::size_t max_object_size = -1;
  static constexpr std::size_t max_string_size = -1;
  static constexpr std::size_t max_key_size = -1;

  // The state of one line.
  int depth = 0;  // nesting of objects and arrays, 1 = the line's object
  bool top_is_object = false;
  std::string member;                   // key of the member whose value is being read
  std::string top_member;               // ... at depth 1
  std::optional<Value> key;             // the line's "key"
  std::optional<Value> value;           // the line's "value" (kind only, members below)
  std::map<std::string, Value> fields;  // the members of "value", "content" aside
  std::optional<Value::Kind> content_kind;
  Base64Stream content;
  std::string text;      // a string being read (not "content")
  size_t body_left = 0;  // bytes of the body from the current part on, when known
  std::set<std::string> top_seen, value_seen;  // member names met, at depth 1 and in "value"
  std::string duplicate;                       // the first member name met twice

  void Reset() {
    size_t left = body_left;
    *this = LineHandler();
    body_left = left;
  }

  // The value starting at the current position is a member of "value".
  bool InValue() const {
    return depth == 2 && top_member == "value" && value && value->kind == Value::Kind::Object;
  }
  // A scalar or the start of a container of `kind` at the current position.
  void Put(Value v) {
    if (depth == 1 && top_member == "key") {
      key = std::move(v);
    } else if (depth == 1 && top_member == "value") {
      value = std::move(v);
    } else if (InValue()) {
      if (member == "content") {
        content_kind = v.kind;
      } else {
        fields[member] = std::move(v);
      }
    }
  }
  bool Begin(Value::Kind kind) {
    if (depth == 0) {
      top_is_object = kind == Value::Kind::Object;
    } else {
      Put(Value{kind});
    }
    ++depth;
    return true;
  }

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return Begin(Value::Kind::Object); }
  bool on_object_end(std::size_t, json::error_code&) {
    --depth;
    return true;
  }
  bool on_array_begin(json::error_code&) { return Begin(Value::Kind::Other); }
  bool on_array_end(std::size_t, json::error_code&) {
    --depth;
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    if (depth <= 2) text.append(s.data(), s.size());
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    if (depth > 2) return true;
    text.append(s.data(), s.size());
    // A member twice is refused: readers that keep the first, the last or both would each
    // see another commit in the same bytes.
    bool in_value = depth == 2 && top_member == "value";
    if (depth == 1 || in_value) {
      auto& seen = depth == 1 ? top_seen : value_seen;
      if (!seen.insert(text).second && duplicate.empty()) duplicate = text;
    }
    (depth == 1 ? top_member : member) = std::move(text);
    text.clear();
    return true;
  }
  // A piece of a string; `more`: the string goes on past this chunk of input.
  void StringPiece(json::string_view s, bool more) {
    if (InValue() && member == "content") {
      if (content_kind != Value::Kind::String) {
        content_kind = Value::Kind::String;
        // A content that runs past its chunk may be large: room for the rest of the body
        // at once, rather than growth by doubling (up to three times it held at a time).
        if (more) content.Reserve(body_left / 4 * 3);
      }
      content.Append({s.data(), s.size()});
    } else if (depth <= 2) {
      text.append(s.data(), s.size());
    }
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    StringPiece(s, true);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    StringPiece(s, false);
    if (!(InValue() && member == "content")) Put(Value{Value::Kind::String, std::move(text)});
    text.clear();
    return true;
  }
  bool on_number_part(json::string_view, json::error_code&) { return true; }
  bool on_int64(int64_t i, json::string_view, json::error_code&) {
    Put(i >= 0 ? Value{Value::Kind::Count, {}, static_cast<uint64_t>(i)} : Value{});
    return true;
  }
  bool on_uint64(uint64_t u, json::string_view, json::error_code&) {
    Put(Value{Value::Kind::Count, {}, u});
    return true;
  }
  bool on_double(double, json::string_view, json::error_code&) {
    Put(Value{});
    return true;
  }
  bool on_bool(bool, json::error_code&) {
    Put(Value{});
    return true;
  }
  bool on_null(json::error_code&) {
    Put(Value{Value::Kind::Null});
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

// The string member `name` of the line's value, or an error naming it.
Result<std::string> StringField(LineHandler& h, const std::string& name, std::string_view where) {
  auto it = h.fields.find(name);
  if (it == h.fields.end() || it->second.kind != Value::Kind::String) {
    return Bad(where, "'" + name + "' must be a string");
  }
  return std::move(it->second.text);
}

// Whether the line's value has no member `name` or it is the string `want`.
bool AbsentOr(const LineHandler& h, const std::string& name, std::string_view want) {
  auto it = h.fields.find(name);
  return it == h.fields.end() ||
         (it->second.kind == Value::Kind::String && it->second.text == want);
}

}  // namespace

struct CommitBodyParser::Impl {
  explicit Impl(std::optional<uint64_t> size) : parser(json::parse_options{}), body_size(size) {}

  json::basic_parser<LineHandler> parser;
  std::optional<uint64_t> body_size;
  uint64_t fed = 0;           // bytes of the body before the part being written
  bool line_started = false;  // a byte other than JSON whitespace came on this line
  bool have_header = false;
  size_t line_no = 0;  // lines with content, from 1
  services::CommitInput input;

  Result<void> Write(std::string_view part) {
    if (!line_started) {
      size_t first = part.find_first_not_of(" \t\r");
      if (first == std::string_view::npos) return {};  // blank so far
      part.remove_prefix(first);
      line_started = true;
      ++line_no;
    }
    if (body_size)
      parser.handler().body_left = static_cast<size_t>(*body_size - std::min(*body_size, fed));
    json::error_code ec;
    size_t used = parser.write_some(true, part.data(), part.size(), ec);
    // The line's object may end before the part does: what follows must be blank.
    if (ec || (used < part.size() &&
               part.substr(used).find_first_not_of(" \t\r") != std::string_view::npos)) {
      return Bad(Where(), "malformed JSON");
    }
    return {};
  }
  // The line has ended ('\n' or the end of the body).
  Result<void> EndLine() {
    if (!line_started) return {};
    json::error_code ec;
    parser.write_some(false, nullptr, 0, ec);
    Result<void> r = ec ? Bad(Where(), "malformed JSON") : TakeLine(parser.handler());
    parser.reset();
    parser.handler().Reset();
    line_started = false;
    return r;
  }
  std::string Where() const { return "line " + std::to_string(line_no); }

  // The checks of §7.2 on one parsed line; the operation goes into `input`.
  Result<void> TakeLine(LineHandler& h) {
    const std::string where = Where();
    if (!h.top_is_object) return Bad(where, "malformed JSON");
    if (!h.duplicate.empty()) return Bad(where, "member '" + h.duplicate + "' given twice");
    if (!h.key || h.key->kind != Value::Kind::String) return Bad(where, "'key' must be a string");
    if (!h.value || h.value->kind != Value::Kind::Object) {
      return Bad(where, "'value' must be an object");
    }
    const std::string& key = h.key->text;
    if (key == "header") return TakeHeader(h, where);
    if (!have_header) return MakeError(ErrorCode::BadRequest, "the first line must be the header");
    services::CommitOperation op;
    HANGAR_ASSIGN_OR_RETURN(op.path, StringField(h, "path", where));
    using Kind = services::CommitOperation::Kind;
    if (key == "file") {
      op.kind = Kind::File;
      if (!AbsentOr(h, "encoding", "base64")) return Bad(where, "'encoding' must be \"base64\"");
      if (h.content_kind != Value::Kind::String) return Bad(where, "'content' must be a string");
      auto bytes = std::move(h.content).Finish();
      if (!bytes)
        return MakeError(ErrorCode::BadRequest, "invalid base64 in " + where + " content");
      op.content = std::move(*bytes);
    } else if (key == "lfsFile") {
      op.kind = Kind::LfsFile;
      if (!AbsentOr(h, "algo", "sha256")) return Bad(where, "'algo' must be \"sha256\"");
      HANGAR_ASSIGN_OR_RETURN(std::string oid, StringField(h, "oid", where));
      auto sha = Sha256::ParseHex(oid);
      if (!sha) return Bad(where, "'oid' must be 64 lower-case hex digits");
      op.lfs_oid = *sha;
      if (auto it = h.fields.find("size"); it != h.fields.end()) {  // absent in Python's
        if (it->second.kind != Value::Kind::Count) {                // copies (hf-api.md §7.5)
          return Bad(where, "'size' must be a non-negative integer");
        }
        op.lfs_size = it->second.count;
      }
    } else if (key == "copyFile") {  // Hangar extension (docs/api.md)
      op.kind = Kind::CopyFile;
      HANGAR_ASSIGN_OR_RETURN(op.src_path, StringField(h, "srcPath", where));
      if (auto it = h.fields.find("srcRevision");
          it != h.fields.end() && it->second.kind != Value::Kind::Null) {
        if (it->second.kind != Value::Kind::String)
          return Bad(where, "'srcRevision' must be a string");
        op.src_revision = std::move(it->second.text);
      }
    } else if (key == "deletedFile") {
      op.kind = Kind::DeletedFile;
    } else if (key == "deletedFolder") {
      op.kind = Kind::DeletedFolder;
      while (op.path.ends_with('/')) op.path.pop_back();
    } else {
      return Bad(where, "unknown key '" + key + "'");
    }
    input.operations.push_back(std::move(op));
    return {};
  }

  Result<void> TakeHeader(LineHandler& h, const std::string& where) {
    if (have_header) return Bad(where, "a second header");
    if (line_no != 1) return Bad(where, "the header must come first");
    have_header = true;
    HANGAR_ASSIGN_OR_RETURN(input.summary, StringField(h, "summary", where));
    if (auto it = h.fields.find("description");
        it != h.fields.end() && it->second.kind == Value::Kind::String) {
      input.description = std::move(it->second.text);
    }
    // Every page and listing shows commit messages: bounded, and git cannot hold a NUL.
    for (const auto& [name, text, max] :
         {std::tuple{"summary", &input.summary, kMaxSummary},
          std::tuple{"description", &input.description, kMaxDescription}}) {
      if (text->size() > max) {
        return Bad(where,
                   "'" + std::string(name) + "' is longer than " + std::to_string(max) + " bytes");
      }
      if (text->find('\0') != std::string::npos) {
        return Bad(where, "'" + std::string(name) + "' contains a NUL character");
      }
    }
    if (auto it = h.fields.find("parentCommit");
        it != h.fields.end() && it->second.kind != Value::Kind::Null) {
      std::optional<Oid> parent;
      if (it->second.kind == Value::Kind::String) parent = Oid::ParseHex(it->second.text);
      if (!parent) return Bad(where, "'parentCommit' must be 40 hex digits");
      input.parent_commit = *parent;
    }
    return {};
  }
};

CommitBodyParser::CommitBodyParser(std::optional<uint64_t> size)
    : impl_(std::make_unique<Impl>(size)) {}
CommitBodyParser::~CommitBodyParser() = default;

Result<void> CommitBodyParser::Feed(std::string_view bytes) {
  for (size_t nl; (nl = bytes.find('\n')) != std::string_view::npos;) {
    HANGAR_TRY(impl_->Write(bytes.substr(0, nl)));
    HANGAR_TRY(impl_->EndLine());
    bytes.remove_prefix(nl + 1);
    impl_->fed += nl + 1;
  }
  HANGAR_TRY(impl_->Write(bytes));
  impl_->fed += bytes.size();
  return {};
}

Result<services::CommitInput> CommitBodyParser::Finish() && {
  HANGAR_TRY(impl_->EndLine());
  if (!impl_->have_header) return MakeError(ErrorCode::BadRequest, "missing header line");
  return std::move(impl_->input);
}

Result<services::CommitInput> ParseCommitBody(std::string_view ndjson) {
  CommitBodyParser parser(ndjson.size());
  HANGAR_TRY(parser.Feed(ndjson));
  return std::move(parser).Finish();
}

Result<services::CommitInput> ReadCommitBody(ByteSource& body) {
  CommitBodyParser parser(body.Size());
  std::vector<char> buf(256 * 1024);
  uint64_t total = 0;
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(size_t n, body.Read(buf));
    if (n == 0) break;
    total += n;
    if (total > kMaxCommitBody) {
      return MakeError(ErrorCode::PayloadTooLarge, "commit body is larger than 64 MiB");
    }
    HANGAR_TRY(parser.Feed({buf.data(), n}));
  }
  return std::move(parser).Finish();
}

}  // namespace hangar::api
