// Discussions and pull requests on the web (issue 19 §2, docs/discussions.md): a repo's
// "Community" tab (the list with its filters), a new discussion's form, and a discussion's
// page — its events, a comment form, close / reopen for its author and the repo's writers,
// and for a pull request its diff against the base branch, its conflicts and a merge
// button for those who may merge. Forms carry the session's CSRF token (ReadForm). Rules
// live in services::DiscussionService.

#include "core/util.h"
#include "services/discussion/discussion_service.h"
#include "web/markdown.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

Result<services::DiscussionService*> Discussions(WebDeps& deps) {
  if (!deps.discussions)
    return MakeError(ErrorCode::NotFound, "discussions are not available here");
  return deps.discussions;
}

Result<int> NumParam(const http::Request& req) {
  auto n = ParseRowId(req.Param("num"));
  if (!n || *n > services::kMaxDiscussionNumber || req.Param("num").front() == '0') {
    return MakeError(ErrorCode::NotFound, "no such discussion");
  }
  return static_cast<int>(*n);
}

std::string DiscussionsPath(const RepoId& id) { return RepoPath(id) + "/discussions"; }

// A textarea's text with the browser's CRLF line ends as LF, as the API's clients send it.
std::string TextareaText(std::string text) {
  size_t out = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    text[out++] = text[i];
  }
  text.resize(out);
  return text;
}

Result<http::Response> ListPage(WebDeps& deps, PageContext& ctx, http::Request& req,
                                RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto* discussions, Discussions(deps));
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  db::DiscussionFilter filter;
  Data data = RepoHeader(repo, ctx, repo.record.default_branch, "discussions");
  const std::string status = req.Query("status").value_or("");
  const std::string kind = req.Query("type").value_or("");
  std::string query;
  if (status == "open" || status == "closed") {
    filter.open = status == "open";
    data.set(status, true);
    query = "status=" + status;
  } else if (kind == "pull_request" || kind == "discussion") {
    filter.pull_request = kind == "pull_request";
    data.set(kind == "pull_request" ? "prs" : "talks", true);
    query = "type=" + kind;
  } else {
    data.set("all", true);
  }
  int page = 0;
  if (auto p = req.Query("p"); p && *p != "0") {
    auto n = ParseRowId(*p);
    if (!n || *n > 100000) return MakeError(ErrorCode::BadRequest, "p must be a page number");
    page = static_cast<int>(*n);
  }
  HANGAR_ASSIGN_OR_RETURN(auto listed,
                          discussions->List(ctx.principal, repo.record.Id(), filter, page));
  const std::string base = DiscussionsPath(repo.record.Id());
  List items;
  for (const auto& d : listed.items) {
    Data o;
    o.set("num", std::to_string(d.num));
    o.set("title", d.title);
    o.set("status", std::string(db::DiscussionStatusName(d.status)));
    o.set("pr", d.pull_request);
    o.set("author", d.author_id ? d.author_name : "deleted");
    o.set("when", Ago(d.created_at));
    o.set("comments", std::to_string(d.comments));
    o.set("url", base + "/" + std::to_string(d.num));
    items.push_back(o);
  }
  data.set("items", items);
  data.set("count", std::to_string(listed.count));
  data.set("can_create", ctx.signed_in && ctx.principal.CanWrite());
  const std::string here = base + "?" + (query.empty() ? "" : query + "&");
  if (page > 0) data.set("prev_url", here + "p=" + std::to_string(page - 1));
  if (listed.start + static_cast<int64_t>(listed.items.size()) < listed.count) {
    data.set("next_url", here + "p=" + std::to_string(page + 1));
  }
  return Html(ctx, 200, "Community · " + repo.record.name, "discussions", data);
}

// The new-discussion form, with `title`, `description` and `error` when it is shown again.
Result<http::Response> NewPage(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type,
                               const std::string& title = {}, const std::string& description = {},
                               const std::string& error = {}) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  Data data = RepoHeader(repo, ctx, repo.record.default_branch, "discussions");
  data.set("title", title);
  data.set("description", description);
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 400, "New discussion · " + repo.record.name,
              "discussion_new", data);
}

Result<http::Response> Create(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto* discussions, Discussions(deps));
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoId::Parse(type, req.Param("ns"), req.Param("name")));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  HANGAR_TRY(form.OnlyFields({"title", "description"}));
  services::NewDiscussion in{form.Get("title"), TextareaText(form.Get("description")), false};
  auto num = discussions->Create(ctx.principal, id, in);
  if (!num && num.error().code == ErrorCode::BadRequest) {
    return NewPage(deps, ctx, req, type, in.title, in.description, num.error().message);
  }
  if (!num) return std::move(num).error();
  return SeeOther(ctx, DiscussionsPath(id) + "/" + std::to_string(*num));
}

Result<http::Response> ThreadPage(WebDeps& deps, PageContext& ctx, http::Request& req,
                                  RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto* discussions, Discussions(deps));
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(auto d, discussions->Details(ctx.principal, repo.record.Id(), num, true));
  const auto& rec = d.discussion;
  const std::string base = RepoPath(repo.record.Id());
  Data data = RepoHeader(repo, ctx, repo.record.default_branch, "discussions");
  data.set("num", std::to_string(num));
  data.set("title", rec.title);
  data.set("status", std::string(db::DiscussionStatusName(rec.status)));
  data.set("author", rec.author_id ? rec.author_name : "deleted");
  data.set("when", Ago(rec.created_at));
  const bool open =
      rec.status == db::DiscussionStatus::Open || rec.status == db::DiscussionStatus::Draft;
  data.set("open", open);
  data.set("closed", rec.status == db::DiscussionStatus::Closed);
  data.set("discussion_url", DiscussionsPath(repo.record.Id()) + "/" + std::to_string(num));
  data.set("can_comment", d.can_comment);
  data.set("can_change", d.can_change);
  data.set("can_merge", d.can_merge);
  data.set("mergeable", d.mergeable);
  data.set("signed_in", ctx.signed_in);
  data.set("sign_in", "/login?next=" + EncodeSegment(DiscussionsPath(repo.record.Id()) + "/" +
                                                     std::to_string(num)));
  if (rec.pull_request) {
    data.set("pr", true);
    data.set("pr_ref", "refs/pr/" + std::to_string(num));
    std::string target = rec.base_ref;
    if (target.starts_with("refs/heads/")) target.erase(0, 11);
    data.set("base", target);
    if (!rec.merge_oid.empty()) {
      data.set("merge_oid", rec.merge_oid);
      data.set("merge_short", rec.merge_oid.substr(0, 12));
      data.set("merge_url", base + "/commit/" + rec.merge_oid);
    }
    List conflicts;
    for (const auto& path : d.conflicts) conflicts.push_back(Data(path));
    data.set("has_conflicts", !d.conflicts.empty());
    data.set("unrelated", d.unrelated);
    data.set("conflicts", conflicts);
  }
  List events;
  // Comment HTML (markdown through the sanitizer) is spliced in as fragments.
  std::vector<std::string> html;
  for (const auto& e : d.events) {
    const auto& r = e.record;
    Data o;
    o.set("id", std::to_string(r.id));
    o.set("type", std::string(db::DiscussionEventKindName(r.kind)));
    o.set("author",
          r.author_id || r.kind == db::DiscussionEventKind::Commit ? r.author_name : "deleted");
    o.set("when", Ago(r.created_at));
    switch (r.kind) {
      case db::DiscussionEventKind::Comment:
        o.set("comment", true);
        o.set("edited", r.edited);
        o.set("hidden", r.hidden);
        o.set("html", FragmentMarker(html.size()));
        html.push_back(RenderMarkdown(r.body));
        break;
      case db::DiscussionEventKind::Commit:
        o.set("commit", true);
        o.set("subject", r.body);
        o.set("short", r.detail.substr(0, 12));
        o.set("commit_url", base + "/commit/" + r.detail);
        break;
      case db::DiscussionEventKind::StatusChange:
        o.set("status_change", true);
        o.set("status", r.body);
        break;
      case db::DiscussionEventKind::TitleChange:
        o.set("title_change", true);
        o.set("from", r.detail);
        o.set("to", r.body);
        break;
    }
    events.push_back(o);
  }
  data.set("events", events);
  if (d.diff) {
    data.set("has_diff", true);
    SetDiffFiles(*d.diff, base, d.diff->commit.id.Hex(), data, html);
  }
  return Html(ctx, 200, rec.title + " · #" + std::to_string(num), "discussion", data,
              std::vector<std::string_view>(html.begin(), html.end()));
}

// The forms of a discussion's page: each posts, then goes back to the page.
Result<http::Response> Act(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type,
                           std::string_view action) {
  HANGAR_ASSIGN_OR_RETURN(auto* discussions, Discussions(deps));
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoId::Parse(type, req.Param("ns"), req.Param("name")));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
  if (action == "comment") {
    HANGAR_TRY(form.OnlyFields({"comment"}));
    HANGAR_TRY(discussions->Comment(ctx.principal, id, num, TextareaText(form.Get("comment"))));
  } else if (action == "status") {
    HANGAR_TRY(form.OnlyFields({"status", "comment"}));
    HANGAR_TRY(
        discussions->ChangeStatus(ctx.principal, id, num, form.Get("status"), form.Get("comment")));
  } else {
    HANGAR_TRY(form.OnlyFields({}));
    HANGAR_TRY(discussions->Merge(ctx.principal, id, num, ""));
  }
  return SeeOther(ctx, DiscussionsPath(id) + "/" + std::to_string(num));
}

}  // namespace

void AddDiscussionPages(http::Router& router, WebDeps& deps, RepoType type) {
  if (!deps.discussions) return;
  using M = http::Method;
  using http::Requirement;
  const std::string base = "/" + std::string(RepoUrlPrefix(type)) + "{ns}/{name}/discussions";
  // Reading follows the repo (the service opens it for its metadata); writing needs a
  // signed-in user whose credential may write — the service says which repos.
  AddPage(router, deps, M::Get, base, Requirement::Public(),
          [&deps, type](PageContext& ctx, http::Request& req) {
            return ListPage(deps, ctx, req, type);
          });
  AddPage(router, deps, M::Get, base + "/new", Requirement::WriteRole(),
          [&deps, type](PageContext& ctx, http::Request& req) {
            return NewPage(deps, ctx, req, type);
          });
  AddPage(
      router, deps, M::Post, base + "/new", Requirement::WriteRole(),
      [&deps, type](PageContext& ctx, http::Request& req) { return Create(deps, ctx, req, type); });
  AddPage(router, deps, M::Get, base + "/{num}", Requirement::Public(),
          [&deps, type](PageContext& ctx, http::Request& req) {
            return ThreadPage(deps, ctx, req, type);
          });
  for (std::string_view action : {"comment", "status", "merge"}) {
    AddPage(router, deps, M::Post, base + "/{num}/" + std::string(action), Requirement::WriteRole(),
            [&deps, type, action](PageContext& ctx, http::Request& req) {
              return Act(deps, ctx, req, type, action);
            });
  }
}

}  // namespace hangar::web
