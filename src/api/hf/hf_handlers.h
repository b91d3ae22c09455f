#pragma once
// The HF API handlers; hf_routes.cc binds them to routes. Each parses, calls services,
// renders JSON (hf-api.md sections named per handler).

#include <boost/json.hpp>

#include "api/hf/hf_routes.h"
#include "core/oid.h"
#include "core/repo_id.h"
#include "http/request.h"
#include "http/response.h"

namespace hangar::api {

// §6.1–6.4, §5, §9.1, §6.10
Result<http::Response> HandleCreateRepo(HfDeps& d, http::Request& req);
Result<http::Response> HandleDeleteRepo(HfDeps& d, http::Request& req);
Result<http::Response> HandleMoveRepo(HfDeps& d, http::Request& req);
Result<http::Response> HandleRepoSettings(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleListRepos(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleWhoAmI(HfDeps& d, http::Request& req);
// GET /api/{type}s/{ns}/{name}/auth-check[/write] (huggingface_hub's HfApi.auth_check; the
// pull-through cache asks an upstream Hangar with it): 200 `{}` when the caller may read
// the repo's files (past a gate) or, with /write, write to it; else RepoService::Open's
// refusal (RepoNotFound, GatedRepo, Forbidden).
Result<http::Response> HandleAuthCheck(HfDeps& d, http::Request& req, RepoType type, Access needed);
Result<http::Response> HandleValidateYaml(HfDeps& d, http::Request& req);

// §3, §4, §6.7, §6.8
Result<http::Response> HandleRepoInfo(HfDeps& d, http::Request& req, RepoType type,
                                      bool with_revision);
Result<http::Response> HandleTree(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandlePathsInfo(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleRefs(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleCommits(HfDeps& d, http::Request& req, RepoType type);

// What a repo info (§3.3) and a full listing item (§5.3) read from the repo at `commit`:
// `cardData` (with the tags, pipeline_tag and library_name derived from it) when `card`,
// and `siblings` (with `size`, `blobId`, `lfs` when `blobs`) and `usedStorage` when
// `siblings`. A broken card is left out, not an error. Errors: ContentService's.
Result<void> AddRepoContent(HfDeps& d, const services::RepoHandle& repo, const Oid& commit,
                            bool card, bool siblings, bool blobs, boost::json::object& o);

// §2: /resolve (raw = false) and /raw (raw = true).
Result<http::Response> HandleResolve(HfDeps& d, http::Request& req, RepoType type, bool raw);

// The bytes a /resolve Range asks for: `length` bytes from `offset`.
struct RangeSpec {
  uint64_t offset = 0;
  uint64_t length = 0;
};
// None: serve the whole file; Ok: `out` is set; Unsatisfiable: 416.
enum class RangeResult { None, Ok, Unsatisfiable };
// Parses a single-range `Range: bytes=a-b | a- | -n` against `size` (hf-api.md §2.4).
// Syntax it does not understand (multi-range, other units) is ignored, as RFC 9110 allows.
// On Ok, 0 < out.length and out.offset + out.length <= size.
RangeResult ParseRange(std::string_view h, uint64_t size, RangeSpec& out);

// §7.1 preupload and §7.2 the NDJSON commit (commit_handlers.cc); create_pr=1 (§7.6)
// stores the commit under a new refs/pr/<n>.
Result<http::Response> HandlePreupload(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleCommit(HfDeps& d, http::Request& req, RepoType type);
// The commit route's head check (Requirement::Also): a Content-Length over the 64 MiB a
// commit body may have is 413 before a byte of it is read.
Result<void> CheckCommitLength(const http::Request& req);

// §6.5 branches and §6.6 tags (ref_handlers.cc).
Result<http::Response> HandleCreateBranch(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleDeleteBranch(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleCreateTag(HfDeps& d, http::Request& req, RepoType type);
Result<http::Response> HandleDeleteTag(HfDeps& d, http::Request& req, RepoType type);

}  // namespace hangar::api
