// Commits, commit, blame, refs, tags, search and archives (issue #4). Built on
// ContentService's history (git log/show/blame/grep/archive, caches keyed by immutable oids).

#include <algorithm>
#include <vector>

#include "services/content/content_service.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

constexpr size_t kCommitsPerPage = 50;
constexpr size_t kRefsPerPage = 200;
constexpr size_t kMaxPage = 100000;

std::string ChangeName(git::FileDiff::Change c) {
  switch (c) {
    case git::FileDiff::Change::Added:
      return "added";
    case git::FileDiff::Change::Deleted:
      return "deleted";
    case git::FileDiff::Change::Renamed:
      return "renamed";
    case git::FileDiff::Change::Modified:
      break;
  }
  return "modified";
}

// A verdict badge for templates/_signature.mustache; nothing for unsigned objects.
void SetSignature(Data& d, const std::optional<git::SignatureInfo>& sig) {
  using S = git::SignatureInfo::Status;
  if (!sig || sig->status == S::None) return;
  Data o;
  const char* label = "Unverified";
  const char* css = "warn";
  switch (sig->status) {
    case S::Good:
      label = "Verified";
      css = "ok";
      break;
    case S::UnknownKey:
      label = "Unverified: unknown key";
      break;
    case S::Bad:
      label = "Invalid signature";
      css = "bad";
      break;
    case S::ExpiredKey:
      label = "Signed with an expired key";
      break;
    case S::RevokedKey:
      label = "Signed with a revoked key";
      css = "bad";
      break;
    case S::Error:
      label = "Signature not checked";
      break;
    case S::None:
      break;
  }
  o.set("label", label);
  o.set("css", css);
  o.set("title",
        (sig->signer.empty() ? std::string() : sig->signer + " · ") + "key " + sig->key_id);
  d.set("signature", o);
}

// The unified diff as lines coloured by kind, escaped.
std::string PatchHtml(std::string_view patch) {
  std::string out;
  out.reserve(patch.size() + patch.size() / 4);
  while (!patch.empty()) {
    auto nl = patch.find('\n');
    std::string_view line = patch.substr(0, nl);
    patch = nl == std::string_view::npos ? std::string_view() : patch.substr(nl + 1);
    const char* cls = line.starts_with("@@")  ? "hunk"
                      : line.starts_with('+') ? "add"
                      : line.starts_with('-') ? "del"
                                              : "ctx";
    out += "<span class=\"";
    out += cls;
    out += "\">";
    out += EscapeHtml(line);
    out += "</span>";
  }
  return out;
}

Result<size_t> PageNumber(const http::Request& req) {
  auto p = req.Query("p");
  if (!p || p->empty()) return size_t{0};
  size_t n = 0;
  for (char c : *p) {
    if (c < '0' || c > '9' || n > kMaxPage)
      return MakeError(ErrorCode::BadRequest, "p must be a page number");
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (n > kMaxPage) return MakeError(ErrorCode::BadRequest, "p must be a page number");
  return n;
}

Result<http::Response> Commits(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string rev, DecodedParam(req, "rev"));
  HANGAR_ASSIGN_OR_RETURN(std::string path, DecodedParam(req, "path"));
  while (path.ends_with('/')) path.pop_back();
  HANGAR_ASSIGN_OR_RETURN(size_t page, PageNumber(req));
  HANGAR_ASSIGN_OR_RETURN(auto log, deps.content.History(repo, rev, path, page * kCommitsPerPage,
                                                         kCommitsPerPage, true));
  const std::string base = RepoPath(repo.record.Id());
  Data data = RepoHeader(repo, ctx, rev, "commits");
  if (!path.empty()) data.set("path", path);
  List commits;
  for (const auto& e : log.value.entries) {
    Data o;
    o.set("subject", e.subject);
    o.set("author", e.author.name);
    o.set("when", Ago(e.committer.time));
    o.set("short", ShortOid(e.id));
    o.set("commit_url", base + "/commit/" + e.id.Hex());
    o.set("tree_url", base + "/tree/" + e.id.Hex());
    SetSignature(o, e.signature);
    commits.push_back(o);
  }
  data.set("commits", commits);
  const std::string here =
      base + "/commits/" + EncodeSegment(rev) + (path.empty() ? "" : "/" + EncodePath(path));
  if (page > 0) data.set("prev_url", here + (page == 1 ? "" : "?p=" + std::to_string(page - 1)));
  if (log.value.has_more) data.set("next_url", here + "?p=" + std::to_string(page + 1));
  return Html(ctx, 200, "Commits · " + repo.record.name, "commits", data);
}

Result<http::Response> Commit(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string sha, DecodedParam(req, "sha"));
  HANGAR_ASSIGN_OR_RETURN(auto found, deps.content.ShowCommit(repo, sha));
  const git::CommitDetail& c = *found.value;
  const std::string base = RepoPath(repo.record.Id());
  const std::string hex = c.commit.id.Hex();
  Data data = RepoHeader(repo, ctx, hex, "commits");
  data.set("sha", hex);
  data.set("subject", c.commit.subject);
  auto blank = c.message.find("\n\n");
  if (blank != std::string::npos) data.set("body", c.message.substr(blank + 2));
  data.set("author", c.commit.author.name);
  data.set("author_email", c.commit.author.email);
  data.set("authored", Ago(c.commit.author.time));
  if (c.commit.committer.name != c.commit.author.name ||
      c.commit.committer.time != c.commit.author.time) {
    data.set("committer", c.commit.committer.name);
    data.set("committed", Ago(c.commit.committer.time));
  }
  SetSignature(data, c.commit.signature);
  List parents;
  for (const auto& p : c.commit.parents) {
    Data o;
    o.set("url", base + "/commit/" + p.Hex());
    o.set("short", ShortOid(p));
    parents.push_back(o);
  }
  data.set("parents", parents);
  data.set("tree_url", base + "/tree/" + hex);
  std::vector<std::string> patches;  // spliced in after rendering (Html's fragments)
  SetDiffFiles(c, base, hex, data, patches);
  return Html(ctx, 200, c.commit.subject + " · " + ShortOid(c.commit.id), "commit", data,
              std::vector<std::string_view>(patches.begin(), patches.end()));
}

Result<http::Response> Blame(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string rev, DecodedParam(req, "rev"));
  HANGAR_ASSIGN_OR_RETURN(std::string path, DecodedParam(req, "path"));
  HANGAR_ASSIGN_OR_RETURN(auto found, deps.content.Blame(repo, rev, path));
  const git::BlameResult& b = *found.value;
  const std::string base = RepoPath(repo.record.Id());
  // Built here rather than in the template: a 7,000-line file is 7,000 rows.
  std::vector<std::string> cells(b.commits.size());
  for (size_t i = 0; i < b.commits.size(); ++i) {
    const auto& c = b.commits[i];
    cells[i] = "<a href=\"" + base + "/commit/" + c.id.Hex() + "\" title=\"" +
               EscapeHtml(c.summary) + "\"><code>" + ShortOid(c.id).substr(0, 8) + "</code></a> " +
               EscapeHtml(c.author.name) + ", " + Ago(c.author.time);
  }
  std::string table;
  table.reserve(b.lines.size() * 160);
  table += "<table class=\"code blame\" id=\"blame\">\n";
  uint32_t prev = UINT32_MAX;
  for (const auto& l : b.lines) {
    std::string num = std::to_string(l.number);
    bool start = l.commit != prev;
    prev = l.commit;
    table += start ? "<tr class=\"hunk-start\" id=\"L" : "<tr id=\"L";
    table += num + "\"><td class=\"blame\">" + (start ? cells[l.commit] : std::string()) +
             "</td><td class=\"ln\"><a href=\"#L" + num + "\">" + num +
             "</a></td><td class=\"src\">" + EscapeHtml(l.text) + "</td></tr>\n";
  }
  table += "</table>\n";
  const std::string at = EncodeSegment(rev) + "/" + EncodePath(path);
  Data data = RepoHeader(repo, ctx, rev, "files");
  data.set("crumbs", Crumbs(repo, rev, path));
  data.set("lines", std::to_string(b.lines.size()));
  data.set("commit_count", std::to_string(b.commits.size()));
  data.set("blob_url", base + "/blob/" + at);
  data.set("history_url", base + "/commits/" + at);
  data.set("table", FragmentMarker(0));
  return Html(ctx, 200, "Blame · " + path, "blame", data, {std::move(table)});
}

Result<http::Response> Refs(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(size_t page, PageNumber(req));
  // Pages of kRefsPerPage refs in name order (branches, then other refs, then tags); only
  // the page's refs are read (DescribedRefs), not all of them.
  HANGAR_ASSIGN_OR_RETURN(auto refs,
                          deps.content.DescribedRefs(repo, page * kRefsPerPage, kRefsPerPage));
  const std::string base = RepoPath(repo.record.Id());
  Data data = RepoHeader(repo, ctx, repo.record.default_branch, "refs");
  List branches, tags, others;
  const size_t last = std::min(refs.total, (page + 1) * kRefsPerPage);
  for (const git::RefInfo& r : refs.refs) {
    std::string_view full = r.name;
    bool branch = full.starts_with("refs/heads/"), tag = full.starts_with("refs/tags/");
    std::string name(branch ? full.substr(11) : tag ? full.substr(10) : full);
    Data o;
    o.set("name", name);
    o.set("subject", r.subject);
    o.set("when", Ago(r.commit_time));
    o.set("commit_url", base + "/commit/" + r.commit.Hex());
    o.set("tree_url", base + "/tree/" + EncodeSegment(branch || tag ? name : r.commit.Hex()));
    o.set("archive_url", base + "/archive/" + EncodeSegment(name) + ".tar.gz");
    o.set("zip_url", base + "/archive/" + EncodeSegment(name) + ".zip");
    if (branch) {
      o.set("default", name == repo.record.default_branch);
      branches.push_back(o);
    } else if (tag) {
      if (r.annotated) o.set("tag_url", base + "/tag/" + EncodePath(name));
      tags.push_back(o);
    } else {
      others.push_back(o);
    }
  }
  data.set("branches", branches);
  data.set("tags", tags);
  data.set("has_others", !others.empty());
  data.set("others", others);
  const std::string here = base + "/refs";
  if (page > 0) data.set("prev_url", here + (page == 1 ? "" : "?p=" + std::to_string(page - 1)));
  if (last < refs.total) data.set("next_url", here + "?p=" + std::to_string(page + 1));
  data.set("ref_count", std::to_string(refs.total));
  return Html(ctx, 200, "Branches and tags · " + repo.record.name, "refs", data);
}

Result<http::Response> Tag(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string name, DecodedParam(req, "tag"));
  HANGAR_ASSIGN_OR_RETURN(auto tag, deps.content.Tag(repo, name));
  const std::string base = RepoPath(repo.record.Id());
  Data data = RepoHeader(repo, ctx, name, "refs");
  data.set("tag", tag->name);
  data.set("tagger", tag->tagger.name);
  data.set("when", Ago(tag->tagger.time));
  data.set("message", tag->message);
  data.set("target", tag->target.Hex());
  data.set("target_type", tag->target_type);
  if (tag->target_type == "commit") data.set("commit_url", base + "/commit/" + tag->target.Hex());
  data.set("archive_url", base + "/archive/" + EncodeSegment(name) + ".tar.gz");
  data.set("zip_url", base + "/archive/" + EncodeSegment(name) + ".zip");
  SetSignature(data, tag->signature);
  return Html(ctx, 200, "Tag " + name + " · " + repo.record.name, "tag", data);
}

Result<http::Response> Search(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string rev, DecodedParam(req, "rev"));
  Data data = RepoHeader(repo, ctx, rev, "search");
  std::string q = req.Query("q").value_or("");
  data.set("q", q);
  git::GrepOptions options;
  options.fixed_string = req.Query("regex").value_or("") != "1";
  options.ignore_case = req.Query("i").value_or("") == "1";
  data.set("regex", !options.fixed_string);
  data.set("ignore_case", options.ignore_case);
  if (!q.empty()) {
    HANGAR_ASSIGN_OR_RETURN(auto found, deps.content.Grep(repo, rev, q, options));
    const std::string base = RepoPath(repo.record.Id()) + "/blob/" + found.commit.Hex() + "/";
    List matches;
    for (const auto& m : found.value.matches) {
      Data o;
      o.set("path", m.path);
      o.set("line", std::to_string(m.line));
      o.set("text", m.text);
      o.set("url", base + EncodePath(m.path) + "#L" + std::to_string(m.line));
      matches.push_back(o);
    }
    data.set("searched", true);
    data.set("count", std::to_string(found.value.matches.size()));
    data.set("truncated", found.value.truncated);
    data.set("matches", matches);
  }
  return Html(ctx, 200, "Search · " + repo.record.name, "search", data);
}

Result<http::Response> Archive(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string file, DecodedParam(req, "file"));
  git::ArchiveFormat format;
  std::string rev;
  if (file.ends_with(".tar.gz")) {
    format = git::ArchiveFormat::TarGz;
    rev = file.substr(0, file.size() - 7);
  } else if (file.ends_with(".zip")) {
    format = git::ArchiveFormat::Zip;
    rev = file.substr(0, file.size() - 4);
  } else {
    return MakeError(ErrorCode::NotFound, "archives are REV.tar.gz or REV.zip");
  }
  HANGAR_ASSIGN_OR_RETURN(auto archive, deps.content.Archive(repo, rev, format));
  http::Response res = http::Response::Stream(200, std::move(archive.body), archive.content_type);
  res.SetHeader("Content-Disposition", http::ContentDisposition(archive.filename, true));
  res.SetHeader("X-Repo-Commit", archive.commit.Hex());
  return res;
}

}  // namespace

void SetDiffFiles(const git::CommitDetail& c, const std::string& base, const std::string& rev,
                  Data& data, std::vector<std::string>& patches) {
  uint64_t adds = 0, dels = 0;
  List files;
  size_t n = 0;
  for (const auto& f : c.files) {
    adds += f.additions;
    dels += f.deletions;
    Data o;
    o.set("anchor", "diff-" + std::to_string(n++));
    o.set("change", ChangeName(f.change));
    o.set("path", f.path);
    if (!f.old_path.empty()) o.set("old_path", f.old_path);
    o.set("url", base + "/blob/" + rev + "/" + EncodePath(f.path));
    o.set("additions", std::to_string(f.additions));
    o.set("deletions", std::to_string(f.deletions));
    o.set("binary", f.binary);
    if (!f.patch.empty()) {
      o.set("patch", FragmentMarker(patches.size()));
      patches.push_back(PatchHtml(f.patch));
    }
    o.set("cut", f.truncated && !f.binary);
    files.push_back(o);
  }
  data.set("files", files);
  data.set("total_files", std::to_string(c.total_files));
  data.set("additions", std::to_string(adds));
  data.set("deletions", std::to_string(dels));
  data.set("truncated", c.truncated);
}

void AddHistoryPages(http::Router& router, WebDeps& deps, RepoType type) {
  const std::string prefix = type == RepoType::Dataset ? "/datasets"
                             : type == RepoType::Space ? "/spaces"
                                                       : "";
  const std::string repo = prefix + "/{ns}/{name}";
  auto page = [&deps, type](auto fn) {
    return [&deps, type, fn](PageContext& ctx, http::Request& req) {
      return fn(deps, ctx, req, type);
    };
  };
  using M = http::Method;
  const auto read = http::Requirement::Repo(type, Access::Read);
  AddPage(router, deps, M::Get, repo + "/commits/{rev}", read, page(Commits));
  AddPage(router, deps, M::Get, repo + "/commits/{rev}/{path*}", read, page(Commits));
  AddPage(router, deps, M::Get, repo + "/commit/{sha}", read, page(Commit));
  // Blame and search may wait for one of the heavy slots (ContentService::HeavySlot).
  AddPage(router, deps, M::Get, repo + "/blame/{rev}/{path*}", read.Waits(), page(Blame));
  AddPage(router, deps, M::Get, repo + "/refs", read, page(Refs));
  AddPage(router, deps, M::Get, repo + "/tag/{tag*}", read, page(Tag));
  AddPage(router, deps, M::Get, repo + "/search/{rev}", read.Waits(), page(Search));
  AddPage(router, deps, M::Get, repo + "/archive/{file*}", read, page(Archive));
}

}  // namespace hangar::web
