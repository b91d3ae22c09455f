#pragma once
// History: log, commit diffs, blame, grep, archives, refs and tags of bare repositories,
// read through the `git` binary (DESIGN.md: "blame/grep/archive/log by the git binary";
// issue #4).
//
// Every function takes the bare repository's directory ("…/acme/bert.git"), runs one git
// process (VerifyCommits and ShowTag say when gpg runs too), parses git's NUL-separated
// machine formats (never its human output) and bounds what it reads: lists are capped,
// long outputs are cut and flagged `truncated`. Commit oids are trusted to be commits of
// the repository (the caller resolved them); request data (paths, patterns, tag names)
// never reaches an option position. Pathspecs are literal (no globs). Path logs use the
// commit-graph's changed-path Bloom filters when the repository has them.
//
// Stateless and thread-safe; every call blocks. Run on the worker pool.
// Errors common to all: RepoNotFound (`repo` is no repository), Unavailable (git timed
// out), Internal (git failed unexpectedly; the message has git's stderr).

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/byte_source.h"
#include "core/oid.h"
#include "core/result.h"

namespace hangar::git {

// An author, committer or tagger line.
struct Person {
  std::string name;
  std::string email;  // without the angle brackets
  int64_t time = 0;   // Unix seconds
};

// The outcome of verifying a commit or tag signature against the server's keyring.
struct SignatureInfo {
  enum class Status {
    None,        // not signed
    Good,        // good signature (whatever the key's trust level)
    UnknownKey,  // signed, but the key is not in the keyring
    Bad,         // the signature does not match the content
    ExpiredKey,  // good, but the signature or its key has expired
    RevokedKey,  // good, but made by a revoked key
    Error,       // could not be checked (gpg missing or failing)
  };
  Status status = Status::None;
  std::string key_id;  // long key id as gpg reports it ("9D377F5C60154ACA"); "" if None
  std::string signer;  // the key's user id ("Test <t@example.com>"); "" when unknown
};

// "none", "good", "unknown_key", "bad", "expired_key", "revoked_key", "error".
std::string_view SignatureStatusName(SignatureInfo::Status status);

// Whether and where to verify signatures. Verifying runs gpg once per signed object;
// unsigned objects cost nothing extra.
struct SignatureCheck {
  bool verify = false;
  std::string gnupg_home;  // the keyring directory, passed to git as GNUPGHOME
};

// One commit of a log.
struct LogEntry {
  Oid id;
  std::vector<Oid> parents;
  Person author, committer;
  std::string subject;                     // first paragraph of the message, lines joined
  std::optional<SignatureInfo> signature;  // set only when verification was asked for
};

// A page of a log, newest first.
struct LogPage {
  std::vector<LogEntry> entries;
  bool has_more = false;  // at least one more commit follows this page
};

// Largest `limit` Log() honours; larger ones are lowered to it.
inline constexpr size_t kMaxLogLimit = 1000;

// Commits reachable from `start` in git log's default order (by commit time, children
// first), skipping `skip`, at most `limit` (capped at kMaxLogLimit). `path` ("" = whole
// repo) limits the log to commits changing that file or anything below that directory
// (default history simplification; no rename following).
// Errors: BadRequest (invalid path), RevisionNotFound (`start` is not in the repo).
Result<LogPage> Log(const std::string& repo, const Oid& start, std::string_view path, size_t skip,
                    size_t limit, const SignatureCheck& check = {});

// The signature status of each of `commits` (same order), one git process (gpg runs for
// the signed ones). Errors: RevisionNotFound (a commit is unknown).
Result<std::vector<SignatureInfo>> VerifyCommits(const std::string& repo,
                                                 std::span<const Oid> commits,
                                                 const std::string& gnupg_home);

// The number of commits reachable from `start` (git rev-list --count).
// Errors: RevisionNotFound.
Result<uint64_t> CountCommits(const std::string& repo, const Oid& start);

// The number of commits reachable from `start` but not from `base` when `base` is an
// ancestor of (or equal to) `start`, so that CountCommits(start) = CountCommits(base) + it;
// nullopt when it is not. Costs the size of the difference, not of the history (one git
// rev-list --left-right --count). Errors: RevisionNotFound.
Result<std::optional<uint64_t>> CountCommitsAfter(const std::string& repo, const Oid& base,
                                                  const Oid& start);

// Bounds of a commit's diff.
struct DiffLimits {
  size_t max_files = 300;             // files listed; the rest only counted
  size_t max_file_bytes = 256 << 10;  // patch bytes kept per file
  size_t max_total_bytes = 2 << 20;   // patch bytes kept for the whole commit
};

// One changed file of a commit.
struct FileDiff {
  enum class Change { Added, Deleted, Modified, Renamed };
  Change change = Change::Modified;
  std::string path;                     // the new path (the old one for deletions)
  std::string old_path;                 // set for renames only
  uint32_t old_mode = 0, new_mode = 0;  // git file modes; 0 on the missing side
  bool binary = false;                  // no line counts, no patch
  uint64_t additions = 0, deletions = 0;
  // Unified diff text from the first "@@" hunk header on; "" for binary files, pure
  // renames and mode changes, and files past DiffLimits::max_total_bytes.
  std::string patch;
  bool truncated = false;  // the patch was cut or left out by the limits
};

// A commit with its full message and its diff.
struct CommitDetail {
  LogEntry commit;
  std::string message;          // the full message
  std::vector<FileDiff> files;  // in git's order (by path), at most max_files
  size_t total_files = 0;       // files changed (>= files.size())
  bool truncated = false;       // some file or patch was left out or cut
};

// `commit` and its diff against its first parent (the empty tree for root commits),
// with rename detection (-M) and line counts (--numstat), bounded by `limits`.
// Errors: RevisionNotFound.
Result<CommitDetail> ShowCommit(const std::string& repo, const Oid& commit,
                                const DiffLimits& limits, const SignatureCheck& check = {});

// The changes of `head` since its merge base with `base` (git diff base...head: what a
// pull request brings), as ShowCommit lists them; `commit` is head's entry and `message`
// is empty. Errors: RevisionNotFound (a commit unknown, or the two share no history).
Result<CommitDetail> CompareCommits(const std::string& repo, const Oid& base, const Oid& head,
                                    const DiffLimits& limits);

// Bounds of a blame; larger files are refused.
struct BlameLimits {
  size_t max_lines = 20000;
  size_t max_bytes = 4 << 20;  // of the file
};

// A commit that some blamed lines come from.
struct BlameCommit {
  Oid id;
  Person author;
  std::string summary;  // first line of the message
};

// One line of a blamed file.
struct BlameLine {
  uint32_t number = 0;       // 1-based line number in the blamed file
  uint32_t orig_number = 0;  // its line number in the file as `commit` had it
  uint32_t commit = 0;       // index into BlameResult::commits
  std::string text;          // without the newline
};

struct BlameResult {
  std::vector<BlameCommit> commits;  // each commit once, in order of first appearance
  std::vector<BlameLine> lines;      // every line of the file, in order
};

// Which commit last changed each line of file `path` as of `commit` (git blame
// --porcelain; follows the file's renames). Errors: BadRequest (invalid path),
// EntryNotFound (no such file in `commit`), PayloadTooLarge (over the limits).
Result<BlameResult> Blame(const std::string& repo, const Oid& commit, std::string_view path,
                          const BlameLimits& limits);

struct GrepOptions {
  bool fixed_string = false;  // the pattern is a literal string; else an extended regex
  bool ignore_case = false;
  size_t max_matches = 200;     // matching lines returned; then `truncated`
  size_t max_line_bytes = 400;  // longer line texts are cut (at a UTF-8 boundary)
  std::string path;             // "" = whole tree; else a file or directory
};

struct GrepMatch {
  std::string path;
  uint32_t line = 0;  // 1-based
  std::string text;   // the line, without newline, at most max_line_bytes
  bool text_truncated = false;
};

struct GrepResult {
  std::vector<GrepMatch> matches;  // by path, then line
  bool truncated = false;          // more matches exist than were returned
};

// Lines of text files in `commit` matching `pattern`, exactly as git grep -I lists them
// (binary files are skipped). Answered from the tree's search snapshot (written on first
// use; search_snapshot.h), else by git grep (a tree over the snapshot limits, or a repo
// with info/attributes); the pattern then goes to git on stdin, so it may start with '-'. No match
// is an empty result. Errors: BadRequest (empty pattern, one containing a newline or NUL, over
// 1,000 bytes, an invalid regex, a regex whose {m,n} repetitions would expand past 256
// extra copies — glibc copies them out, so they cost minutes or crash git — an invalid path).
Result<GrepResult> Grep(const std::string& repo, const Oid& commit, std::string_view pattern,
                        const GrepOptions& options);

enum class ArchiveFormat { TarGz, Zip };

// A stream of `commit`'s tree as a .tar.gz or .zip (git archive), every entry under
// `prefix` (e.g. "bert-main/"; must end with '/'). Nothing is buffered whole; the stream
// fails at its end if git did. Errors: BadRequest (invalid prefix).
Result<std::unique_ptr<ByteSource>> Archive(const std::string& repo, const Oid& commit,
                                            ArchiveFormat format, std::string_view prefix);

// A ref with what a branch or tag list shows.
struct RefInfo {
  std::string name;  // full name: "refs/heads/main", "refs/tags/v1"
  Oid object;        // what the ref points at: a commit, or an annotated tag
  // Filled by DescribeRefs:
  bool described = false;        // the fields below are set
  bool is_commit = false;        // `object` is a commit or an annotated tag of a commit
  bool annotated = false;        // `object` is a tag object
  Oid commit;                    // the commit it peels to
  int64_t commit_time = 0;       // the commit's committer time, Unix seconds
  std::string subject;           // the commit's subject
  std::optional<Person> tagger;  // annotated tags only
  std::string tag_subject;       // annotated tags only: the tag message's subject
};

// Every ref of `repo` with the object it names (symbolic refs resolved, listed under their
// own name; dangling ones left out), sorted by name bytewise. Reads only the ref database,
// no object: a page then describes the refs it shows (DescribeRefs). Errors: RepoNotFound,
// Internal.
Result<std::vector<RefInfo>> ListRefs(const std::string& repo);

// Fills the described fields of each of `refs` (from ListRefs) with what git
// for-each-ref's %(committerdate), %(contents:subject) and %(tagger…) give, reading the
// objects in process (libgit2); a tag of a tag is peeled to its commit. A ref to a tree or
// blob, or to a tag (chain) of one, gets is_commit = false. Errors: Internal (an unreadable
// object), RepoNotFound.
Result<void> DescribeRefs(const std::string& repo, std::span<RefInfo> refs);

// A value that changes whenever a ref of `repo` changes (created, moved, deleted, packed):
// a digest of the identity (inode, size, change time) of packed-refs and of each loose ref
// file (git's "files" ref backend). No git process; a directory walk of refs/. Lets a
// caller keep ListRefs results until the refs move. Errors: RepoNotFound.
Result<std::string> RefsVersion(const std::string& repo);

// An annotated tag.
struct TagInfo {
  std::string name;         // short name: "v1.0"
  Oid id;                   // the tag object
  Oid target;               // the object tagged
  std::string target_type;  // "commit", "tree", "blob" or "tag"
  Person tagger;
  std::string message;                     // without the signature block
  std::optional<SignatureInfo> signature;  // set when verification was asked for
};

// The annotated tag refs/tags/`name`, its signature verified when `check.verify`.
// Errors: BadRequest (invalid name), RevisionNotFound (no such tag, or a lightweight one).
Result<TagInfo> ShowTag(const std::string& repo, std::string_view name,
                        const SignatureCheck& check = {});

}  // namespace hangar::git
