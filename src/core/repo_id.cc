#include "core/repo_id.h"

namespace hangar {

std::string_view RepoTypeName(RepoType t) {
  switch (t) {
    case RepoType::Model:
      return "model";
    case RepoType::Dataset:
      return "dataset";
    case RepoType::Space:
      return "space";
  }
  return "model";
}

std::optional<RepoType> ParseRepoType(std::string_view s) {
  if (s == "model" || s == "models") return RepoType::Model;
  if (s == "dataset" || s == "datasets") return RepoType::Dataset;
  if (s == "space" || s == "spaces") return RepoType::Space;
  return std::nullopt;
}

std::string_view RepoCollection(RepoType t) {
  switch (t) {
    case RepoType::Model:
      return "models";
    case RepoType::Dataset:
      return "datasets";
    case RepoType::Space:
      return "spaces";
  }
  return "models";
}

std::string_view RepoUrlPrefix(RepoType t) {
  switch (t) {
    case RepoType::Model:
      return "";
    case RepoType::Dataset:
      return "datasets/";
    case RepoType::Space:
      return "spaces/";
  }
  return "";
}

Result<void> ValidateRepoNamePart(std::string_view part, std::string_view what) {
  auto bad = [&](std::string_view why) {
    return MakeError(ErrorCode::BadRequest,
                     std::string("invalid ") + std::string(what) + ": " + std::string(why));
  };
  if (part.empty()) return bad("it is empty");
  if (part.size() > 96) return bad("longer than 96 characters");
  for (char c : part) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return bad("only letters, digits, '_', '.' and '-' are allowed");
  }
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
    return bad("it may not start or end with '-' or '.'");
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos)
    return bad("it may not contain '--' or '..'");
  if (part.size() >= 4 && part.substr(part.size() - 4) == ".git")
    return bad("it may not end with '.git'");
  return {};
}

Result<RepoId> RepoId::Parse(RepoType type, std::string_view ns, std::string_view name) {
  HANGAR_TRY(ValidateRepoNamePart(ns, "namespace"));
  HANGAR_TRY(ValidateRepoNamePart(name, "repo name"));
  return RepoId{type, std::string(ns), std::string(name)};
}

}  // namespace hangar
