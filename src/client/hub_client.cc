#include "client/hub_client.h"

#include <openssl/evp.h>

#include <boost/json.hpp>

#include "core/base64.h"
#include "core/util.h"

namespace hangar::client {

namespace json = boost::json;

namespace {

// One HTTP client per thread: it keeps its connection to the hub alive between calls.
net::HttpClient& ThreadClient() {
  thread_local net::HttpClient client;
  return client;
}

Result<json::value> ParseJson(const net::HttpResponse& res, std::string_view what) {
  boost::system::error_code ec;
  json::value v = json::parse(res.body, ec);
  if (ec) {
    return MakeError(ErrorCode::Internal, std::string(what) + ": the server's answer is not JSON");
  }
  return v;
}

uint64_t U64(const json::value* v) {
  if (v == nullptr) return 0;
  if (v->is_uint64()) return v->as_uint64();
  if (v->is_int64() && v->as_int64() >= 0) return static_cast<uint64_t>(v->as_int64());
  if (v->is_double() && v->as_double() >= 0) return static_cast<uint64_t>(v->as_double());
  return 0;
}

std::string Str(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// The URL of a Link header's rel="next", or "".
std::string NextLink(const net::HttpResponse& res) {
  auto link = res.Header("link");
  if (!link) return "";
  std::string_view s = *link;
  for (;;) {
    size_t lt = s.find('<');
    if (lt == std::string_view::npos) return "";
    size_t gt = s.find('>', lt);
    if (gt == std::string_view::npos) return "";
    std::string_view url = s.substr(lt + 1, gt - lt - 1);
    size_t comma = s.find(",<", gt);
    std::string_view params =
        s.substr(gt + 1, comma == std::string_view::npos ? s.npos : comma - gt);
    if (params.find("rel=\"next\"") != std::string_view::npos) return std::string(url);
    if (comma == std::string_view::npos) return "";
    s.remove_prefix(comma + 1);
  }
}

}  // namespace

// ---- RepoRef ----

Result<RepoRef> RepoRef::Parse(std::string_view type, std::string_view id) {
  if (type != "model" && type != "dataset" && type != "space") {
    return MakeError(ErrorCode::BadRequest,
                     "unknown repo type '" + std::string(type) + "' (model, dataset or space)");
  }
  size_t slash = id.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == id.size() ||
      id.find('/', slash + 1) != std::string_view::npos) {
    return MakeError(ErrorCode::BadRequest,
                     "repo id '" + std::string(id) + "' is not of the form namespace/name");
  }
  RepoRef r;
  r.type = std::string(type);
  r.ns = std::string(id.substr(0, slash));
  r.name = std::string(id.substr(slash + 1));
  return r;
}

std::string RepoRef::ApiPath() const {
  return "/api/" + type + "s/" + PercentEncode(ns) + "/" + PercentEncode(name);
}

std::string RepoRef::UrlPath() const {
  std::string prefix = type == "model" ? "" : type + "s/";
  return prefix + PercentEncode(ns) + "/" + PercentEncode(name);
}

uint64_t UploadSession::PartBytes(uint64_t number) const {
  if (number == 0 || number > part_count) return 0;
  if (number < part_count) return part_size;
  return size - part_size * (part_count - 1);
}

// ---- errors ----

Error HttpError(const net::HttpResponse& res, std::string_view what) {
  std::string code_name = res.Header("x-error-code").value_or("");
  std::string message = res.Header("x-error-message").value_or("");
  if (message.empty() && !res.body.empty()) {
    boost::system::error_code ec;
    json::value v = json::parse(res.body, ec);
    if (!ec && v.is_object()) message = Str(v.as_object(), "error");
    if (message.empty() && !ec && v.is_object()) message = Str(v.as_object(), "message");
    if (message.empty() && res.body.size() < 200 && res.body.find('<') == std::string::npos) {
      message = res.body;
      while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) {
        message.pop_back();
      }
    }
  }
  // The code the answer names (X-Error-Code), else the one of its status.
  ErrorCode code = ErrorCodeForStatus(res.status);
  for (uint16_t i = 0; i <= static_cast<uint16_t>(ErrorCode::Unavailable); ++i) {
    auto c = static_cast<ErrorCode>(i);
    if (!code_name.empty() && Describe(c).name == code_name) {
      code = c;
      break;
    }
  }
  std::string text = std::string(what) + ": HTTP " + std::to_string(res.status);
  if (!code_name.empty()) text += " " + code_name;
  if (!message.empty()) text += ": " + message;
  return MakeError(code, std::move(text));
}

bool Retryable(const Error& e) { return Describe(e.code).http_status >= 500; }

// ---- HubClient ----

HubClient::HubClient(std::string endpoint, std::string token)
    : endpoint_(std::move(endpoint)), token_(std::move(token)) {
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();
}

void HubClient::Authorize(net::HttpRequest& req) const {
  if (!token_.empty()) req.headers.emplace_back("Authorization", "Bearer " + token_);
}

Result<net::HttpResponse> HubClient::Call(net::HttpRequest req, std::string_view what,
                                          const net::BodySink* sink) const {
  if (req.url.starts_with("/")) req.url = endpoint_ + req.url;
  if (req.url.starts_with(endpoint_ + "/")) Authorize(req);
  auto res = ThreadClient().Perform(req, sink);
  if (!res) {
    return MakeError(res.error().code, std::string(what) + ": " + res.error().message);
  }
  if (res->status < 200 || res->status >= 300) return HttpError(*res, what);
  return res;
}

Result<void> HubClient::CreateRepo(const RepoRef& repo) const {
  net::HttpRequest req;
  req.method = "POST";
  req.url = endpoint_ + "/api/repos/create";
  req.headers.emplace_back("Content-Type", "application/json");
  req.body_bytes = json::serialize(
      json::object{{"name", repo.name}, {"organization", repo.ns}, {"type", repo.type}});
  Authorize(req);
  auto res = ThreadClient().Perform(req);
  if (!res) return MakeError(res.error().code, "create " + repo.Id() + ": " + res.error().message);
  if (res->status == 409 || (res->status >= 200 && res->status < 300)) return {};
  // The upload creates its repo when missing (as `hf upload` does), so a refusal here may
  // be of a write to a repo that exists: say both.
  return HttpError(*res, "create (or write to) repo " + repo.Id());
}

Result<void> HubClient::CreateBranch(const RepoRef& repo, std::string_view branch) const {
  net::HttpRequest req;
  req.method = "POST";
  req.url = endpoint_ + repo.ApiPath() + "/branch/" + PercentEncode(branch);
  req.headers.emplace_back("Content-Type", "application/json");
  req.body_bytes = "{}";
  Authorize(req);
  std::string what = "create branch '" + std::string(branch) + "' in " + repo.Id();
  auto res = ThreadClient().Perform(req);
  if (!res) return MakeError(res.error().code, what + ": " + res.error().message);
  if (res->status == 409 || (res->status >= 200 && res->status < 300)) return {};
  return HttpError(*res, what);
}

Result<std::string> HubClient::ResolveCommit(const RepoRef& repo, std::string_view revision) const {
  net::HttpRequest req;
  req.url = endpoint_ + repo.ApiPath() + "/revision/" + PercentEncode(revision);
  std::string what = "revision '" + std::string(revision) + "' of " + repo.Id();
  HANGAR_ASSIGN_OR_RETURN(auto res, Call(std::move(req), what));
  HANGAR_ASSIGN_OR_RETURN(auto v, ParseJson(res, what));
  std::string sha = v.is_object() ? Str(v.as_object(), "sha") : "";
  if (sha.size() != 40)
    return MakeError(ErrorCode::Internal, what + ": no commit sha in the answer");
  return sha;
}

Result<std::vector<TreeFile>> HubClient::ListFiles(const RepoRef& repo,
                                                   std::string_view commit) const {
  std::vector<TreeFile> out;
  std::string url =
      endpoint_ + repo.ApiPath() + "/tree/" + std::string(commit) + "?recursive=true&limit=10000";
  std::string what = "list files of " + repo.Id();
  for (int page = 0; !url.empty(); ++page) {
    if (page > 100000) return MakeError(ErrorCode::Internal, what + ": too many pages");
    net::HttpRequest req;
    req.url = url;
    HANGAR_ASSIGN_OR_RETURN(auto res, Call(std::move(req), what));
    HANGAR_ASSIGN_OR_RETURN(auto v, ParseJson(res, what));
    if (!v.is_array()) return MakeError(ErrorCode::Internal, what + ": not a JSON array");
    for (const auto& e : v.as_array()) {
      if (!e.is_object()) continue;
      const auto& o = e.as_object();
      if (Str(o, "type") != "file") continue;
      TreeFile f;
      f.path = Str(o, "path");
      f.size = U64(o.if_contains("size"));
      f.oid = Str(o, "oid");
      if (const auto* lfs = o.if_contains("lfs"); lfs != nullptr && lfs->is_object()) {
        f.lfs_sha256 = Str(lfs->as_object(), "oid");
        if (f.lfs_sha256.empty()) f.lfs_sha256 = Str(lfs->as_object(), "sha256");
        if (lfs->as_object().contains("size")) f.size = U64(lfs->as_object().if_contains("size"));
      }
      out.push_back(std::move(f));
    }
    url = NextLink(res);
    if (url.starts_with("/")) url = endpoint_ + url;
  }
  return out;
}

Result<std::vector<std::optional<bool>>> HubClient::Preupload(
    const RepoRef& repo, std::string_view revision, const std::vector<PreuploadFile>& files) const {
  std::vector<std::optional<bool>> out(files.size(), false);
  constexpr size_t kBatch = 256;
  std::string what = "preupload to " + repo.Id();
  for (size_t start = 0; start < files.size(); start += kBatch) {
    size_t end = std::min(files.size(), start + kBatch);
    json::array arr;
    for (size_t i = start; i < end; ++i) {
      arr.push_back(json::object{{"path", files[i].path},
                                 {"size", files[i].size},
                                 {"sample", Base64Encode(files[i].sample)}});
    }
    net::HttpRequest req;
    req.method = "POST";
    req.url = endpoint_ + repo.ApiPath() + "/preupload/" + PercentEncode(revision);
    req.headers.emplace_back("Content-Type", "application/json");
    req.body_bytes = json::serialize(json::object{{"files", std::move(arr)}});
    HANGAR_ASSIGN_OR_RETURN(auto res, Call(std::move(req), what));
    HANGAR_ASSIGN_OR_RETURN(auto v, ParseJson(res, what));
    const json::value* list = v.is_object() ? v.as_object().if_contains("files") : nullptr;
    if (list == nullptr || !list->is_array()) {
      return MakeError(ErrorCode::Internal, what + ": no 'files' in the answer");
    }
    for (const auto& e : list->as_array()) {
      if (!e.is_object()) continue;
      const auto& o = e.as_object();
      std::string path = Str(o, "path");
      for (size_t i = start; i < end; ++i) {
        if (files[i].path != path) continue;
        const auto* ignore = o.if_contains("shouldIgnore");
        if (ignore != nullptr && ignore->is_bool() && ignore->as_bool()) {
          out[i] = std::nullopt;
        } else {
          out[i] = Str(o, "uploadMode") == "lfs";
        }
        break;
      }
    }
  }
  return out;
}

Result<UploadSession> HubClient::CreateUpload(const RepoRef& repo, std::string_view sha256,
                                              uint64_t size, uint64_t part_size_hint) const {
  json::object body{{"sha256", sha256}, {"size", size}};
  if (part_size_hint > 0) body["partSize"] = part_size_hint;
  net::HttpRequest req;
  req.method = "POST";
  req.url = endpoint_ + repo.ApiPath() + "/uploads";
  req.headers.emplace_back("Content-Type", "application/json");
  req.body_bytes = json::serialize(body);
  std::string what = "start upload of " + std::string(sha256.substr(0, 12)) + " to " + repo.Id();
  HANGAR_ASSIGN_OR_RETURN(auto res, Call(std::move(req), what));
  HANGAR_ASSIGN_OR_RETURN(auto v, ParseJson(res, what));
  if (!v.is_object()) return MakeError(ErrorCode::Internal, what + ": not a JSON object");
  const auto& o = v.as_object();
  UploadSession s;
  s.size = size;
  std::string state = Str(o, "state");
  if (state == "present" || state == "complete") {
    s.present = true;
    return s;
  }
  s.id = Str(o, "id");
  s.part_size = U64(o.if_contains("partSize"));
  s.part_count = U64(o.if_contains("partCount"));
  bool plausible = !s.id.empty() && s.part_size > 0 &&
                   s.part_count == (size == 0 ? 1 : (size + s.part_size - 1) / s.part_size);
  if (!plausible && !(size == 0 && s.part_count <= 1 && !s.id.empty())) {
    return MakeError(ErrorCode::Internal, what + ": inconsistent upload document (id '" + s.id +
                                              "', partSize " + std::to_string(s.part_size) +
                                              ", partCount " + std::to_string(s.part_count) + ")");
  }
  if (const auto* parts = o.if_contains("parts"); parts != nullptr && parts->is_array()) {
    for (const auto& p : parts->as_array()) {
      if (p.is_object()) s.stored_parts.push_back(U64(p.as_object().if_contains("partNumber")));
    }
  }
  if (const auto* urls = o.if_contains("partUrls"); urls != nullptr && urls->is_array()) {
    for (const auto& u : urls->as_array()) {
      s.part_urls.push_back(u.is_string() ? std::string(u.as_string()) : std::string());
    }
  }
  return s;
}

Result<void> HubClient::PutPart(const UploadSession& s, uint64_t number, ByteSource& body,
                                std::string_view part_sha256) const {
  net::HttpRequest req;
  req.method = "PUT";
  if (number <= s.part_urls.size() && !s.part_urls[number - 1].empty()) {
    req.url = s.part_urls[number - 1];  // presigned object-store URLs get no token (Call)
  } else {
    req.url = endpoint_ + "/api/uploads/" + s.id + "/parts/" + std::to_string(number);
  }
  if (req.url.starts_with(endpoint_ + "/")) {
    req.headers.emplace_back("X-Part-Sha256", std::string(part_sha256));
  }
  req.headers.emplace_back("Content-Type", "application/octet-stream");
  req.body = &body;
  HANGAR_TRY(Call(std::move(req), "upload part " + std::to_string(number)));
  return {};
}

Result<void> HubClient::CompleteUpload(const UploadSession& s) const {
  net::HttpRequest req;
  req.method = "POST";
  req.url = endpoint_ + "/api/uploads/" + s.id + "/complete";
  HANGAR_TRY(Call(std::move(req), "complete upload " + s.id));
  return {};
}

Result<std::string> HubClient::Commit(const RepoRef& repo, std::string_view branch,
                                      std::string_view summary,
                                      const std::vector<CommitOp>& ops) const {
  std::string body = json::serialize(json::object{
      {"key", "header"}, {"value", json::object{{"summary", summary}, {"description", ""}}}});
  body += '\n';
  for (const auto& op : ops) {
    json::object line;
    if (op.lfs) {
      line = json::object{
          {"key", "lfsFile"},
          {"value",
           json::object{
               {"path", op.path}, {"algo", "sha256"}, {"oid", op.sha256}, {"size", op.size}}}};
    } else {
      line = json::object{{"key", "file"},
                          {"value", json::object{{"path", op.path},
                                                 {"content", Base64Encode(op.content)},
                                                 {"encoding", "base64"}}}};
    }
    body += json::serialize(line);
    body += '\n';
  }
  net::HttpRequest req;
  req.method = "POST";
  req.url = endpoint_ + repo.ApiPath() + "/commit/" + PercentEncode(branch);
  req.headers.emplace_back("Content-Type", "application/x-ndjson");
  req.body_bytes = std::move(body);
  std::string what = "commit to " + repo.Id() + "@" + std::string(branch);
  HANGAR_ASSIGN_OR_RETURN(auto res, Call(std::move(req), what));
  HANGAR_ASSIGN_OR_RETURN(auto v, ParseJson(res, what));
  std::string url = v.is_object() ? Str(v.as_object(), "commitUrl") : "";
  if (url.empty()) return MakeError(ErrorCode::Internal, what + ": no commitUrl in the answer");
  return url;
}

Result<void> HubClient::GetFile(const RepoRef& repo, std::string_view commit, std::string_view path,
                                uint64_t offset, uint64_t length, const net::BodySink& sink) const {
  net::HttpRequest req;
  req.url = endpoint_ + "/" + repo.UrlPath() + "/resolve/" + std::string(commit) + "/" +
            PercentEncode(path, /*keep_slash=*/true);
  req.follow_redirects = true;  // redirect download mode: curl drops the token off-host
  if (length > 0) {
    req.headers.emplace_back(
        "Range", "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1));
  }
  HANGAR_ASSIGN_OR_RETURN(auto res, Call(std::move(req), "download " + std::string(path), &sink));
  if (length > 0 && res.status != 206 && !(offset == 0 && res.status == 200)) {
    return MakeError(ErrorCode::Internal,
                     "download " + std::string(path) + ": the server ignored the Range");
  }
  return {};
}

}  // namespace hangar::client
