#include "services/content/browse_service.h"

#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>

#include "core/lru.h"
#include "core/repo_path.h"

namespace hangar::services {

namespace {

// Approximate memory held by cached results, for the byte-bounded caches.
constexpr size_t kOverhead = 96;  // per entry, line or match: ids, numbers, allocations
size_t Weight(const git::LogEntry& e) {
  return kOverhead + e.subject.size() + e.author.name.size() + e.author.email.size() +
         e.committer.name.size() + e.committer.email.size() + 20 * e.parents.size();
}
size_t Weight(const git::LogPage& p) {
  size_t w = kOverhead;
  for (const auto& e : p.entries) w += Weight(e);
  return w;
}
size_t Weight(const git::CommitDetail& d) {
  size_t w = Weight(d.commit) + d.message.size();
  for (const auto& f : d.files) w += kOverhead + f.path.size() + f.old_path.size() + f.patch.size();
  return w;
}
size_t Weight(const git::BlameResult& b) {
  size_t w = kOverhead;
  for (const auto& c : b.commits) w += kOverhead + c.summary.size() + c.author.name.size();
  for (const auto& l : b.lines) w += 32 + l.text.size();
  return w;
}
size_t Weight(const git::GrepResult& g) {
  size_t w = kOverhead;
  for (const auto& m : g.matches) w += kOverhead + m.path.size() + m.text.size();
  return w;
}
size_t Weight(const git::RefInfo& r) {
  return 2 * kOverhead + r.name.size() + r.subject.size() + r.tag_subject.size();
}
size_t Weight(const std::vector<git::RefInfo>& refs) {
  size_t w = kOverhead;
  for (const auto& r : refs) w += Weight(r);
  return w;
}
size_t Weight(const git::TagInfo& t) { return 2 * kOverhead + t.message.size() + t.name.size(); }

// Verdicts that may change while the commit stays the same: a key can be imported, gpg
// can come back. Those are checked again instead of being cached.
bool IsFinal(const git::SignatureInfo& s) {
  return s.status != git::SignatureInfo::Status::UnknownKey &&
         s.status != git::SignatureInfo::Status::Error;
}

// A revision as it may appear in a file name.
std::string FileNamePart(std::string_view revision) {
  std::string out;
  for (char c : revision) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    out += keep ? c : '-';
  }
  return out;
}

}  // namespace

struct BrowseService::Caches {
  explicit Caches(const BrowseOptions& o)
      : commits(o.commit_cache_bytes),
        blames(o.blame_cache_bytes),
        logs(o.log_cache_bytes),
        greps(o.grep_cache_bytes),
        refs(o.refs_cache_bytes),
        tags(o.refs_cache_bytes),
        ref_details(o.refs_cache_bytes),
        counts(o.count_cache_entries),
        last_counts(o.count_cache_entries),
        signatures(o.signature_cache_entries) {}
  // Weighed in bytes:
  LruCache<std::shared_ptr<const git::CommitDetail>> commits;  // repo \0 commit
  LruCache<std::shared_ptr<const git::BlameResult>> blames;    // repo \0 commit \0 path
  LruCache<std::shared_ptr<const git::LogPage>> logs;      // repo \0 commit \0 path \0 skip \0 n
  LruCache<std::shared_ptr<const git::GrepResult>> greps;  // repo \0 commit \0 query
  LruCache<std::shared_ptr<const std::vector<git::RefInfo>>> refs;  // repo \0 refs version
  LruCache<std::shared_ptr<const git::TagInfo>> tags;               // repo \0 refs version \0 name
  LruCache<git::RefInfo> ref_details;  // repo \0 object id (name left empty)
  // Counted in entries:
  LruCache<uint64_t> counts;                       // repo \0 commit
  LruCache<std::pair<Oid, uint64_t>> last_counts;  // repo: the last commit counted
  LruCache<git::SignatureInfo> signatures;         // commit
};

BrowseService::BrowseService(RepoService& repos, git::RepoReader& reader, BrowseOptions options)
    : repos_(repos),
      reader_(reader),
      options_(std::move(options)),
      caches_(std::make_unique<Caches>(options_)),
      heavy_slots_(std::clamp(options_.max_heavy, 1, 1024)) {}

BrowseService::~BrowseService() = default;

Result<BrowseService::Slot> BrowseService::HeavySlot() {
  if (!heavy_slots_.try_acquire_for(options_.heavy_wait))
    return MakeError(ErrorCode::TooManyRequests,
                     "the server is busy with other blames and searches; try again shortly");
  return Slot(&heavy_slots_);
}

namespace {

std::string Key(const std::string& repo, const Oid& commit) { return repo + '\0' + commit.Hex(); }

}  // namespace

Result<BrowseService::Resolved> BrowseService::Resolve(const Principal& who, const RepoId& id,
                                                       std::string_view revision) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Read));
  auto commit = reader_.ResolveRevision(repo.git_path, revision);
  if (!commit) {
    if (commit.error().code != ErrorCode::RevisionNotFound) return std::move(commit).error();
    return MakeError(ErrorCode::RevisionNotFound,
                     "revision '" + std::string(revision) + "' not found in " + id.Id());
  }
  return Resolved{std::move(repo), *commit};
}

Result<void> BrowseService::FillSignatures(const std::string& git_path,
                                           std::vector<git::LogEntry>& entries) {
  std::vector<Oid> missing;
  std::vector<size_t> where;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (auto s = caches_->signatures.Get(entries[i].id.Hex())) {
      entries[i].signature = std::move(*s);
      continue;
    }
    // Most commits are unsigned: libgit2 tells so in-process, and no git or gpg runs.
    HANGAR_ASSIGN_OR_RETURN(bool is_signed, reader_.IsSigned(git_path, entries[i].id));
    if (!is_signed) {
      entries[i].signature = git::SignatureInfo{};
      caches_->signatures.Put(entries[i].id.Hex(), *entries[i].signature);
      continue;
    }
    missing.push_back(entries[i].id);
    where.push_back(i);
  }
  if (missing.empty()) return {};
  HANGAR_ASSIGN_OR_RETURN(auto verdicts,
                          git::VerifyCommits(git_path, missing, options_.gnupg_home));
  for (size_t k = 0; k < missing.size(); ++k) {
    if (IsFinal(verdicts[k])) caches_->signatures.Put(missing[k].Hex(), verdicts[k]);
    entries[where[k]].signature = std::move(verdicts[k]);
  }
  return {};
}

Result<AtCommit<git::LogPage>> BrowseService::Log(const Principal& who, const RepoId& id,
                                                  std::string_view revision, std::string_view path,
                                                  size_t skip, size_t limit,
                                                  bool verify_signatures) {
  HANGAR_ASSIGN_OR_RETURN(Resolved r, Resolve(who, id, revision));
  limit = std::min(limit, options_.max_log_limit);
  std::string key = Key(r.repo.git_path, r.commit) + '\0' + std::string(path) + '\0' +
                    std::to_string(skip) + '\0' + std::to_string(limit);
  std::shared_ptr<const git::LogPage> page;
  if (auto hit = caches_->logs.Get(key)) {
    page = std::move(*hit);
  } else {
    HANGAR_ASSIGN_OR_RETURN(git::LogPage fresh,
                            git::Log(r.repo.git_path, r.commit, path, skip, limit));
    page = std::make_shared<const git::LogPage>(std::move(fresh));
    caches_->logs.Put(key, page, key.size() + Weight(*page));
  }
  AtCommit<git::LogPage> result{r.commit, *page};
  if (verify_signatures && !options_.gnupg_home.empty())
    HANGAR_TRY(FillSignatures(r.repo.git_path, result.value.entries));
  return result;
}

Result<AtCommit<std::shared_ptr<const git::CommitDetail>>> BrowseService::Commit(
    const Principal& who, const RepoId& id, std::string_view revision) {
  HANGAR_ASSIGN_OR_RETURN(Resolved r, Resolve(who, id, revision));
  const bool verify = !options_.gnupg_home.empty();
  const std::string key = Key(r.repo.git_path, r.commit);
  using Out = AtCommit<std::shared_ptr<const git::CommitDetail>>;
  if (auto hit = caches_->commits.Get(key)) {
    std::shared_ptr<const git::CommitDetail> detail = std::move(*hit);
    if (!verify || IsFinal(*detail->commit.signature)) return Out{r.commit, detail};
    // The verdict was not final (e.g. the key was unknown): ask gpg again.
    HANGAR_ASSIGN_OR_RETURN(auto sig, git::VerifyCommits(r.repo.git_path, std::span(&r.commit, 1),
                                                         options_.gnupg_home));
    auto copy = std::make_shared<git::CommitDetail>(*detail);
    copy->commit.signature = sig[0];
    if (IsFinal(sig[0])) caches_->commits.Put(key, copy, key.size() + Weight(*copy));
    return Out{r.commit, std::move(copy)};
  }
  HANGAR_ASSIGN_OR_RETURN(git::CommitDetail fresh,
                          git::ShowCommit(r.repo.git_path, r.commit, options_.diff,
                                          git::SignatureCheck{verify, options_.gnupg_home}));
  if (verify && IsFinal(*fresh.commit.signature))
    caches_->signatures.Put(r.commit.Hex(), *fresh.commit.signature);
  auto detail = std::make_shared<const git::CommitDetail>(std::move(fresh));
  caches_->commits.Put(key, detail, key.size() + Weight(*detail));
  return Out{r.commit, std::move(detail)};
}

Result<AtCommit<std::shared_ptr<const git::BlameResult>>> BrowseService::Blame(
    const Principal& who, const RepoId& id, std::string_view revision, std::string_view path) {
  HANGAR_ASSIGN_OR_RETURN(Resolved r, Resolve(who, id, revision));
  HANGAR_TRY(ValidateReadPath(path));
  const std::string key = Key(r.repo.git_path, r.commit) + '\0' + std::string(path);
  if (auto hit = caches_->blames.Get(key))
    return AtCommit<std::shared_ptr<const git::BlameResult>>{r.commit, std::move(*hit)};
  // Refuse directories and oversized files before git reads any history.
  HANGAR_ASSIGN_OR_RETURN(git::TreeEntry entry, reader_.Lookup(r.repo.git_path, r.commit, path));
  if (entry.is_dir)
    return MakeError(ErrorCode::BadRequest, "'" + std::string(path) + "' is a directory");
  if (entry.size > options_.blame.max_bytes)
    return MakeError(ErrorCode::PayloadTooLarge,
                     "file is too large to blame (" + std::to_string(entry.size) +
                         " bytes; limit " + std::to_string(options_.blame.max_bytes) + ")");
  HANGAR_ASSIGN_OR_RETURN(auto slot, HeavySlot());
  HANGAR_ASSIGN_OR_RETURN(git::BlameResult fresh,
                          git::Blame(r.repo.git_path, r.commit, path, options_.blame));
  auto blame = std::make_shared<const git::BlameResult>(std::move(fresh));
  caches_->blames.Put(key, blame, key.size() + Weight(*blame));
  return AtCommit<std::shared_ptr<const git::BlameResult>>{r.commit, std::move(blame)};
}

Result<AtCommit<git::GrepResult>> BrowseService::Grep(const Principal& who, const RepoId& id,
                                                      std::string_view revision,
                                                      std::string_view pattern,
                                                      git::GrepOptions options) {
  HANGAR_ASSIGN_OR_RETURN(Resolved r, Resolve(who, id, revision));
  options.max_matches = std::min(options.max_matches, options_.max_grep_matches);
  const std::string key =
      Key(r.repo.git_path, r.commit) + '\0' + std::string(pattern) + '\0' + options.path + '\0' +
      (options.fixed_string ? "F" : "E") + (options.ignore_case ? "i" : "") + '\0' +
      std::to_string(options.max_matches) + '\0' + std::to_string(options.max_line_bytes);
  if (auto hit = caches_->greps.Get(key)) return AtCommit<git::GrepResult>{r.commit, **hit};
  HANGAR_ASSIGN_OR_RETURN(auto slot, HeavySlot());
  HANGAR_ASSIGN_OR_RETURN(git::GrepResult found,
                          git::Grep(r.repo.git_path, r.commit, pattern, options));
  auto shared = std::make_shared<const git::GrepResult>(std::move(found));
  caches_->greps.Put(key, shared, key.size() + Weight(*shared));
  return AtCommit<git::GrepResult>{r.commit, *shared};
}

Result<ArchiveDownload> BrowseService::Archive(const Principal& who, const RepoId& id,
                                               std::string_view revision,
                                               git::ArchiveFormat format) {
  HANGAR_ASSIGN_OR_RETURN(Resolved r, Resolve(who, id, revision));
  const std::string base = id.name + "-" + FileNamePart(revision);
  HANGAR_ASSIGN_OR_RETURN(auto body, git::Archive(r.repo.git_path, r.commit, format, base + "/"));
  const bool zip = format == git::ArchiveFormat::Zip;
  return ArchiveDownload{r.commit, base + (zip ? ".zip" : ".tar.gz"),
                         zip ? "application/zip" : "application/gzip", std::move(body)};
}

Result<std::shared_ptr<const std::vector<git::RefInfo>>> BrowseService::Refs(const Principal& who,
                                                                             const RepoId& id) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Read));
  // Kept until a ref moves: checking that costs a directory walk, not a git process.
  HANGAR_ASSIGN_OR_RETURN(std::string version, git::RefsVersion(repo.git_path));
  const std::string key = repo.git_path + '\0' + version;
  if (auto hit = caches_->refs.Get(key)) return std::move(*hit);
  HANGAR_ASSIGN_OR_RETURN(auto fresh, git::ListRefs(repo.git_path));
  auto refs = std::make_shared<const std::vector<git::RefInfo>>(std::move(fresh));
  caches_->refs.Put(key, refs, key.size() + Weight(*refs));
  return refs;
}

Result<BrowseService::RefsPage> BrowseService::DescribedRefs(const Principal& who, const RepoId& id,
                                                             size_t first, size_t count) {
  HANGAR_ASSIGN_OR_RETURN(auto all, Refs(who, id));
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Read));
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

Result<std::shared_ptr<const git::TagInfo>> BrowseService::Tag(const Principal& who,
                                                               const RepoId& id,
                                                               std::string_view name) {
  HANGAR_ASSIGN_OR_RETURN(RepoHandle repo, repos_.Open(who, id, Access::Read));
  HANGAR_ASSIGN_OR_RETURN(std::string version, git::RefsVersion(repo.git_path));
  const std::string key = repo.git_path + '\0' + version + '\0' + std::string(name);
  if (auto hit = caches_->tags.Get(key)) return std::move(*hit);
  const bool verify = !options_.gnupg_home.empty();
  auto tag = git::ShowTag(repo.git_path, name, git::SignatureCheck{verify, options_.gnupg_home});
  if (!tag && tag.error().code == ErrorCode::RevisionNotFound)
    return MakeError(ErrorCode::RevisionNotFound, tag.error().message + " in " + id.Id());
  if (!tag) return std::move(tag).error();
  auto shared = std::make_shared<const git::TagInfo>(std::move(*tag));
  if (!verify || IsFinal(*shared->signature))
    caches_->tags.Put(key, shared, key.size() + Weight(*shared));
  return shared;
}

Result<AtCommit<uint64_t>> BrowseService::CommitCount(const Principal& who, const RepoId& id,
                                                      std::string_view revision) {
  HANGAR_ASSIGN_OR_RETURN(Resolved r, Resolve(who, id, revision));
  const std::string key = Key(r.repo.git_path, r.commit);
  if (auto hit = caches_->counts.Get(key)) return AtCommit<uint64_t>{r.commit, *hit};
  // A new head usually descends from the last one counted: count only the new commits.
  std::optional<uint64_t> n;
  if (auto last = caches_->last_counts.Get(r.repo.git_path)) {
    // Any failure (say the repo was recreated without that commit) falls back to a count.
    auto added = git::CountCommitsAfter(r.repo.git_path, last->first, r.commit);
    if (added && *added) n = last->second + **added;
  }
  if (!n) {
    HANGAR_ASSIGN_OR_RETURN(n, git::CountCommits(r.repo.git_path, r.commit));
  }
  caches_->counts.Put(key, *n);
  caches_->last_counts.Put(r.repo.git_path, {r.commit, *n});
  return AtCommit<uint64_t>{r.commit, *n};
}

}  // namespace hangar::services
