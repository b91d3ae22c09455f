#include "api/git/git_routes.h"

#include <string>
#include <string_view>

#include "http/gzip_source.h"

namespace hangar::api {

namespace {

using services::GitRpc;

// Decoded fetch negotiations stay far below this; it only stops gzip bombs.
constexpr uint64_t kMaxDecodedRequest = 256ull << 20;

// The repo a git URL names: `name` may carry git's `.git` suffix (hf-api.md §10.1).
Result<RepoId> RepoFromPath(RepoType type, const http::Request& req) {
  std::string_view name = req.Param("name");
  constexpr std::string_view kGit = ".git";
  if (name.size() > kGit.size() && name.substr(name.size() - kGit.size()) == kGit) {
    name.remove_suffix(kGit.size());
  }
  return RepoId::Parse(type, req.Param("ns"), name);
}

// No caching of anything git says (git-lfs.md §3.2, §4.2, §5).
void SetNoCache(http::Response& res) {
  res.SetHeader("Cache-Control", "no-cache, max-age=0, must-revalidate");
  res.SetHeader("Pragma", "no-cache");
  res.SetHeader("Expires", "Fri, 01 Jan 1980 00:00:00 GMT");
}

// "10.0.0.7:51234" -> "10.0.0.7", "::1:51234" -> "::1": anonymous callers' principal key.
std::string ClientAddress(std::string_view remote) {
  size_t colon = remote.rfind(':');
  return std::string(colon == std::string_view::npos ? remote : remote.substr(0, colon));
}

// GET .../info/refs?service=git-<svc>   (git-lfs.md §3)
Result<http::Response> InfoRefs(services::GitService& git, RepoType type, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromPath(type, req));
  auto service = req.Query("service");
  if (!service) {
    // The dumb protocol (§1): modern git never needs it.
    return MakeError(ErrorCode::Forbidden,
                     "the dumb HTTP protocol is not supported; use a git client from 1.6.6 on");
  }
  HANGAR_ASSIGN_OR_RETURN(auto rpc, services::ParseGitRpc(*service));
  HANGAR_ASSIGN_OR_RETURN(auto ad,
                          git.InfoRefs(req.principal, id, rpc, req.Header("git-protocol")));
  http::Response res;
  res.status = 200;
  res.body = std::move(ad.body);
  res.SetHeader("Content-Type",
                "application/x-" + std::string(services::GitRpcName(rpc)) + "-advertisement");
  SetNoCache(res);
  return res;
}

// POST .../git-<svc>   (git-lfs.md §4)
Result<http::Response> Rpc(services::GitService& git, RepoType type, GitRpc rpc,
                           http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromPath(type, req));
  const std::string name(services::GitRpcName(rpc));
  if (req.Header("content-type") != "application/x-" + name + "-request") {
    return MakeError(ErrorCode::UnsupportedMediaType,
                     "Content-Type must be application/x-" + name + "-request");
  }
  services::GitRpcRequest call;
  std::string_view encoding = req.Header("content-encoding");
  if (encoding == "gzip" || encoding == "x-gzip") {
    call.body = http::GunzipSource(req.body, kMaxDecodedRequest);
  } else if (encoding.empty() || encoding == "identity") {
    call.body = req.body;
  } else {
    return MakeError(ErrorCode::UnsupportedMediaType,
                     "unsupported Content-Encoding '" + std::string(encoding.substr(0, 32)) + "'");
  }
  call.git_protocol = std::string(req.Header("git-protocol"));
  call.client_address = ClientAddress(req.remote);
  HANGAR_ASSIGN_OR_RETURN(auto out, git.Rpc(req.principal, id, rpc, std::move(call)));
  // Size unknown: chunked (§4.2).
  http::Response res =
      http::Response::Stream(200, std::move(out), "application/x-" + name + "-result");
  SetNoCache(res);
  return res;
}

void AddFor(http::Router& router, services::GitService& git, RepoType type) {
  using http::Requirement;
  const std::string base = "/" + std::string(RepoUrlPrefix(type)) + "{ns}/{name}/";
  // info/refs for git-receive-pack needs Write, decided by GitService from ?service=.
  router.Add(http::Method::Get, base + "info/refs", http::ApiFamily::Git,
             Requirement::RepoChallenge(type, Access::Read, true),
             [&git, type](http::Request& req) { return InfoRefs(git, type, req); });
  // Both RPCs may wait for a pack slot (GitAdmission).
  router.Add(http::Method::Post, base + "git-upload-pack", http::ApiFamily::Git,
             Requirement::RepoChallenge(type, Access::Read, true).Waits(),
             [&git, type](http::Request& req) { return Rpc(git, type, GitRpc::UploadPack, req); });
  router.Add(http::Method::Post, base + "git-receive-pack", http::ApiFamily::Git,
             Requirement::RepoChallenge(type, Access::Write, true).Waits(),
             [&git, type](http::Request& req) { return Rpc(git, type, GitRpc::ReceivePack, req); });
}

}  // namespace

void AddGitRoutes(http::Router& router, services::GitService& git) {
  AddFor(router, git, RepoType::Dataset);
  AddFor(router, git, RepoType::Space);
  AddFor(router, git, RepoType::Model);
}

}  // namespace hangar::api
