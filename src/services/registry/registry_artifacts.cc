// RegistryService (registry_service.h): the artifact proxy's reads of a pinned commit.

#include "core/repo_path.h"
#include "services/registry/registry_internal.h"

namespace hangar::services {

Result<ArtifactRef> ParseArtifactPath(std::string_view artifact_path) {
  auto form = [&] {
    return MakeError(ErrorCode::BadRequest,
                     "an artifact path is <models|datasets|spaces>/<ns>/<name>/<40-hex "
                     "commit>[/<path>], not '" +
                         std::string(artifact_path.substr(0, 200)) + "'");
  };
  std::vector<std::string_view> parts;
  std::string_view rest = artifact_path;
  while (parts.size() < 4) {
    size_t slash = rest.find('/');
    parts.push_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) {
      rest = {};
      break;
    }
    rest.remove_prefix(slash + 1);
  }
  if (parts.size() < 4) return form();
  std::optional<RepoType> type;
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space})
    if (parts[0] == RepoCollection(t)) type = t;
  auto commit = Oid::ParseHex(parts[3]);
  if (!type || !commit || parts[3].size() != 40) return form();
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);  // "dir/" lists dir
  if (!rest.empty()) HANGAR_TRY(ValidateReadPath(rest));
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoId::Parse(*type, parts[1], parts[2]));
  return ArtifactRef{std::move(id), *commit, std::string(rest)};
}

Result<ArtifactPath> RegistryService::Artifact(const Principal& who,
                                               std::string_view artifact_path) {
  HANGAR_ASSIGN_OR_RETURN(ArtifactRef ref, ParseArtifactPath(artifact_path));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, ref.repo, Access::Read));
  // The commit must be one of the repo's: a sha of another repo is no artifact here.
  HANGAR_ASSIGN_OR_RETURN(Oid found, content_.ResolveRevision(repo, ref.commit.Hex()));
  return ArtifactPath{std::move(repo), found, std::move(ref.path)};
}

Result<EntryList> RegistryService::ListArtifacts(const ArtifactPath& at) {
  return content_.ListTree(at.repo, at.commit, at.path, /*recursive=*/false);
}

Result<std::pair<Entry, std::unique_ptr<ByteSource>>> RegistryService::OpenArtifact(
    const ArtifactPath& at) {
  HANGAR_ASSIGN_OR_RETURN(Entry file, content_.Stat(at.repo, at.commit, at.path));
  HANGAR_ASSIGN_OR_RETURN(auto bytes, content_.Open(at.repo, file, /*raw=*/false, 0, std::nullopt));
  return std::make_pair(std::move(file), std::move(bytes));
}

}  // namespace hangar::services
