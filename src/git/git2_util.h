#pragma once
// Internal to src/git: RAII handles over libgit2 objects, status → Result conversion,
// Oid conversion, and the per-thread cache of open repositories.

#include <git2.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/oid.h"
#include "core/result.h"
#include "git/repo_writer.h"

namespace hangar::git::internal {

template <typename T, void (*Free)(T*)>
struct Git2Deleter {
  void operator()(T* p) const { Free(p); }
};
template <typename T, void (*Free)(T*)>
using Git2Ptr = std::unique_ptr<T, Git2Deleter<T, Free>>;

using RepositoryPtr = Git2Ptr<git_repository, git_repository_free>;
using ReferencePtr = Git2Ptr<git_reference, git_reference_free>;
using ReferenceIteratorPtr = Git2Ptr<git_reference_iterator, git_reference_iterator_free>;
using ObjectPtr = Git2Ptr<git_object, git_object_free>;
using CommitPtr = Git2Ptr<git_commit, git_commit_free>;
using TreePtr = Git2Ptr<git_tree, git_tree_free>;
using TreeEntryPtr = Git2Ptr<git_tree_entry, git_tree_entry_free>;
using TreeBuilderPtr = Git2Ptr<git_treebuilder, git_treebuilder_free>;
using OdbPtr = Git2Ptr<git_odb, git_odb_free>;
using OdbObjectPtr = Git2Ptr<git_odb_object, git_odb_object_free>;
using RevwalkPtr = Git2Ptr<git_revwalk, git_revwalk_free>;
using ConfigPtr = Git2Ptr<git_config, git_config_free>;
using SignaturePtr = Git2Ptr<git_signature, git_signature_free>;
using IndexPtr = Git2Ptr<git_index, git_index_free>;

// Calls git_libgit2_init() once per process and applies our global options.
void EnsureLibgit2();

// An Internal error "<what>: <libgit2 message>" for a failed call returning `rc`.
Error Git2Error(int rc, std::string_view what);

inline git_oid ToGit(const Oid& oid) {
  git_oid g;
  static_assert(sizeof g.id == sizeof oid.bytes);
  __builtin_memcpy(g.id, oid.bytes.data(), sizeof g.id);
  return g;
}
inline Oid FromGit(const git_oid* g) {
  Oid oid;
  __builtin_memcpy(oid.bytes.data(), g->id, oid.bytes.size());
  return oid;
}

// The calling thread's open handle for the bare repository at `path` (kept in a
// thread-local LRU; the pointer stays valid until this thread's next OpenCached call).
// Errors: RepoNotFound, Internal.
Result<git_repository*> OpenCached(const std::string& path);

// At most this much of a commit or tag message is read into what Hangar shows: a pushed
// commit may carry a message of any size, and every page and listing shows messages.
inline constexpr size_t kMaxShownMessage = 64 * 1024;

// The libgit2 signature of `s` (git/repo_writer.h). Errors: BadRequest (libgit2 refuses
// the name or email).
Result<SignaturePtr> MakeSignature(const Signature& s);

// Writes the empty tree into `repo` and returns its id. Errors: Internal.
Result<git_oid> WriteEmptyTree(git_repository* repo);

// The first kMaxShownMessage bytes of `message` (null: empty).
inline std::string_view BoundedMessage(const char* message) {
  std::string_view m = message ? message : "";
  return m.substr(0, kMaxShownMessage);
}

}  // namespace hangar::git::internal
