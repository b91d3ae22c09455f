#pragma once
// The export's files on local disk (issue 15): sources linked or copied out of the repo, shards
// stored as blobs, and the cache of shards the queries read, one file per LFS object named by its
// sha256 (content-addressed, so DuckDB's footer cache never sees a file change under it).
// Every file appears under its final name by a rename, never half-written.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/byte_source.h"
#include "core/result.h"
#include "core/sha256.h"
#include "storage/blob_store.h"

namespace hangar::services::viewer {

// The local file of the export shard whose LFS object is `sha256`, under `cache_dir`:
// <cache_dir>/<hex>.parquet.
std::string ShardCachePath(const std::string& cache_dir, const Sha256& sha256);

// Copies `src` to a new file at `path` (truncating one that exists), and into `hasher`
// when given. Errors: those of `src`, Internal when the file cannot be written.
Result<void> CopyToFile(ByteSource& src, const std::filesystem::path& path,
                        Sha256Hasher* hasher = nullptr);

// Puts the bytes of `src` at `path`, a new name: a hard link to the file when `src` is
// a whole local file on the same file system, else a copy (CopyToFile). Errors: CopyToFile's.
Result<void> LinkOrCopy(ByteSource& src, const std::filesystem::path& path);

// Makes the shard at `path` (`size` bytes) a blob (BlobStore::Adopt: moved in when it
// can be, so `path` is gone afterwards) and its cached file (ShardCachePath; a hard link to
// the same bytes when it can be); returns its sha256. Errors: Internal (the file, the
// store, the cache).
Result<Sha256> StoreShard(storage::BlobStore& blobs, const std::string& path, uint64_t size,
                          const std::string& cache_dir);

// StoreShard of each of `files` (path, bytes), `threads` at a time, so that their reads,
// hashes and syncs overlap; the sha256s in order. Errors: the first failure's (the files
// stored before it stay stored: blobs are content-addressed, a retry finds them).
Result<std::vector<Sha256>> StoreShards(storage::BlobStore& blobs,
                                        const std::vector<std::pair<std::string, uint64_t>>& files,
                                        const std::string& cache_dir, size_t threads);

// Puts the file `from` into the cache as `to` (a ShardCachePath): moved, or, when
// `keep_source`, hard-linked (copied across file systems). A `to` that exists is kept. Errors:
// Internal.
Result<void> IntoCache(const std::string& from, const std::string& to, bool keep_source);

// The cached file of blob `sha256`, fetched from `blobs` first when the cache lacks it
// (another replica made the export, or the cache was cleared): copied to a temporary file,
// checked against `sha256`, then renamed. Errors: NotFound (no such blob), Internal
// (a blob whose bytes do not match, the disk).
Result<std::string> FetchShard(storage::BlobStore& blobs, const std::string& cache_dir,
                               const Sha256& sha256);

}  // namespace hangar::services::viewer
