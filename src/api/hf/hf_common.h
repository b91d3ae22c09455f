#pragma once
// Parsing shared by the HF handlers: repo ids from route params, revision + path splits.

#include <string>
#include <string_view>

#include "core/repo_id.h"
#include "core/result.h"
#include "http/request.h"

namespace hangar::api {

// The repo of a route with {ns} and {name} params (raw, percent-decoded once here).
// Errors: BadRequest naming the bad part.
Result<RepoId> RepoFromParams(const http::Request& req, RepoType type);

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
