// Commits over HTTP: preupload (hf-api.md §7.1) and the NDJSON commit (§7.2).

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/hf/hf_handlers.h"
#include "api/json_util.h"
#include "core/base64.h"
#include "core/byte_source.h"
#include "core/util.h"

namespace hangar::api {

namespace json = boost::json;

namespace {

// Largest NDJSON commit body: inline files are base64 in it (LFS files travel separately).
constexpr size_t kMaxCommitBody = 64 * 1024 * 1024;

// Strict standard base64 (RFC 4648 §4), padded as the HF clients send it. Errors:
// BadRequest naming `what`.
Result<std::string> DecodeBase64(std::string_view in, std::string_view what) {
  std::optional<std::string> out;
  if (in.size() % 4 == 0) out = Base64Decode(in);
  if (!out) return MakeError(ErrorCode::BadRequest, "invalid base64 in " + std::string(what));
  return std::move(*out);
}

Error Bad(std::string_view where, std::string_view what) {
  return MakeError(ErrorCode::BadRequest, std::string(where) + ": " + std::string(what));
}

// The string member `key` of `o`, or an error naming it.
Result<std::string> StringField(const json::object& o, std::string_view key,
                                std::string_view where) {
  const auto* v = o.if_contains(key);
  if (!v || !v->is_string()) return Bad(where, "'" + std::string(key) + "' must be a string");
  return std::string(v->as_string());
}

// The non-negative integer member `key` of `o`, or an error naming it.
Result<uint64_t> SizeField(const json::object& o, std::string_view key, std::string_view where) {
  const auto* v = o.if_contains(key);
  if (v && v->is_uint64()) return v->as_uint64();
  if (v && v->is_int64() && v->as_int64() >= 0) return static_cast<uint64_t>(v->as_int64());
  return Bad(where, "'" + std::string(key) + "' must be a non-negative integer");
}

// Whether `o` has no member `key` or it is the string `want`.
bool AbsentOr(const json::object& o, std::string_view key, std::string_view want) {
  const auto* v = o.if_contains(key);
  return !v || (v->is_string() && v->as_string() == want);
}

// The revision of a `.../{rest*}` route that names only a revision.
Result<std::string> RevisionParam(const http::Request& req) {
  auto split = SplitRevisionAndPath(req.Param("rest"));
  if (!split) return std::move(split).error();
  if (!split->path.empty()) return MakeError(ErrorCode::RevisionNotFound, "invalid revision");
  return std::move(split->revision);
}

// One NDJSON line of §7.2 into `input` (`line_no` counts from 1 for messages).
Result<void> ParseLine(std::string_view line, size_t line_no, bool& have_header,
                       services::CommitInput& input) {
  std::string where = "line " + std::to_string(line_no);
  boost::system::error_code ec;
  json::value v = json::parse(line, ec);
  if (ec || !v.is_object()) return Bad(where, "malformed JSON");
  const auto& o = v.as_object();
  auto key = StringField(o, "key", where);
  if (!key) return std::move(key).error();
  const auto* val = o.if_contains("value");
  if (!val || !val->is_object()) return Bad(where, "'value' must be an object");
  const auto& value = val->as_object();
  if (*key == "header") {
    if (have_header) return Bad(where, "a second header");
    if (line_no != 1) return Bad(where, "the header must come first");
    have_header = true;
    auto summary = StringField(value, "summary", where);
    if (!summary) return std::move(summary).error();
    input.summary = std::move(*summary);
    if (const auto* d = value.if_contains("description"); d && d->is_string()) {
      input.description = d->as_string();
    }
    if (const auto* p = value.if_contains("parentCommit"); p && !p->is_null()) {
      std::optional<Oid> parent = p->is_string() ? Oid::ParseHex(p->as_string()) : std::nullopt;
      if (!parent) return Bad(where, "'parentCommit' must be 40 hex digits");
      input.parent_commit = *parent;
    }
    return {};
  }
  if (!have_header) return MakeError(ErrorCode::BadRequest, "the first line must be the header");
  services::CommitOperation op;
  auto path = StringField(value, "path", where);
  if (!path) return std::move(path).error();
  op.path = std::move(*path);
  using Kind = services::CommitOperation::Kind;
  if (*key == "file") {
    op.kind = Kind::File;
    if (!AbsentOr(value, "encoding", "base64")) return Bad(where, "'encoding' must be \"base64\"");
    auto content = StringField(value, "content", where);
    if (!content) return std::move(content).error();
    auto bytes = DecodeBase64(*content, where + " content");
    if (!bytes) return std::move(bytes).error();
    op.content = std::move(*bytes);
  } else if (*key == "lfsFile") {
    op.kind = Kind::LfsFile;
    if (!AbsentOr(value, "algo", "sha256")) return Bad(where, "'algo' must be \"sha256\"");
    auto oid = StringField(value, "oid", where);
    if (!oid) return std::move(oid).error();
    auto sha = Sha256::ParseHex(*oid);
    if (!sha) return Bad(where, "'oid' must be 64 lower-case hex digits");
    op.lfs_oid = *sha;
    if (value.contains("size")) {  // absent in Python's copies (hf-api.md §7.5)
      auto size = SizeField(value, "size", where);
      if (!size) return std::move(size).error();
      op.lfs_size = *size;
    }
  } else if (*key == "copyFile") {  // Hangar extension (docs/api.md)
    op.kind = Kind::CopyFile;
    auto src = StringField(value, "srcPath", where);
    if (!src) return std::move(src).error();
    op.src_path = std::move(*src);
    if (const auto* rev = value.if_contains("srcRevision"); rev && !rev->is_null()) {
      if (!rev->is_string()) return Bad(where, "'srcRevision' must be a string");
      op.src_revision = std::string(rev->as_string());
    }
  } else if (*key == "deletedFile") {
    op.kind = Kind::DeletedFile;
  } else if (*key == "deletedFolder") {
    op.kind = Kind::DeletedFolder;
    while (op.path.ends_with('/')) op.path.pop_back();
  } else {
    return Bad(where, "unknown key '" + *key + "'");
  }
  input.operations.push_back(std::move(op));
  return {};
}

}  // namespace

Result<services::CommitInput> ParseCommitBody(std::string_view ndjson) {
  services::CommitInput input;
  bool have_header = false;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < ndjson.size()) {
    std::string_view line = NextLine(ndjson, pos);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.empty()) continue;
    HANGAR_TRY(ParseLine(line, ++line_no, have_header, input));
  }
  if (!have_header) return MakeError(ErrorCode::BadRequest, "missing header line");
  return input;
}

Result<http::Response> HandlePreupload(HfDeps& d, http::Request& req, RepoType type) {
  auto id = RepoFromParams(req, type);
  if (!id) return std::move(id).error();
  auto rev = RevisionParam(req);
  if (!rev) return std::move(rev).error();
  auto body = ReadJsonObject(req, static_cast<size_t>(d.config.limits.max_json_body_bytes));
  if (!body) return std::move(body).error();
  const auto* files = body->if_contains("files");
  if (!files || !files->is_array()) {
    return MakeError(ErrorCode::BadRequest, "'files' must be an array");
  }
  std::vector<services::PreuploadFile> in;
  for (const auto& f : files->as_array()) {
    if (!f.is_object()) return MakeError(ErrorCode::BadRequest, "'files' must hold objects");
    const auto& o = f.as_object();
    services::PreuploadFile pf;
    auto path = StringField(o, "path", "files");
    if (!path) return std::move(path).error();
    pf.path = std::move(*path);
    auto size = SizeField(o, "size", "files");
    if (!size) return std::move(size).error();
    pf.size = *size;
    if (const auto* s = o.if_contains("sample"); s && s->is_string()) {
      auto sample = DecodeBase64(s->as_string(), "files sample");
      if (!sample) return std::move(sample).error();
      pf.sample = std::move(*sample);
    }
    in.push_back(std::move(pf));
  }
  std::optional<std::string> attributes;
  if (const auto* a = body->if_contains("gitAttributes"); a && a->is_string()) {
    attributes = std::string(a->as_string());
  }
  auto answers = d.commits.Preupload(req.principal, *id, *rev, in, attributes);
  if (!answers) return std::move(answers).error();
  json::array out;
  for (const auto& a : *answers) {
    json::object o{{"path", a.path},
                   {"uploadMode", a.lfs ? "lfs" : "regular"},
                   {"shouldIgnore", false}};
    if (a.oid) o["oid"] = a.oid->Hex();
    out.push_back(std::move(o));
  }
  return JsonResponse(json::object{{"files", std::move(out)}});
}

Result<http::Response> HandleCommit(HfDeps& d, http::Request& req, RepoType type) {
  auto id = RepoFromParams(req, type);
  if (!id) return std::move(id).error();
  auto rev = RevisionParam(req);
  if (!rev) return std::move(rev).error();
  if (auto len = req.ContentLength(); len && *len > kMaxCommitBody) {
    return MakeError(ErrorCode::PayloadTooLarge, "commit body is larger than 64 MiB");
  }
  auto text = ReadAll(*req.body, kMaxCommitBody);
  if (!text) return std::move(text).error();
  HANGAR_ASSIGN_OR_RETURN(services::CommitInput input, ParseCommitBody(*text));
  input.create_pr = http::ParseBool(req.Query("create_pr").value_or("false")).value_or(false);
  auto made = d.commits.Commit(req.principal, *id, *rev, input);
  if (!made) return std::move(made).error();
  std::string repo_url = req.base_url + "/" + id->UrlPath();
  json::object out{{"success", true},
                   {"commitOid", made->commit.Hex()},
                   {"commitUrl", repo_url + "/commit/" + made->commit.Hex()},
                   {"hookOutput", ""}};
  // §7.5: clients derive refs/pr/<n> from the URL's last segment.
  if (made->pull_request) {
    out["pullRequestUrl"] = repo_url + "/discussions/" + std::to_string(*made->pull_request);
  }
  return JsonResponse(out);
}

}  // namespace hangar::api
