#include "services/content/content_service.h"

#include <span>
#include <utility>

#include "core/repo_path.h"
#include "core/util.h"
#include "services/content/content_internal.h"

namespace hangar::services {

namespace {

using content_detail::IsFinal;
using content_detail::Key;
using content_detail::kOverhead;

// Approximate memory held by cached results, for the byte-bounded caches.
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

Result<git::CommitInfo> ContentService::Commit(const RepoHandle& repo, const Oid& id) {
  return reader_.ReadCommit(repo.git_path, id);
}

Result<std::optional<git::CommitInfo>> ContentService::LastCommit(const RepoHandle& repo,
                                                                  const Oid& commit,
                                                                  std::string_view path) {
  return reader_.LastCommitTouching(repo.git_path, commit, path);
}

Result<std::vector<git::CommitInfo>> ContentService::Log(const RepoHandle& repo, const Oid& start,
                                                         size_t skip, size_t limit) {
  return reader_.Log(repo.git_path, start, skip, limit);
}

Result<uint64_t> ContentService::CountCommits(const RepoHandle& repo, const Oid& start) {
  const std::string key = Key(repo.git_path, start);
  if (auto hit = caches_->counts.Get(key)) return *hit;
  // A new head usually descends from the last one counted: count only the new commits.
  std::optional<uint64_t> n;
  if (auto last = caches_->last_counts.Get(repo.git_path)) {
    // Any failure (say the repo was recreated without that commit) falls back to a count.
    auto added = git::CountCommitsAfter(repo.git_path, last->first, start);
    if (added && *added) n = last->second + **added;
  }
  if (!n) {
    HANGAR_ASSIGN_OR_RETURN(n, git::CountCommits(repo.git_path, start));
  }
  caches_->counts.Put(key, *n);
  caches_->last_counts.Put(repo.git_path, {start, *n});
  return *n;
}

Result<void> ContentService::FillSignatures(const std::string& git_path,
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

Result<AtCommit<git::LogPage>> ContentService::History(const RepoHandle& repo,
                                                       std::string_view revision,
                                                       std::string_view path, size_t skip,
                                                       size_t limit, bool verify_signatures) {
  HANGAR_ASSIGN_OR_RETURN(Oid commit, At(repo, revision));
  limit = std::min(limit, options_.max_log_limit);
  std::string key = Key(repo.git_path, commit) + '\0' + std::string(path) + '\0' +
                    std::to_string(skip) + '\0' + std::to_string(limit);
  std::shared_ptr<const git::LogPage> page;
  if (auto hit = caches_->logs.Get(key)) {
    page = std::move(*hit);
  } else {
    HANGAR_ASSIGN_OR_RETURN(git::LogPage fresh, git::Log(repo.git_path, commit, path, skip, limit));
    page = std::make_shared<const git::LogPage>(std::move(fresh));
    caches_->logs.Put(key, page, key.size() + Weight(*page));
  }
  AtCommit<git::LogPage> result{commit, *page};
  if (verify_signatures && !options_.gnupg_home.empty())
    HANGAR_TRY(FillSignatures(repo.git_path, result.value.entries));
  return result;
}

Result<AtCommit<std::shared_ptr<const git::CommitDetail>>> ContentService::ShowCommit(
    const RepoHandle& repo, std::string_view revision) {
  HANGAR_ASSIGN_OR_RETURN(Oid commit, At(repo, revision));
  const bool verify = !options_.gnupg_home.empty();
  const std::string key = Key(repo.git_path, commit);
  using Out = AtCommit<std::shared_ptr<const git::CommitDetail>>;
  if (auto hit = caches_->commits.Get(key)) {
    std::shared_ptr<const git::CommitDetail> detail = std::move(*hit);
    if (!verify || IsFinal(*detail->commit.signature)) return Out{commit, detail};
    // The verdict was not final (e.g. the key was unknown): ask gpg again.
    HANGAR_ASSIGN_OR_RETURN(
        auto sig, git::VerifyCommits(repo.git_path, std::span(&commit, 1), options_.gnupg_home));
    auto copy = std::make_shared<git::CommitDetail>(*detail);
    copy->commit.signature = sig[0];
    if (IsFinal(sig[0])) caches_->commits.Put(key, copy, key.size() + Weight(*copy));
    return Out{commit, std::move(copy)};
  }
  HANGAR_ASSIGN_OR_RETURN(git::CommitDetail fresh,
                          git::ShowCommit(repo.git_path, commit, options_.diff,
                                          git::SignatureCheck{verify, options_.gnupg_home}));
  if (verify && IsFinal(*fresh.commit.signature))
    caches_->signatures.Put(commit.Hex(), *fresh.commit.signature);
  auto detail = std::make_shared<const git::CommitDetail>(std::move(fresh));
  caches_->commits.Put(key, detail, key.size() + Weight(*detail));
  return Out{commit, std::move(detail)};
}

Result<AtCommit<std::shared_ptr<const git::BlameResult>>> ContentService::Blame(
    const RepoHandle& repo, std::string_view revision, std::string_view path) {
  HANGAR_ASSIGN_OR_RETURN(Oid commit, At(repo, revision));
  HANGAR_TRY(ValidateReadPath(path));
  const std::string key = Key(repo.git_path, commit) + '\0' + std::string(path);
  if (auto hit = caches_->blames.Get(key))
    return AtCommit<std::shared_ptr<const git::BlameResult>>{commit, std::move(*hit)};
  // Refuse directories and oversized files before git reads any history.
  HANGAR_ASSIGN_OR_RETURN(git::TreeEntry entry, reader_.Lookup(repo.git_path, commit, path));
  if (entry.is_dir)
    return MakeError(ErrorCode::BadRequest, "'" + std::string(path) + "' is a directory");
  if (entry.size > options_.blame.max_bytes)
    return MakeError(ErrorCode::PayloadTooLarge,
                     "file is too large to blame (" + std::to_string(entry.size) +
                         " bytes; limit " + std::to_string(options_.blame.max_bytes) + ")");
  HANGAR_ASSIGN_OR_RETURN(std::string text,
                          reader_.ReadBlob(repo.git_path, entry.oid, options_.blame.max_bytes));
  if (LooksBinary(text))
    return MakeError(ErrorCode::BadRequest,
                     "'" + std::string(path) + "' is a binary file; blame shows text files only");
  HANGAR_ASSIGN_OR_RETURN(auto slot, HeavySlot());
  HANGAR_ASSIGN_OR_RETURN(git::BlameResult fresh,
                          git::Blame(repo.git_path, commit, path, options_.blame));
  auto blame = std::make_shared<const git::BlameResult>(std::move(fresh));
  caches_->blames.Put(key, blame, key.size() + Weight(*blame));
  return AtCommit<std::shared_ptr<const git::BlameResult>>{commit, std::move(blame)};
}

Result<AtCommit<git::GrepResult>> ContentService::Grep(const RepoHandle& repo,
                                                       std::string_view revision,
                                                       std::string_view pattern,
                                                       git::GrepOptions options) {
  HANGAR_ASSIGN_OR_RETURN(Oid commit, At(repo, revision));
  options.max_matches = std::min(options.max_matches, options_.max_grep_matches);
  const std::string key =
      Key(repo.git_path, commit) + '\0' + std::string(pattern) + '\0' + options.path + '\0' +
      (options.fixed_string ? "F" : "E") + (options.ignore_case ? "i" : "") + '\0' +
      std::to_string(options.max_matches) + '\0' + std::to_string(options.max_line_bytes);
  if (auto hit = caches_->greps.Get(key)) return AtCommit<git::GrepResult>{commit, **hit};
  HANGAR_ASSIGN_OR_RETURN(auto slot, HeavySlot());
  HANGAR_ASSIGN_OR_RETURN(git::GrepResult found,
                          git::Grep(repo.git_path, commit, pattern, options));
  auto shared = std::make_shared<const git::GrepResult>(std::move(found));
  caches_->greps.Put(key, shared, key.size() + Weight(*shared));
  return AtCommit<git::GrepResult>{commit, *shared};
}

Result<ArchiveDownload> ContentService::Archive(const RepoHandle& repo, std::string_view revision,
                                                git::ArchiveFormat format) {
  HANGAR_ASSIGN_OR_RETURN(Oid commit, At(repo, revision));
  const std::string base = repo.record.name + "-" + FileNamePart(revision);
  HANGAR_ASSIGN_OR_RETURN(auto body, git::Archive(repo.git_path, commit, format, base + "/"));
  const bool zip = format == git::ArchiveFormat::Zip;
  return ArchiveDownload{commit, base + (zip ? ".zip" : ".tar.gz"),
                         zip ? "application/zip" : "application/gzip", std::move(body)};
}

}  // namespace hangar::services
