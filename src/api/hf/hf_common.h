#pragma once
// Parsing shared by the HF handlers: repo ids from route params, revision + path splits.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "core/principal.h"
#include "core/repo_id.h"
#include "core/result.h"
#include "http/request.h"

namespace hangar::api {

// `type` of a create/delete/move body: absent → model (hf-api.md §6.1). Errors:
// BadRequest (not a string, unknown type).
Result<RepoType> TypeFromBody(const boost::json::object& body);

// The repo of a body with {"name", "organization", "type"} as create and delete send them;
// organization null → the caller's own namespace, or "ns/name" in name (hf-api.md §6.1).
// Errors: BadRequest, Unauthorized (anonymous without a namespace).
Result<RepoId> RepoFromBody(const boost::json::object& body, const Principal& who);

// The repo of a route with {ns} and {name} params (raw, percent-decoded once here).
// Errors: BadRequest naming the bad part.
Result<RepoId> RepoFromParams(const http::Request& req, RepoType type);

// A repo's `gated` as the clients read it (hf-api.md §3.2): false, "auto" or "manual".
boost::json::value GatedJson(std::string_view gated);

// The `expand` values of a request (`expand` and `expand[]`, repeated), in order, once
// each. Errors: BadRequest naming one not in `known` ("… for <what>").
Result<std::vector<std::string>> ExpandValues(const http::Request& req,
                                              std::span<const std::string_view> known,
                                              std::string_view what);
// ExpandValues of a repo info or listing request with the keys the clients send for `type`
// (hf-api.md §3.2). A key Hangar has no value for is taken and its field left out.
Result<std::vector<std::string>> ExpandKeys(const http::Request& req, RepoType type);
// Keeps only `_id`, `id` and the `keys` of `o` (nothing to do when `keys` is empty).
void KeepExpanded(boost::json::object& o, const std::vector<std::string>& keys);

struct RevisionAndPath {
  std::string revision;  // decoded once
  std::string path;      // decoded, '' for the root
};

// Splits the raw text after an action keyword (hf-api.md §1.4 rule 2–3): unencoded
// refs/pr/N and refs/convert/X take three segments; otherwise the first segment, decoded
// once, is the revision; the rest, each segment decoded, is the path. The path is
// validated (ValidateReadPath) unless empty. Errors: BadRequest, RevisionNotFound (empty).
Result<RevisionAndPath> SplitRevisionAndPath(std::string_view raw);

}  // namespace hangar::api
