#include "api/hf/hf_routes.h"

#include "api/hf/hf_handlers.h"

namespace hangar::api {

using http::ApiFamily;
using http::Method;

void AddHfApiRoutes(http::Router& r, HfDeps& d) {
  auto add = [&](Method m, std::string pattern,
                 std::function<Result<http::Response>(http::Request&)> h) {
    r.Add(m, std::move(pattern), ApiFamily::Hf, std::move(h));
  };
  add(Method::Post, "/api/repos/create", [&d](auto& q) { return HandleCreateRepo(d, q); });
  add(Method::Delete, "/api/repos/delete", [&d](auto& q) { return HandleDeleteRepo(d, q); });
  add(Method::Post, "/api/repos/move", [&d](auto& q) { return HandleMoveRepo(d, q); });
  add(Method::Get, "/api/whoami-v2", [&d](auto& q) { return HandleWhoAmI(d, q); });
  add(Method::Post, "/api/validate-yaml", [&d](auto& q) { return HandleValidateYaml(d, q); });
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    std::string base = "/api/" + std::string(RepoCollection(t));
    add(Method::Get, base, [&d, t](auto& q) { return HandleListRepos(d, q, t); });
    std::string repo = base + "/{ns}/{name}";
    add(Method::Get, repo, [&d, t](auto& q) { return HandleRepoInfo(d, q, t, false); });
    add(Method::Get, repo + "/revision/{rest*}",
        [&d, t](auto& q) { return HandleRepoInfo(d, q, t, true); });
    add(Method::Get, repo + "/tree/{rest*}", [&d, t](auto& q) { return HandleTree(d, q, t); });
    add(Method::Post, repo + "/paths-info/{rest*}",
        [&d, t](auto& q) { return HandlePathsInfo(d, q, t); });
    add(Method::Get, repo + "/refs", [&d, t](auto& q) { return HandleRefs(d, q, t); });
    add(Method::Get, repo + "/commits/{rest*}",
        [&d, t](auto& q) { return HandleCommits(d, q, t); });
    add(Method::Post, repo + "/preupload/{rest*}",
        [&d, t](auto& q) { return HandlePreupload(d, q, t); });
    add(Method::Post, repo + "/commit/{rest*}", [&d, t](auto& q) { return HandleCommit(d, q, t); });
    add(Method::Post, repo + "/branch/{rest*}",
        [&d, t](auto& q) { return HandleCreateBranch(d, q, t); });
    add(Method::Delete, repo + "/branch/{rest*}",
        [&d, t](auto& q) { return HandleDeleteBranch(d, q, t); });
    add(Method::Post, repo + "/tag/{rest*}", [&d, t](auto& q) { return HandleCreateTag(d, q, t); });
    add(Method::Delete, repo + "/tag/{rest*}",
        [&d, t](auto& q) { return HandleDeleteTag(d, q, t); });
    add(Method::Put, repo + "/settings", [&d, t](auto& q) { return HandleRepoSettings(d, q, t); });
  }
}

void AddHfFileRoutes(http::Router& r, HfDeps& d) {
  for (RepoType t : {RepoType::Dataset, RepoType::Space, RepoType::Model}) {
    std::string repo = "/" + std::string(RepoUrlPrefix(t)) + "{ns}/{name}";
    r.Add(Method::Get, repo + "/resolve/{rest*}", ApiFamily::Hf,
          [&d, t](auto& q) { return HandleResolve(d, q, t, false); });
    r.Add(Method::Get, repo + "/raw/{rest*}", ApiFamily::Hf,
          [&d, t](auto& q) { return HandleResolve(d, q, t, true); });
  }
}

}  // namespace hangar::api
