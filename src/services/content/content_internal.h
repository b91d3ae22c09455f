#pragma once
// ContentService's caches and the helpers its three .cc files share; included by those
// files only.

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/lru.h"
#include "services/content/content_service.h"

namespace hangar::services {

struct ContentService::Caches {
  // Trees are weighed by entry count (~150 bytes each): with the default 100,000 that is
  // 500,000 entries, ~75 MB, enough for a 100,000-file repo's full listing and more.
  explicit Caches(const ContentOptions& o)
      : entries(std::max<size_t>(1, o.cache_entries)),
        pointers(std::max<size_t>(1, o.cache_entries)),
        trees(std::max<size_t>(1, o.cache_entries) * 5),
        links(std::max<size_t>(1, o.cache_entries)),
        commits(o.commit_cache_bytes),
        blames(o.blame_cache_bytes),
        logs(o.log_cache_bytes),
        greps(o.grep_cache_bytes),
        refs(o.refs_cache_bytes),
        tags(o.refs_cache_bytes),
        ref_details(o.refs_cache_bytes),
        counts(o.count_cache_entries),
        last_counts(o.count_cache_entries),
        signatures(o.signature_cache_entries) {}
  // Files and trees, counted in entries:
  LruCache<Entry> entries;                         // repo \0 commit \0 path
  LruCache<std::optional<git::Pointer>> pointers;  // blob oid
  LruCache<EntryList> trees;                       // repo \0 commit \0 dir, recursive
  LruCache<int64_t> links;                         // repo id : oid -> linked until (unix ms)
  // History, weighed in bytes:
  LruCache<std::shared_ptr<const git::CommitDetail>> commits;  // repo \0 commit
  LruCache<std::shared_ptr<const git::BlameResult>> blames;    // repo \0 commit \0 path
  LruCache<std::shared_ptr<const git::LogPage>> logs;      // repo \0 commit \0 path \0 skip \0 n
  LruCache<std::shared_ptr<const git::GrepResult>> greps;  // repo \0 commit \0 query
  LruCache<std::shared_ptr<const std::vector<git::RefInfo>>> refs;  // repo \0 refs version
  LruCache<std::shared_ptr<const git::TagInfo>> tags;               // repo \0 refs version \0 name
  LruCache<git::RefInfo> ref_details;  // repo \0 object id (name left empty)
  // History, counted in entries:
  LruCache<uint64_t> counts;                       // repo \0 commit
  LruCache<std::pair<Oid, uint64_t>> last_counts;  // repo: the last commit counted
  LruCache<git::SignatureInfo> signatures;         // commit
};

namespace content_detail {

// The cache key of `commit` in the repo at `git_path`.
inline std::string Key(const std::string& git_path, const Oid& commit) {
  return git_path + '\0' + commit.Hex();
}

// Approximate memory a cached result holds beyond its strings: ids, numbers, allocations.
constexpr size_t kOverhead = 96;

// Verdicts that may change while the commit stays the same: a key can be imported, gpg
// can come back. Those are checked again instead of being cached.
inline bool IsFinal(const git::SignatureInfo& s) {
  return s.status != git::SignatureInfo::Status::UnknownKey &&
         s.status != git::SignatureInfo::Status::Error;
}

}  // namespace content_detail

}  // namespace hangar::services
