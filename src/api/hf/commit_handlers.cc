// Commits over HTTP: preupload (hf-api.md §7.1) and the NDJSON commit (§7.2).

#include <boost/json.hpp>

#include <algorithm>

#include "api/hf/commit_body.h"
#include "api/hf/hf_common.h"
#include "api/hf/hf_handlers.h"
#include "api/json_util.h"
#include "core/base64.h"
#include "core/file_source.h"
#include "core/util.h"

namespace hangar::api {

namespace json = boost::json;

namespace {

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

// The revision of a `.../{rest*}` route that names only a revision.
Result<std::string> RevisionParam(const http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto split, SplitRevisionAndPath(req.Param("rest")));
  if (!split.path.empty()) return MakeError(ErrorCode::RevisionNotFound, "invalid revision");
  return std::move(split.revision);
}

// What one operation of a commit costs in memory besides its file's bytes (its path, its
// tree entry, the containers): measured with 200,000 one-byte files, rounded up.
constexpr uint64_t kOperationCost = 1024;

// A ByteSource that counts the '\n' of what it passes on: the lines of a body.
class LineCounter final : public ByteSource {
 public:
  explicit LineCounter(ByteSource& in) : in_(in) {}
  Result<size_t> Read(std::span<char> buf) override {
    HANGAR_ASSIGN_OR_RETURN(size_t n, in_.Read(buf));
    lines_ += static_cast<uint64_t>(std::count(buf.data(), buf.data() + n, '\n'));
    return n;
  }
  std::optional<uint64_t> Size() const override { return in_.Size(); }
  uint64_t lines() const { return lines_ + 1; }

 private:
  ByteSource& in_;
  uint64_t lines_ = 0;
};

// The commit body of `req`, parsed. A body that reached the handler whole (within the
// read-ahead, on the shared pool) is parsed from memory. A larger one is first spooled
// to disk, so that a slow client holds a file, not memory; then its size and kOperationCost
// per line are charged to the handlers' memory budget (the decoded files take three
// quarters of the size, the parser little more: tests/integration/commit_memory.sh) and it
// is parsed from the file. So concurrent
// large commits take turns instead of growing RSS without bound (issue 13).
// Errors: PayloadTooLarge (over 64 MiB, or more than the whole budget), Unavailable (no
// room in time); those of ReadCommitBody.
Result<services::CommitInput> ReadCommitRequest(HfDeps& d, http::Request& req) {
  HANGAR_TRY(CheckCommitLength(req));
  if (!req.body_memory || d.spool_dir.empty()) return ReadCommitBody(*req.body);
  LineCounter counted(*req.body);
  HANGAR_ASSIGN_OR_RETURN(auto spooled, SpoolToTempFile(counted, d.spool_dir, kMaxCommitBody));
  HANGAR_TRY(req.ChargeBodyMemory(spooled->Size().value_or(0) + counted.lines() * kOperationCost));
  return ReadCommitBody(*spooled);
}

}  // namespace

Result<void> CheckCommitLength(const http::Request& req) {
  if (auto len = req.ContentLength(); len && *len > kMaxCommitBody) {
    return MakeError(ErrorCode::PayloadTooLarge, "commit body is larger than 64 MiB");
  }
  return {};
}

Result<http::Response> HandlePreupload(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto rev, RevisionParam(req));
  HANGAR_ASSIGN_OR_RETURN(
      auto body, ReadJsonObject(req, static_cast<size_t>(d.config.limits.max_json_body_bytes)));
  const auto* files = body.if_contains("files");
  if (!files || !files->is_array()) {
    return MakeError(ErrorCode::BadRequest, "'files' must be an array");
  }
  std::vector<services::PreuploadFile> in;
  for (const auto& f : files->as_array()) {
    if (!f.is_object()) return MakeError(ErrorCode::BadRequest, "'files' must hold objects");
    const auto& o = f.as_object();
    services::PreuploadFile pf;
    HANGAR_ASSIGN_OR_RETURN(auto path, StringField(o, "path", "files"));
    pf.path = std::move(path);
    HANGAR_ASSIGN_OR_RETURN(auto size, SizeField(o, "size", "files"));
    pf.size = size;
    if (const auto* s = o.if_contains("sample"); s && s->is_string()) {
      HANGAR_ASSIGN_OR_RETURN(auto sample, DecodeBase64(s->as_string(), "files sample"));
      pf.sample = std::move(sample);
    }
    in.push_back(std::move(pf));
  }
  std::optional<std::string> attributes;
  if (const auto* a = body.if_contains("gitAttributes"); a && a->is_string()) {
    attributes = std::string(a->as_string());
  }
  HANGAR_ASSIGN_OR_RETURN(auto answers,
                          d.commits.Preupload(req.principal, id, rev, in, attributes));
  json::array out;
  for (const auto& a : answers) {
    json::object o{
        {"path", a.path}, {"uploadMode", a.lfs ? "lfs" : "regular"}, {"shouldIgnore", false}};
    if (a.oid) o["oid"] = a.oid->Hex();
    out.push_back(std::move(o));
  }
  return JsonResponse(json::object{{"files", std::move(out)}});
}

Result<http::Response> HandleCommit(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto rev, RevisionParam(req));
  HANGAR_ASSIGN_OR_RETURN(services::CommitInput input, ReadCommitRequest(d, req));
  input.create_pr = http::ParseBool(req.Query("create_pr").value_or("false")).value_or(false);
  HANGAR_ASSIGN_OR_RETURN(auto made, d.commits.Commit(req.principal, id, rev, std::move(input)));
  std::string repo_url = req.base_url + "/" + id.UrlPath();
  json::object out{{"success", true},
                   {"commitOid", made.commit.Hex()},
                   {"commitUrl", repo_url + "/commit/" + made.commit.Hex()},
                   {"hookOutput", ""}};
  // §7.5: clients derive refs/pr/<n> from the URL's last segment.
  if (made.pull_request) {
    out["pullRequestUrl"] = repo_url + "/discussions/" + std::to_string(*made.pull_request);
  }
  return JsonResponse(out);
}

}  // namespace hangar::api
