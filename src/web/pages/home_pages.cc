// Home, listings and profiles (issue #4: "home", "/models … listings", "user and org
// pages"). Listing rules (visibility, filters, paging) are RepoService's.

#include "web/pages/pages.h"

namespace hangar::web {
namespace {

constexpr int kPageSize = 30;

struct SortChoice {
  const char* value;
  const char* label;
  db::RepoSort sort;
};
constexpr SortChoice kSorts[] = {
    {"trending", "Trending", db::RepoSort::Trending},
    {"lastModified", "Recently updated", db::RepoSort::LastModified},
    {"createdAt", "Newest", db::RepoSort::CreatedAt},
    {"downloads", "Most downloads", db::RepoSort::Downloads},
    {"id", "Name", db::RepoSort::Id},
};

Data RepoList(const std::vector<db::RepoRecord>& items) {
  List repos;
  for (const auto& r : items) repos.push_back(RepoItem(r));
  Data d;
  d.set("repos", repos);
  return d;
}

Result<http::Response> Home(WebDeps& deps, PageContext& ctx) {
  Data data;
  db::RepoQuery q;
  q.limit = 10;
  q.sort = db::RepoSort::Trending;
  HANGAR_ASSIGN_OR_RETURN(auto trending, deps.repos.List(ctx.principal, q));
  q.sort = db::RepoSort::LastModified;
  HANGAR_ASSIGN_OR_RETURN(auto recent, deps.repos.List(ctx.principal, q));
  data.set("trending", RepoList(trending.items));
  data.set("recent", RepoList(recent.items));
  return Html(ctx, 200, "Home", "home", data);
}

// The listing URL with `cursor` for the next page, keeping the other parameters.
std::string PageUrl(std::string_view base, const http::Request& req, std::string_view cursor) {
  std::string url(base);
  char sep = '?';
  for (const char* key : {"search", "author", "tag", "library", "pipeline_tag", "sort"}) {
    auto v = req.Query(key);
    if (!v || v->empty()) continue;
    url += sep;
    url += key;
    url += '=';
    url += EncodeSegment(*v);
    sep = '&';
  }
  if (!cursor.empty()) url += std::string(1, sep) + "cursor=" + EncodeSegment(cursor);
  return url;
}

Result<http::Response> Listing(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  db::RepoQuery q;
  q.type = type;
  q.limit = kPageSize;
  q.search = req.Query("search").value_or("");
  q.author = req.Query("author").value_or("");
  if (auto tag = req.Query("tag"); tag && !tag->empty()) q.tags.push_back(*tag);
  q.library = req.Query("library").value_or("");
  q.pipeline = req.Query("pipeline_tag").value_or("");
  q.cursor = req.Query("cursor").value_or("");
  std::string sort = req.Query("sort").value_or("trending");
  List sorts;
  for (const auto& s : kSorts) {
    Data o;
    o.set("value", s.value);
    o.set("label", s.label);
    o.set("selected", sort == s.value);
    if (sort == s.value) q.sort = s.sort;
    sorts.push_back(o);
  }
  HANGAR_ASSIGN_OR_RETURN(auto page, deps.repos.List(ctx.principal, q));
  std::string base = "/" + std::string(RepoTypeName(type)) + "s";
  Data data = RepoList(page.items);
  const char* heading = type == RepoType::Model     ? "Models"
                        : type == RepoType::Dataset ? "Datasets"
                                                    : "Spaces";
  data.set("heading", heading);
  data.set("action", base);
  data.set("search", q.search);
  data.set("author", q.author);
  data.set("tag", q.tags.empty() ? std::string() : q.tags.front());
  data.set("library", q.library);
  data.set("pipeline", q.pipeline);
  data.set("sorts", sorts);
  if (!q.cursor.empty()) data.set("prev_url", PageUrl(base, req, ""));
  if (!page.next_cursor.empty()) data.set("next_url", PageUrl(base, req, page.next_cursor));
  return Html(ctx, 200, heading, "listing", data);
}

Result<http::Response> Profile(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(std::string name, DecodedParam(req, "name"));
  HANGAR_ASSIGN_OR_RETURN(auto kind, deps.accounts.NamespaceKind(name));
  Data data;
  data.set("name", name);
  if (kind == db::NamespaceKind::User) {
    HANGAR_ASSIGN_OR_RETURN(auto user, deps.accounts.FindUser(name));
    data.set("fullname", user.fullname);
    data.set("kind", "User");
  } else if (kind == db::NamespaceKind::Org) {
    HANGAR_ASSIGN_OR_RETURN(auto org, deps.accounts.FindOrg(name));
    HANGAR_ASSIGN_OR_RETURN(auto members, deps.accounts.Members(org.id));
    data.set("fullname", org.fullname);
    data.set("kind", "Organization");
    data.set("has_members", !members.empty());
    data.set("members", MemberList(members));
    if (deps.access.NamespaceAccess(ctx.principal, name) == services::Access::Admin)
      data.set("manage_url", "/settings/org/" + EncodeSegment(name));
  } else {
    return MakeError(ErrorCode::NotFound, "no user or organization named '" + name + "'");
  }
  HANGAR_TRY(SetCollections(deps, ctx, name, data));
  db::RepoQuery q;
  q.author = name;
  q.limit = kPageSize;
  q.cursor = req.Query("cursor").value_or("");
  HANGAR_ASSIGN_OR_RETURN(auto page, deps.repos.List(ctx.principal, q));
  List repos;
  for (const auto& r : page.items) repos.push_back(RepoItem(r));
  data.set("repos", repos);
  std::string base = "/" + EncodeSegment(name);
  if (!q.cursor.empty()) data.set("prev_url", base);
  if (!page.next_cursor.empty())
    data.set("next_url", base + "?cursor=" + EncodeSegment(page.next_cursor));
  return Html(ctx, 200, name, "profile", data);
}

}  // namespace

Data RepoItem(const db::RepoRecord& r) {
  Data o;
  o.set("id", r.ns + "/" + r.name);
  o.set("url", RepoPath(r.Id()));
  o.set("private", r.is_private);
  o.set("kind", std::string(RepoTypeName(r.type)));
  o.set("updated", Ago(r.last_modified));
  // Set even when empty: a missing key would be looked up in the enclosing page's data.
  o.set("pipeline", r.pipeline.empty() ? Data(false) : Data(r.pipeline));
  o.set("library", r.library.empty() ? Data(false) : Data(r.library));
  o.set("downloads", r.downloads == 0 ? Data(false) : Data(std::to_string(r.downloads)));
  return o;
}

List MemberList(const std::vector<db::OrgMember>& members) {
  List list;
  for (const auto& m : members) {
    Data o;
    o.set("name", m.user_name);
    o.set("role", std::string(db::OrgRoleName(m.role)));
    list.push_back(o);
  }
  return list;
}

void AddListingPages(http::Router& router, WebDeps& deps) {
  AddPage(router, deps, http::Method::Get, "/", http::Requirement::Public(),
          [&deps](PageContext& ctx, http::Request&) { return Home(deps, ctx); });
  for (RepoType type : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    AddPage(router, deps, http::Method::Get, "/" + std::string(RepoTypeName(type)) + "s",
            http::Requirement::Public(), [&deps, type](PageContext& ctx, http::Request& req) {
              return Listing(deps, ctx, req, type);
            });
  }
}

void AddProfilePages(http::Router& router, WebDeps& deps) {
  AddPage(router, deps, http::Method::Get, "/{name}", http::Requirement::Public(),
          [&deps](PageContext& ctx, http::Request& req) { return Profile(deps, ctx, req); });
}

}  // namespace hangar::web
