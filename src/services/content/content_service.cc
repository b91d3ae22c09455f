#include "services/content/content_service.h"

#include <algorithm>
#include <utility>

#include "core/util.h"
#include "services/content/content_internal.h"

namespace hangar::services {

namespace {

// A pointer file is ~130 bytes and at most 1023 (git-lfs.md §11.7); blobs outside this
// window are never read to look for one.
constexpr uint64_t kMinPointerSize = 100;
constexpr uint64_t kMaxPointerSize = 1023;
// How long a positive "this repo links that LFS object" answer is trusted.
constexpr int64_t kLinkCacheMs = 10000;

// The cache key of `rest` (a path, say) at `commit` in `repo`.
std::string Key(const RepoHandle& repo, const Oid& commit, std::string_view rest) {
  return content_detail::Key(repo.git_path, commit) + '\0' + std::string(rest);
}

}  // namespace

ContentService::ContentService(git::RepoReader& reader, storage::BlobStore& blobs,
                               db::LfsStore& links, ContentOptions options)
    : reader_(reader),
      blobs_(blobs),
      links_(links),
      options_(std::move(options)),
      caches_(std::make_unique<Caches>(options_)),
      heavy_slots_(std::clamp(options_.max_heavy, 1, 1024)) {}

ContentService::~ContentService() = default;

Result<Oid> ContentService::ResolveRevision(const RepoHandle& repo, std::string_view revision) {
  return reader_.ResolveRevision(repo.git_path, revision);
}

Result<Oid> ContentService::At(const RepoHandle& repo, std::string_view revision) {
  auto commit = reader_.ResolveRevision(repo.git_path, revision);
  if (commit || commit.error().code != ErrorCode::RevisionNotFound) return commit;
  return MakeError(ErrorCode::RevisionNotFound, "revision '" + std::string(revision) +
                                                    "' not found in " + repo.record.Id().Id());
}

Result<ContentService::Slot> ContentService::HeavySlot() {
  if (!heavy_slots_.try_acquire_for(options_.heavy_wait))
    return MakeError(ErrorCode::TooManyRequests,
                     "the server is busy with other blames and searches; try again shortly");
  return Slot(&heavy_slots_);
}

Result<std::optional<git::Pointer>> ContentService::PointerOf(const RepoHandle& repo,
                                                              const Oid& oid, uint64_t size) {
  if (size < kMinPointerSize || size > kMaxPointerSize) return std::optional<git::Pointer>{};
  std::string key(reinterpret_cast<const char*>(oid.bytes.data()), oid.bytes.size());
  if (auto hit = caches_->pointers.Get(key)) return *hit;
  HANGAR_ASSIGN_OR_RETURN(auto text, reader_.ReadBlob(repo.git_path, oid, kMaxPointerSize));
  std::optional<git::Pointer> p = git::ParsePointer(text);
  caches_->pointers.Put(key, p);
  return p;
}

Result<Entry> ContentService::Stat(const RepoHandle& repo, const Oid& commit,
                                   std::string_view path) {
  std::string key = Key(repo, commit, path);
  if (auto hit = caches_->entries.Get(key)) return *hit;
  HANGAR_ASSIGN_OR_RETURN(auto git_entry, reader_.Lookup(repo.git_path, commit, path));
  if (git_entry.is_dir) {
    return MakeError(ErrorCode::EntryNotFound, "'" + std::string(path) + "' is a directory");
  }
  Entry e{std::move(git_entry), std::nullopt};
  HANGAR_ASSIGN_OR_RETURN(auto p, PointerOf(repo, e.git.oid, e.git.size));
  e.lfs = p;
  caches_->entries.Put(key, e);
  return e;
}

Result<std::string> ContentService::RedirectUrl(const RepoHandle& repo, const Entry& file,
                                                std::chrono::seconds ttl) {
  if (!file.lfs) return std::string();
  HANGAR_TRY(EnsureLinked(repo, file));
  return blobs_.RedirectUrl(file.lfs->oid, ttl);
}

namespace {

Error NotUploaded(const Entry& file) {
  return MakeError(ErrorCode::EntryNotFound, "LFS object " + file.lfs->oid.Hex() + " of '" +
                                                 file.git.path +
                                                 "' has not been uploaded to this repo");
}

}  // namespace

Result<void> ContentService::CheckLinked(const RepoHandle& repo, const Entry& file) {
  HANGAR_ASSIGN_OR_RETURN(bool linked, Linked(repo, file));
  // An object a cache brings when it is read counts as there (a HEAD does not fetch it).
  if (linked || (missing_ != nullptr && missing_->Fills(repo.record.id))) return {};
  return NotUploaded(file);
}

Result<void> ContentService::EnsureLinked(const RepoHandle& repo, const Entry& file) {
  HANGAR_ASSIGN_OR_RETURN(bool linked, Linked(repo, file));
  if (linked) return {};
  if (missing_ != nullptr && missing_->Fills(repo.record.id)) {
    // A cache's object: fetched from its upstream (and linked) before it is read, even
    // when the store holds its bytes for another repo.
    return missing_->Fill(repo.record.id, file.lfs->oid, file.lfs->size);
  }
  return NotUploaded(file);
}

Result<bool> ContentService::Linked(const RepoHandle& repo, const Entry& file) {
  if (!file.lfs) return true;
  // Links only go away when a repo is deleted (its id is never reused) or collected; a
  // positive answer is remembered briefly so a warm HEAD does no database work.
  std::string key = std::to_string(repo.record.id) + ":" + file.lfs->oid.Hex();
  int64_t now = NowUnixMillis();
  if (auto until = caches_->links.Get(key); until && *until > now) return true;
  HANGAR_ASSIGN_OR_RETURN(auto linked, links_.IsLinked(repo.record.id, file.lfs->oid));
  if (!linked) return false;
  caches_->links.Put(key, now + kLinkCacheMs);
  return true;
}

Result<std::unique_ptr<ByteSource>> ContentService::Open(const RepoHandle& repo, const Entry& file,
                                                         bool raw, uint64_t offset,
                                                         std::optional<uint64_t> length) {
  if (!file.lfs || raw) return reader_.OpenBlob(repo.git_path, file.git.oid, offset, length);
  HANGAR_TRY(EnsureLinked(repo, file));
  auto src = blobs_.Open(file.lfs->oid, storage::ByteRange{offset, length});
  if (!src && src.error().code == ErrorCode::BlobUnknown) {
    return MakeError(ErrorCode::EntryNotFound,
                     "LFS object " + file.lfs->oid.Hex() + " is missing from storage");
  }
  return src;
}

Result<EntryList> ContentService::ListTree(const RepoHandle& repo, const Oid& commit,
                                           std::string_view dir, bool recursive) {
  std::string key = Key(repo, commit, std::string(dir) + (recursive ? "\1" : "\2"));
  if (auto hit = caches_->trees.Get(key)) return *hit;
  HANGAR_ASSIGN_OR_RETURN(auto listing, reader_.ListTree(repo.git_path, commit, dir, recursive));
  auto out = std::make_shared<std::vector<Entry>>();
  out->reserve(listing.size());
  for (auto& g : listing) {
    Entry e{std::move(g), std::nullopt};
    if (!e.git.is_dir) {
      HANGAR_ASSIGN_OR_RETURN(auto p, PointerOf(repo, e.git.oid, e.git.size));
      e.lfs = p;
    }
    out->push_back(std::move(e));
  }
  EntryList list = std::move(out);
  caches_->trees.Put(key, list, std::max<size_t>(1, list->size()));
  return list;
}

Result<std::vector<Entry>> ContentService::PathsInfo(const RepoHandle& repo, const Oid& commit,
                                                     const std::vector<std::string>& paths) {
  std::vector<Entry> out;
  for (const auto& path : paths) {
    auto g = reader_.Lookup(repo.git_path, commit, path);
    if (!g) {
      if (g.error().code == ErrorCode::EntryNotFound) continue;
      return std::move(g).error();
    }
    Entry e{std::move(*g), std::nullopt};
    if (!e.git.is_dir) {
      HANGAR_ASSIGN_OR_RETURN(auto p, PointerOf(repo, e.git.oid, e.git.size));
      e.lfs = p;
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::optional<std::string>> ContentService::ReadText(const RepoHandle& repo,
                                                            const Oid& commit,
                                                            std::string_view path,
                                                            uint64_t max_bytes) {
  auto e = Stat(repo, commit, path);
  if (!e) {
    if (e.error().code == ErrorCode::EntryNotFound) return std::optional<std::string>{};
    return std::move(e).error();
  }
  if (e->lfs || e->git.size > max_bytes) return std::optional<std::string>{};
  HANGAR_ASSIGN_OR_RETURN(auto text, reader_.ReadBlob(repo.git_path, e->git.oid, max_bytes));
  return std::optional<std::string>(std::move(text));
}

}  // namespace hangar::services
