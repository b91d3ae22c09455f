#include "services/content/content_service.h"

#include <utility>

#include "services/content/content_internal.h"

namespace hangar::services {

namespace {

using content_detail::IsFinal;
using content_detail::kOverhead;

size_t Weight(const git::RefInfo& r) {
  return 2 * kOverhead + r.name.size() + r.subject.size() + r.tag_subject.size();
}
size_t Weight(const std::vector<git::RefInfo>& refs) {
  size_t w = kOverhead;
  for (const auto& r : refs) w += Weight(r);
  return w;
}
size_t Weight(const git::TagInfo& t) { return 2 * kOverhead + t.message.size() + t.name.size(); }

}  // namespace

Result<std::vector<git::Ref>> ContentService::Refs(const RepoHandle& repo) {
  return reader_.ListRefs(repo.git_path);
}

Result<std::shared_ptr<const std::vector<git::RefInfo>>> ContentService::RefInfos(
    const RepoHandle& repo) {
  // Kept until a ref moves: checking that costs a directory walk, not a git process.
  HANGAR_ASSIGN_OR_RETURN(std::string version, git::RefsVersion(repo.git_path));
  const std::string key = repo.git_path + '\0' + version;
  if (auto hit = caches_->refs.Get(key)) return std::move(*hit);
  HANGAR_ASSIGN_OR_RETURN(auto fresh, git::ListRefs(repo.git_path));
  auto refs = std::make_shared<const std::vector<git::RefInfo>>(std::move(fresh));
  caches_->refs.Put(key, refs, key.size() + Weight(*refs));
  return refs;
}

Result<ContentService::RefsPage> ContentService::DescribedRefs(const RepoHandle& repo, size_t first,
                                                               size_t count) {
  HANGAR_ASSIGN_OR_RETURN(auto all, RefInfos(repo));
  RefsPage page;
  page.total = all->size();
  first = std::min(first, all->size());
  const size_t last = first + std::min(count, all->size() - first);
  std::vector<git::RefInfo> wanted(all->begin() + first, all->begin() + last);
  std::vector<size_t> missing;  // indexes into `wanted` of refs not described yet
  for (size_t i = 0; i < wanted.size(); ++i) {
    git::RefInfo& r = wanted[i];
    if (auto hit = caches_->ref_details.Get(repo.git_path + '\0' + r.object.Hex())) {
      hit->name = std::move(r.name);
      r = std::move(*hit);
    } else {
      missing.push_back(i);
    }
  }
  std::vector<git::RefInfo> batch;
  for (size_t i : missing) batch.push_back(std::move(wanted[i]));
  HANGAR_TRY(git::DescribeRefs(repo.git_path, batch));
  for (size_t k = 0; k < missing.size(); ++k) {
    git::RefInfo kept = batch[k];
    kept.name.clear();
    const std::string key = repo.git_path + '\0' + kept.object.Hex();
    caches_->ref_details.Put(key, kept, key.size() + Weight(kept));
    wanted[missing[k]] = std::move(batch[k]);
  }
  for (git::RefInfo& r : wanted)
    if (r.is_commit) page.refs.push_back(std::move(r));
  return page;
}

Result<std::shared_ptr<const git::TagInfo>> ContentService::Tag(const RepoHandle& repo,
                                                                std::string_view name) {
  HANGAR_ASSIGN_OR_RETURN(std::string version, git::RefsVersion(repo.git_path));
  const std::string key = repo.git_path + '\0' + version + '\0' + std::string(name);
  if (auto hit = caches_->tags.Get(key)) return std::move(*hit);
  const bool verify = !options_.gnupg_home.empty();
  auto tag = git::ShowTag(repo.git_path, name, git::SignatureCheck{verify, options_.gnupg_home});
  if (!tag && tag.error().code == ErrorCode::RevisionNotFound)
    return MakeError(ErrorCode::RevisionNotFound,
                     tag.error().message + " in " + repo.record.Id().Id());
  if (!tag) return std::move(tag).error();
  auto shared = std::make_shared<const git::TagInfo>(std::move(*tag));
  if (!verify || IsFinal(*shared->signature))
    caches_->tags.Put(key, shared, key.size() + Weight(*shared));
  return shared;
}

}  // namespace hangar::services
