// Name mappings declared in the store interfaces (user_store.h, repo_store.h,
// viewer_store.h, collection_store.h).
#include "db/collection_store.h"
#include "db/repo_store.h"
#include "db/user_store.h"
#include "db/viewer_store.h"

namespace hangar::db {

std::string_view OrgRoleName(OrgRole r) {
  switch (r) {
    case OrgRole::Read:
      return "read";
    case OrgRole::Write:
      return "write";
    case OrgRole::Admin:
      return "admin";
  }
  return "read";
}

std::optional<OrgRole> ParseOrgRole(std::string_view s) {
  if (s == "read") return OrgRole::Read;
  if (s == "write") return OrgRole::Write;
  if (s == "admin") return OrgRole::Admin;
  return std::nullopt;
}

std::string_view TokenRoleName(TokenRole r) { return r == TokenRole::Write ? "write" : "read"; }

std::optional<TokenRole> ParseTokenRole(std::string_view s) {
  if (s == "read") return TokenRole::Read;
  if (s == "write") return TokenRole::Write;
  return std::nullopt;
}

RepoSort ParseRepoSort(std::string_view s) {
  if (s == "createdAt") return RepoSort::CreatedAt;
  if (s == "id") return RepoSort::Id;
  if (s == "downloads" || s == "downloadsAllTime") return RepoSort::Downloads;
  if (s == "trendingScore" || s == "trending") return RepoSort::Trending;
  if (s == "likes") return RepoSort::Likes;
  return RepoSort::LastModified;
}

std::string_view ExportStatusName(ExportStatus status) {
  switch (status) {
    case ExportStatus::Pending:
      return "pending";
    case ExportStatus::Running:
      return "running";
    case ExportStatus::Ready:
      return "ready";
    case ExportStatus::Failed:
      return "failed";
  }
  return "pending";
}

std::optional<ExportStatus> ParseExportStatus(std::string_view name) {
  if (name == "pending") return ExportStatus::Pending;
  if (name == "running") return ExportStatus::Running;
  if (name == "ready") return ExportStatus::Ready;
  if (name == "failed") return ExportStatus::Failed;
  return std::nullopt;
}

std::string_view CollectionItemKindName(CollectionItemKind k) {
  switch (k) {
    case CollectionItemKind::Model:
      return "model";
    case CollectionItemKind::Dataset:
      return "dataset";
    case CollectionItemKind::Space:
      return "space";
    case CollectionItemKind::Collection:
      return "collection";
  }
  return "model";
}

std::optional<CollectionItemKind> ParseCollectionItemKind(std::string_view s) {
  if (s == "model") return CollectionItemKind::Model;
  if (s == "dataset") return CollectionItemKind::Dataset;
  if (s == "space") return CollectionItemKind::Space;
  if (s == "collection") return CollectionItemKind::Collection;
  return std::nullopt;
}

CollectionItemKind ItemKindOf(RepoType type) {
  switch (type) {
    case RepoType::Model:
      return CollectionItemKind::Model;
    case RepoType::Dataset:
      return CollectionItemKind::Dataset;
    case RepoType::Space:
      return CollectionItemKind::Space;
  }
  return CollectionItemKind::Model;
}

}  // namespace hangar::db
