#include "api/hf/hf_routes.h"

#include "api/hf/hf_handlers.h"

namespace hangar::api {

using http::ApiFamily;
using http::Method;
using http::Requirement;

void AddHfApiRoutes(http::Router& r, HfDeps& d) {
  auto add = [&](Method m, std::string pattern, Requirement need,
                 std::function<Result<http::Response>(http::Request&)> h) {
    r.Add(m, std::move(pattern), ApiFamily::Hf, need, std::move(h));
  };
  // The repo of create, delete and move is in the body: the gate checks the credential's
  // role, RepoService the namespace.
  add(Method::Post, "/api/repos/create", Requirement::WriteRole(),
      [&d](auto& q) { return HandleCreateRepo(d, q); });
  add(Method::Delete, "/api/repos/delete", Requirement::WriteRole(),
      [&d](auto& q) { return HandleDeleteRepo(d, q); });
  add(Method::Post, "/api/repos/move", Requirement::WriteRole(),
      [&d](auto& q) { return HandleMoveRepo(d, q); });
  add(Method::Get, "/api/whoami-v2", Requirement::SignedIn(),
      [&d](auto& q) { return HandleWhoAmI(d, q); });
  add(Method::Post, "/api/validate-yaml", Requirement::Public(),
      [&d](auto& q) { return HandleValidateYaml(d, q); });
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    const Requirement read = Requirement::Repo(t, Access::Read);
    const Requirement write = Requirement::Repo(t, Access::Write);
    std::string base = "/api/" + std::string(RepoCollection(t));
    add(Method::Get, base, Requirement::Public(),
        [&d, t](auto& q) { return HandleListRepos(d, q, t); });
    std::string repo = base + "/{ns}/{name}";
    add(Method::Get, repo, read, [&d, t](auto& q) { return HandleRepoInfo(d, q, t, false); });
    add(Method::Get, repo + "/revision/{rest*}", read,
        [&d, t](auto& q) { return HandleRepoInfo(d, q, t, true); });
    add(Method::Get, repo + "/tree/{rest*}", read,
        [&d, t](auto& q) { return HandleTree(d, q, t); });
    add(Method::Post, repo + "/paths-info/{rest*}", read,
        [&d, t](auto& q) { return HandlePathsInfo(d, q, t); });
    add(Method::Get, repo + "/refs", read, [&d, t](auto& q) { return HandleRefs(d, q, t); });
    add(Method::Get, repo + "/auth-check", read,
        [&d, t](auto& q) { return HandleAuthCheck(d, q, t, Access::Read); });
    add(Method::Get, repo + "/auth-check/write", write,
        [&d, t](auto& q) { return HandleAuthCheck(d, q, t, Access::Write); });
    add(Method::Get, repo + "/commits/{rest*}", read,
        [&d, t](auto& q) { return HandleCommits(d, q, t); });
    add(Method::Post, repo + "/preupload/{rest*}", write,
        [&d, t](auto& q) { return HandlePreupload(d, q, t); });
    add(Method::Post, repo + "/commit/{rest*}",
        write.Also([](http::Request& q) { return CheckCommitLength(q); }),
        [&d, t](auto& q) { return HandleCommit(d, q, t); });
    add(Method::Post, repo + "/branch/{rest*}", write,
        [&d, t](auto& q) { return HandleCreateBranch(d, q, t); });
    add(Method::Delete, repo + "/branch/{rest*}", write,
        [&d, t](auto& q) { return HandleDeleteBranch(d, q, t); });
    add(Method::Post, repo + "/tag/{rest*}", write,
        [&d, t](auto& q) { return HandleCreateTag(d, q, t); });
    add(Method::Delete, repo + "/tag/{rest*}", write,
        [&d, t](auto& q) { return HandleDeleteTag(d, q, t); });
    add(Method::Put, repo + "/settings", Requirement::Repo(t, Access::Admin),
        [&d, t](auto& q) { return HandleRepoSettings(d, q, t); });
  }
}

void AddHfFileRoutes(http::Router& r, HfDeps& d) {
  for (RepoType t : {RepoType::Dataset, RepoType::Space, RepoType::Model}) {
    std::string repo = "/" + std::string(RepoUrlPrefix(t)) + "{ns}/{name}";
    const Requirement read = Requirement::Repo(t, Access::Read);
    r.Add(Method::Get, repo + "/resolve/{rest*}", ApiFamily::Hf, read,
          [&d, t](auto& q) { return HandleResolve(d, q, t, false); });
    r.Add(Method::Get, repo + "/raw/{rest*}", ApiFamily::Hf, read,
          [&d, t](auto& q) { return HandleResolve(d, q, t, true); });
  }
}

}  // namespace hangar::api
