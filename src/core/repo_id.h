#pragma once
// RepoId: a hub repository's type, namespace and name (hf-api.md §1.2–1.3).

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace hangar {

enum class RepoType { Model, Dataset, Space };

// "model", "dataset", "space".
std::string_view RepoTypeName(RepoType t);
// Accepts "model"/"dataset"/"space" and the plural collection names; nullopt otherwise.
std::optional<RepoType> ParseRepoType(std::string_view s);
// "models", "datasets", "spaces" (the /api/{type}s collection).
std::string_view RepoCollection(RepoType t);
// URL prefix of web, file and git routes: "", "datasets/", "spaces/".
std::string_view RepoUrlPrefix(RepoType t);

struct RepoId {
  RepoType type = RepoType::Model;
  std::string ns;    // namespace: a user or org name
  std::string name;  // repo name within the namespace

  // Validates both parts: 1–96 of [A-Za-z0-9_.-], not starting or ending with '-' or '.',
  // no "--" or "..", no ".git" suffix (hf-api.md §1.3). Errors: BadRequest naming the part.
  static Result<RepoId> Parse(RepoType type, std::string_view ns, std::string_view name);

  // "ns/name".
  std::string Id() const { return ns + "/" + name; }
  // "datasets/ns/name" etc.: the path after the hub's base URL.
  std::string UrlPath() const { return std::string(RepoUrlPrefix(type)) + Id(); }

  friend bool operator==(const RepoId&, const RepoId&) = default;
};

// Validates one namespace or repo-name part as RepoId::Parse does; `what` names it in the
// error ("namespace", "repo name"). Errors: BadRequest.
Result<void> ValidateRepoNamePart(std::string_view part, std::string_view what);

}  // namespace hangar
