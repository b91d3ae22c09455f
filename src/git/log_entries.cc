// history_internal::ReadLogEntries: the LogEntry of given commits read in process with
// libgit2, as `git log --no-walk=unsorted --format=<kEntryFormat>` prints them, so a path
// history page (git/path_log.h) needs no git child (~10 ms of a cold page on 2 cores).

#include <cstring>

#include "git/git2_util.h"
#include "git/history_internal.h"

namespace hangar::git::history_internal {

namespace {

using namespace internal;

bool IsGitSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The next line of `m` (without its '\n'), consumed from `m`.
std::string_view TakeLine(std::string_view& m) {
  size_t nl = m.find('\n');
  std::string_view line = m.substr(0, nl);
  m.remove_prefix(nl == std::string_view::npos ? m.size() : nl + 1);
  return line;
}

// `line` without trailing whitespace (git's is_blank_line trim).
std::string_view TrimEnd(std::string_view line) {
  while (!line.empty() && IsGitSpace(line.back())) line.remove_suffix(1);
  return line;
}

// Name and email of the `field` ("author"/"committer") line of a raw commit header, as
// git's split_ident_line takes them: the name runs from after "author " to the '<', its
// trailing spaces dropped (leading ones kept); the email lies between '<' and '>'. False
// when the line is missing or malformed.
bool Ident(std::string_view header, std::string_view field, Person& person) {
  while (!header.empty()) {
    std::string_view line = TakeLine(header);
    if (!line.starts_with(field) || line.size() <= field.size() || line[field.size()] != ' ')
      continue;
    line.remove_prefix(field.size() + 1);
    size_t lt = line.find('<'), gt = line.find('>', lt == std::string_view::npos ? 0 : lt);
    if (lt == std::string_view::npos || gt == std::string_view::npos) return false;
    person.name = TrimEnd(line.substr(0, lt));
    person.email = line.substr(lt + 1, gt - lt - 1);
    return true;
  }
  return false;
}

}  // namespace

std::string LogSubject(std::string_view message) {
  // Blank (whitespace-only) lines before the subject are skipped; the first paragraph's
  // lines, each trimmed at its end, are joined by one space.
  while (!message.empty()) {
    std::string_view rest = message;
    if (!TrimEnd(TakeLine(rest)).empty()) break;
    message = rest;
  }
  std::string out;
  while (!message.empty()) {
    std::string_view line = TrimEnd(TakeLine(message));
    if (line.empty()) break;
    if (!out.empty()) out += ' ';
    out += line;
  }
  return out;
}

std::optional<std::vector<LogEntry>> ReadLogEntries(const std::string& repo,
                                                    std::span<const Oid> commits) {
  auto handle = OpenCached(repo);
  if (!handle) return std::nullopt;
  std::vector<LogEntry> out;
  out.reserve(commits.size());
  for (const Oid& id : commits) {
    git_oid g = ToGit(id);
    git_commit* raw = nullptr;
    if (git_commit_lookup(&raw, *handle, &g) != 0) return std::nullopt;
    CommitPtr c(raw);
    // git log re-encodes messages that name another encoding: leave those to git.
    const char* encoding = git_commit_message_encoding(c.get());
    if (encoding && strcasecmp(encoding, "UTF-8") != 0 && strcasecmp(encoding, "utf8") != 0)
      return std::nullopt;
    const git_signature* a = git_commit_author(c.get());
    const git_signature* k = git_commit_committer(c.get());
    const char* message = git_commit_message_raw(c.get());  // null-checked below
    const char* header = git_commit_raw_header(c.get());
    if (!a || !k || !message || !header) return std::nullopt;
    LogEntry e;
    e.id = id;
    for (unsigned i = 0; i < git_commit_parentcount(c.get()); ++i)
      e.parents.push_back(FromGit(git_commit_parent_id(c.get(), i)));
    // Names as git prints them (libgit2 also trims leading spaces); times from libgit2.
    if (!Ident(header, "author", e.author) || !Ident(header, "committer", e.committer))
      return std::nullopt;
    e.author.time = a->when.time;
    e.committer.time = k->when.time;
    e.subject = LogSubject(internal::BoundedMessage(message));
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::string> ReadCommitMessage(const std::string& repo, const Oid& commit) {
  auto handle = OpenCached(repo);
  if (!handle) return std::nullopt;
  git_oid g = ToGit(commit);
  git_commit* raw = nullptr;
  if (git_commit_lookup(&raw, *handle, &g) != 0) return std::nullopt;
  CommitPtr c(raw);
  const char* message = git_commit_message_raw(c.get());
  if (!message) return std::nullopt;
  return std::string(internal::BoundedMessage(message));
}

}  // namespace hangar::git::history_internal
