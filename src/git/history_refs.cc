// git::ListRefs and git::DescribeRefs (history.h), in process with libgit2. A git
// for-each-ref over the forge benchmark's 1,100 refs read every object in a fresh process
// (~90 ms); here listing reads only the ref database, and a page describes its own refs.

#include <algorithm>

#include "git/git2_util.h"
#include "git/history.h"

namespace hangar::git {

namespace {

using namespace internal;

// The first paragraph of a commit or tag message on one line, as git for-each-ref's
// %(contents:subject) gives it: leading newlines skipped, the paragraph ends at a blank
// line ("\n\n" or "\r\n\r\n"; a line of spaces does not end it), each line break
// becomes one space, and nothing else is trimmed.
std::string Subject(const char* message) {
  std::string_view m = internal::BoundedMessage(message);
  while (m.starts_with('\n') || m.starts_with("\r\n")) m.remove_prefix(m[0] == '\r' ? 2 : 1);
  m = m.substr(0, std::min(m.find("\n\n"), m.find("\r\n\r\n")));
  while (m.ends_with('\n')) m.remove_suffix(m.ends_with("\r\n") ? 2 : 1);
  std::string out;
  out.reserve(m.size());
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '\r' && i + 1 < m.size() && m[i + 1] == '\n') continue;
    out += m[i] == '\n' ? ' ' : m[i];
  }
  return out;
}

// Fills the commit half of `r` (commit, time, subject) from commit `id`. False when `id`
// is not a commit.
Result<bool> FillCommit(git_repository* repo, const git_oid& id, RefInfo& r) {
  git_commit* raw = nullptr;
  int rc = git_commit_lookup(&raw, repo, &id);
  if (rc == GIT_ENOTFOUND) return false;
  if (rc != 0) return Git2Error(rc, "reading commit " + FromGit(&id).Hex());
  CommitPtr commit(raw);
  r.commit = FromGit(&id);
  r.commit_time = git_commit_time(commit.get());
  r.subject = Subject(git_commit_message(commit.get()));
  return true;
}

// Fills the described fields of `r` from its object (see DescribeRefs).
Result<void> Describe(git_repository* repo, RefInfo& r) {
  r.described = true;
  git_oid target = ToGit(r.object);
  git_object* raw = nullptr;
  int rc = git_object_lookup(&raw, repo, &target, GIT_OBJECT_ANY);
  if (rc == GIT_ENOTFOUND) return {};
  if (rc != 0) return Git2Error(rc, "reading " + r.name);
  ObjectPtr object(raw);
  const git_object_t type = git_object_type(object.get());
  if (type == GIT_OBJECT_COMMIT) {
    HANGAR_ASSIGN_OR_RETURN(r.is_commit, FillCommit(repo, target, r));
    return {};
  }
  if (type != GIT_OBJECT_TAG) return {};
  auto* tag = reinterpret_cast<git_tag*>(object.get());
  // A tag of a tag is peeled to its commit too (for-each-ref's %(*objecttype) stops at
  // one level, but /tag, /tree and /commits follow the chain, so the row links there).
  git_oid commit_id = *git_tag_target_id(tag);
  if (git_tag_target_type(tag) != GIT_OBJECT_COMMIT) {
    git_object* raw_peeled = nullptr;
    if (git_object_peel(&raw_peeled, object.get(), GIT_OBJECT_COMMIT) != 0) return {};
    ObjectPtr peeled(raw_peeled);
    commit_id = *git_object_id(peeled.get());
  }
  r.annotated = true;
  r.tag_subject = Subject(git_tag_message(tag));
  Person tagger;
  if (const git_signature* s = git_tag_tagger(tag)) {
    tagger.name = s->name ? s->name : "";
    tagger.email = s->email ? s->email : "";
    tagger.time = s->when.time;
  }
  r.tagger = std::move(tagger);
  HANGAR_ASSIGN_OR_RETURN(r.is_commit, FillCommit(repo, commit_id, r));
  return {};
}

}  // namespace

Result<std::vector<RefInfo>> ListRefs(const std::string& path) {
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(path));
  git_reference_iterator* raw_it = nullptr;
  int rc = git_reference_iterator_new(&raw_it, repo);
  if (rc != 0) return Git2Error(rc, "listing refs");
  ReferenceIteratorPtr it(raw_it);
  std::vector<RefInfo> refs;
  git_reference* raw_ref = nullptr;
  while ((rc = git_reference_next(&raw_ref, it.get())) == 0) {
    ReferencePtr ref(raw_ref);
    RefInfo r;
    r.name = git_reference_name(ref.get());
    if (git_reference_type(ref.get()) == GIT_REFERENCE_DIRECT) {
      r.object = FromGit(git_reference_target(ref.get()));
    } else {  // resolving looks the ref up again: only symbolic refs pay for it
      git_reference* raw_direct = nullptr;
      rc = git_reference_resolve(&raw_direct, ref.get());
      if (rc == GIT_ENOTFOUND) continue;  // a dangling symbolic ref
      if (rc != 0) return Git2Error(rc, "resolving " + r.name);
      ReferencePtr direct(raw_direct);
      r.object = FromGit(git_reference_target(direct.get()));
    }
    refs.push_back(std::move(r));
  }
  if (rc != GIT_ITEROVER) return Git2Error(rc, "listing refs");
  std::sort(refs.begin(), refs.end(),
            [](const RefInfo& a, const RefInfo& b) { return a.name < b.name; });
  return refs;
}

Result<void> DescribeRefs(const std::string& path, std::span<RefInfo> refs) {
  HANGAR_ASSIGN_OR_RETURN(git_repository * repo, OpenCached(path));
  for (RefInfo& r : refs) HANGAR_TRY(Describe(repo, r));
  return {};
}

}  // namespace hangar::git
