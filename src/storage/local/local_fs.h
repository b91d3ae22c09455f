#pragma once
// POSIX file helpers shared by LocalBlobStore's writer and its multipart staging
// (local_blob_store.cc, local_parts.cc). Internal to storage/local/.

#include <filesystem>
#include <string_view>

#include "core/result.h"
#include "core/sha256.h"

namespace hangar::storage::local_fs {

// Internal error "<what> <path>: <strerror(err)>".
Error IoError(std::string_view what, const std::filesystem::path& path, int err);

// write(2) / pwrite(2) of all of [p, p+n), retrying partial writes and EINTR.
// Errors: Internal naming `path`.
Result<void> WriteAll(int fd, const char* p, size_t n, const std::filesystem::path& path);
Result<void> PWriteAll(int fd, const char* p, size_t n, uint64_t offset,
                       const std::filesystem::path& path);

// fsync(2) of a directory, so a rename or mkdir in it survives a crash. Errors: Internal.
Result<void> SyncDir(const std::filesystem::path& dir);

// Moves the fsynced, verified file `tmp_path` to blob `id`'s place under `blobs_dir`
// (<hex[0:2]>/<hex[2:4]>/<hex>), creating and syncing the fan-out directories. When the
// blob exists already the temporary is dropped and the blob's mtime refreshed (GC's
// grace period counts from the last upload of the bytes). Errors: Internal.
Result<void> PublishFile(const std::filesystem::path& tmp_path,
                         const std::filesystem::path& blobs_dir, const Sha256& id);

}  // namespace hangar::storage::local_fs
