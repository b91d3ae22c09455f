#pragma once
// LfsRemote: the LFS objects of a mirror's remote (issue 18 §4, docs/mirrors.md) — fetched
// into the blob store for a pull mirror, sent for a push mirror. Over http(s) through the
// remote's batch API (git-lfs.md §11.4, the "basic" transfer); for a local repository in
// git-lfs's own object directory (<repo>/lfs/objects, or <repo>/.git/lfs/objects for a
// non-bare one, each object at ab/cd/<oid>). Every byte fetched is checked against the
// pointer's sha256 and size before it is kept (BlobStore::Create).

#include <chrono>
#include <filesystem>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/sha256.h"
#include "git/pointer.h"
#include "storage/blob_store.h"

namespace hangar::services {

// One action of a batch answer: where to send the request, with which headers.
struct LfsAction {
  std::string href;
  std::vector<std::pair<std::string, std::string>> headers;
};

// One object of a batch answer (git-lfs.md §11.4).
struct LfsBatchObject {
  Sha256 oid;
  uint64_t size = 0;
  std::optional<LfsAction> download, upload, verify;
  std::string error;  // the object's own error message ("" = none)
};

// Parses a batch API response body: {"transfer"?, "objects": [{oid, size, actions?:
// {download|upload|verify: {href, header?}}, error?: {code, message}}]}. Unknown fields are
// ignored; hrefs must be http(s) URLs. Errors: BadRequest saying what is malformed.
Result<std::vector<LfsBatchObject>> ParseLfsBatchResponse(std::string_view body);

// The LFS endpoint git-lfs derives from a git URL (git-lfs.md §11.1): "<url>/info/lfs"
// for a URL ending in ".git", else "<url>.git/info/lfs"; git:// and ssh:// URLs become
// https:// on the same host and path. Errors: BadRequest for another scheme.
Result<std::string> LfsEndpointOf(std::string_view git_url);

struct LfsRemoteOptions {
  // http(s): the LFS endpoint (LfsEndpointOf); "" for a local repository.
  std::string endpoint;
  std::string credential;  // sent to the endpoint (never to hrefs) as "Authorization: Bearer …"
  // Hosts exempt from the public-address rule (ResolveChecked), for the endpoint and every
  // href it answers.
  std::vector<std::string> private_hosts;
  // A local repository: its git directory (bare, or the .git of a non-bare one).
  std::filesystem::path local_git_dir;
  std::chrono::steady_clock::time_point deadline;
  std::stop_token stop;
};

class LfsRemote {
 public:
  explicit LfsRemote(LfsRemoteOptions options) : options_(std::move(options)) {}

  // Brings every object of `pointers` from the remote into `blobs` (also those it holds:
  // the remote proves it has an object by sending its bytes). A local repository's
  // objects are opened without following symbolic links.
  // Errors: BadRequest naming the object the remote does not have or refuses, with its
  // message; DigestInvalid/SizeInvalid (the remote sent other bytes); Unavailable
  // (unreachable, the deadline, a stop); Forbidden/Unauthorized (the credential).
  Result<void> Fetch(const std::vector<git::Pointer>& pointers, storage::BlobStore& blobs);
  // Sends every object of `pointers` (all in `blobs`) that the remote lacks; into a local
  // repository without following symbolic links on the way. Errors: as Fetch; NotFound
  // when `blobs` lacks one; Forbidden (a link in the local repository's LFS directories).
  Result<void> Send(const std::vector<git::Pointer>& pointers, storage::BlobStore& blobs);

 private:
  Result<std::vector<LfsBatchObject>> Batch(std::string_view operation,
                                            const std::vector<git::Pointer>& pointers);
  Result<void> CheckTime() const;
  // What is left until options_.deadline (at least 1 ms).
  std::chrono::milliseconds Remaining() const;
  // Where git-lfs keeps `oid` in a git directory: lfs/objects/ab/cd/<oid>.
  static std::filesystem::path LocalPath(const Sha256& oid);

  LfsRemoteOptions options_;
};

}  // namespace hangar::services
