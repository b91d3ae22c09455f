// The LFS JSON API: batch, verify, locks (git-lfs.md §11.4–11.6, hf-api.md §7.3, §10.2).

#include <boost/json.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "api/json_util.h"
#include "api/lfs/lfs_handlers.h"

namespace hangar::api::lfs {

namespace json = boost::json;

namespace {

Error Invalid(std::string message) {
  return MakeError(ErrorCode::Unprocessable, std::move(message));
}

// A JSON integer (or an integral double) as int64; nullopt for anything else.
std::optional<int64_t> AsInt64(const json::value& v) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64()) {
    if (v.get_uint64() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<int64_t>(v.get_uint64());
  }
  if (v.is_double()) {
    double d = v.get_double();
    if (std::floor(d) == d && std::fabs(d) < 9.0e15) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

// An action whose href carries the ticket (the hub clients send no Authorization on
// transfers, hf-api.md §7.3). With `ticket`, the same credential also goes in `header`
// for git-lfs, which sends it (git-lfs.md §11.3); transfer routes skip user-token
// authentication, so the router does not mistake it for a token.
json::object Action(std::string href, int64_t expires_in, std::string_view ticket = {}) {
  json::object header;
  if (!ticket.empty()) header["Authorization"] = "Bearer " + std::string(ticket);
  return json::object{
      {"href", std::move(href)}, {"header", std::move(header)}, {"expires_in", expires_in}};
}

json::object RenderObject(const services::LfsBatchObjectResult& r, services::LfsOperation op,
                          const http::Request& req, const RepoId& repo, int64_t expires_in) {
  json::object o{{"oid", r.oid}, {"size", r.size}};
  if (r.error) {
    o["error"] = json::object{{"code", r.error->code}, {"message", r.error->message}};
    return o;
  }
  if (!r.ticket) return o;  // already stored: no actions key at all (§11.4)
  o["authenticated"] = true;
  json::object actions;
  if (op == services::LfsOperation::Upload && r.chunk_size != 0) {
    // HF multipart (hf-api.md §7.4): href = completion, header = chunk_size + part URLs.
    std::string base =
        req.base_url + std::string(kMultipartPath) + *r.ticket + "/" + r.oid + "/" + r.upload_id;
    uint64_t size = static_cast<uint64_t>(r.size);
    uint64_t count = (size + r.chunk_size - 1) / r.chunk_size;
    json::object header;
    header["chunk_size"] = std::to_string(r.chunk_size);
    for (uint64_t i = 1; i <= count; ++i) {
      header[std::to_string(i)] = base + "/part/" + std::to_string(i);
    }
    actions["upload"] = json::object{
        {"href", base + "/complete"}, {"header", std::move(header)}, {"expires_in", expires_in}};
    actions["verify"] = Action(
        req.base_url + "/" + repo.UrlPath() + ".git/info/lfs/objects/verify?ticket=" + *r.ticket,
        expires_in);
  } else if (op == services::LfsOperation::Upload) {
    actions["upload"] = Action(req.base_url + std::string(kUploadPath) + *r.ticket + "/" + r.oid,
                               expires_in, *r.ticket);
    actions["verify"] = Action(
        req.base_url + "/" + repo.UrlPath() + ".git/info/lfs/objects/verify?ticket=" + *r.ticket,
        expires_in);
  } else if (r.download_url) {
    // Presigned object store URL (storage.download_mode = "redirect"): self-authorising,
    // so no Authorization header, which the store would reject next to a signature.
    actions["download"] = Action(*r.download_url, expires_in);
  } else {
    actions["download"] = Action(
        req.base_url + std::string(kDownloadPath) + *r.ticket + "/" + r.oid, expires_in, *r.ticket);
  }
  o["actions"] = std::move(actions);
  return o;
}

http::Response LfsJson(const json::object& body) {
  return http::Response::Json(200, json::serialize(body), kLfsMediaType);
}

}  // namespace

Result<services::LfsBatchRequest> ParseBatch(const json::object& o) {
  services::LfsBatchRequest r;
  const json::value* op = o.if_contains("operation");
  if (!op || !op->is_string()) return Invalid("operation must be \"upload\" or \"download\"");
  if (op->get_string() == "upload") {
    r.operation = services::LfsOperation::Upload;
  } else if (op->get_string() == "download") {
    r.operation = services::LfsOperation::Download;
  } else {
    return Invalid("operation must be \"upload\" or \"download\"");
  }
  if (const json::value* t = o.if_contains("transfers"); t && !t->is_null()) {
    if (!t->is_array()) return Invalid("transfers must be an array of strings");
    for (const auto& e : t->get_array()) {
      if (!e.is_string()) return Invalid("transfers must be an array of strings");
      r.transfers.emplace_back(e.get_string());
    }
  }
  if (const json::value* ref = o.if_contains("ref"); ref && !ref->is_null()) {
    if (!ref->is_object()) return Invalid("ref must be an object");
    if (const json::value* n = ref->get_object().if_contains("name"); n && !n->is_null()) {
      if (!n->is_string()) return Invalid("ref.name must be a string");
      r.ref = std::string(n->get_string());
    }
  }
  if (const json::value* h = o.if_contains("hash_algo"); h && !h->is_null()) {
    if (!h->is_string()) return Invalid("hash_algo must be a string");
    r.hash_algo = std::string(h->get_string());
  }
  const json::value* objs = o.if_contains("objects");
  if (!objs || !objs->is_array()) return Invalid("objects must be an array");
  r.objects.reserve(objs->get_array().size());
  size_t i = 0;
  for (const auto& e : objs->get_array()) {
    std::string where = "objects[" + std::to_string(i++) + "]";
    if (!e.is_object()) return Invalid(where + " must be an object");
    const json::value* oid = e.get_object().if_contains("oid");
    if (!oid || !oid->is_string()) return Invalid(where + ".oid must be a string");
    const json::value* size = e.get_object().if_contains("size");
    std::optional<int64_t> n = size ? AsInt64(*size) : std::nullopt;
    if (!n) return Invalid(where + ".size must be an integer");
    r.objects.push_back({std::string(oid->get_string()), *n});
  }
  return r;
}

Result<RepoId> RepoFromParams(const http::Request& req, RepoType type) {
  std::string_view name = req.Param("name");
  if (name.size() > 4 && name.substr(name.size() - 4) == ".git") name.remove_suffix(4);
  return RepoId::Parse(type, req.Param("ns"), name);
}

// The repo the route names and the request's JSON object body (at most max_body_bytes).
// Errors: RepoNotFound / BadRequest (names), Unprocessable or PayloadTooLarge body.
Result<std::pair<RepoId, json::object>> RepoAndBody(http::Request& req, RepoType type,
                                                    int64_t max_body_bytes) {
  HANGAR_ASSIGN_OR_RETURN(RepoId repo, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(
      json::object body,
      ReadJsonObject(req, static_cast<size_t>(std::max<int64_t>(0, max_body_bytes)),
                     ErrorCode::Unprocessable));
  return std::make_pair(std::move(repo), std::move(body));
}

Result<http::Response> HandleBatch(services::LfsService& lfs, http::Request& req, RepoType type,
                                   int64_t max_body_bytes) {
  HANGAR_ASSIGN_OR_RETURN(auto input, RepoAndBody(req, type, max_body_bytes));
  const auto& [repo, body] = input;
  HANGAR_ASSIGN_OR_RETURN(auto batch, ParseBatch(body));
  HANGAR_ASSIGN_OR_RETURN(auto result, lfs.Batch(req.principal, repo, batch));

  json::array objects;
  objects.reserve(result.objects.size());
  for (const auto& r : result.objects) {
    objects.push_back(RenderObject(r, result.operation, req, repo, result.expires_in));
  }
  return LfsJson(json::object{
      {"transfer", result.transfer}, {"objects", std::move(objects)}, {"hash_algo", "sha256"}});
}

Result<http::Response> HandleVerify(services::LfsService& lfs, http::Request& req, RepoType type,
                                    int64_t max_body_bytes) {
  HANGAR_ASSIGN_OR_RETURN(auto input, RepoAndBody(req, type, max_body_bytes));
  const auto& [repo, body] = input;
  const json::value* oid_v = body.if_contains("oid");
  if (!oid_v || !oid_v->is_string()) return Invalid("oid must be a string");
  auto oid = Sha256::ParseHex(std::string_view(oid_v->get_string()));
  if (!oid) return Invalid("oid must be 64 lower-case hex characters");
  const json::value* size_v = body.if_contains("size");
  std::optional<int64_t> size = size_v ? AsInt64(*size_v) : std::nullopt;
  if (!size || *size < 0) return Invalid("size must be a non-negative integer");

  std::optional<std::string> ticket = req.Query("ticket");
  Result<void> ok = ticket ? lfs.VerifyWithTicket(*ticket, *oid, *size)
                           : lfs.Verify(req.principal, repo, *oid, *size);
  if (!ok) return std::move(ok).error();
  return LfsJson(json::object{});
}

Result<http::Response> HandleLocks(http::Request& req) {
  (void)req;
  return MakeError(ErrorCode::NotFound, "locking not supported");
}

}  // namespace hangar::api::lfs
