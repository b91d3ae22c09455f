#pragma once
// The page groups of the web UI; web_routes.cc registers them in order (literal paths
// first, then /datasets and /spaces repos, then model repos, then /{user}).

#include "core/repo_id.h"
#include "http/router.h"
#include "web/web_util.h"

namespace hangar::web {

// A page handler: the request and who is browsing.
using PageHandler = std::function<Result<http::Response>(PageContext&, http::Request&)>;

// Registers `handler` as an HTML route needing `need` (checked by the router first) that
// establishes its PageContext (session cookie or token, and the forms' CSRF token) and
// renders errors as HTML pages.
void AddPage(http::Router& router, WebDeps& deps, http::Method method, std::string pattern,
             http::Requirement need, PageHandler handler);

// "/", "/models", "/datasets", "/spaces" (listings with search, filters, sort, pages).
void AddListingPages(http::Router& router, WebDeps& deps);
// "/{name}": a user's or an org's page with their repos. Register last.
void AddProfilePages(http::Router& router, WebDeps& deps);
// "/login", "/logout", "/settings/...", "/new", "/import", org members.
void AddAccountPages(http::Router& router, WebDeps& deps);
// Repo home (card + files), tree, blob, settings for repos of `type`.
void AddRepoPages(http::Router& router, WebDeps& deps, RepoType type);
// The dataset viewer's table, "/datasets/{ns}/{name}/viewer[/{config}/{split}]", and its
// embed form ".../embed/viewer[/{config}/{split}]".
void AddViewerPages(http::Router& router, WebDeps& deps);
// The model registry: "/registry" and "/registry/{name}" (nothing when deps.registry is null).
void AddRegistryPages(http::Router& router, WebDeps& deps);
// Commits, commit, blame, refs, tags, search, archives for repos of `type`.
void AddHistoryPages(http::Router& router, WebDeps& deps, RepoType type);
// "/settings/ssh-keys": the account's SSH keys (list, add, delete; key_pages.cc).
void AddKeyPages(http::Router& router, WebDeps& deps);
// "/settings/upstream-tokens": the account's tokens for the pull-through cache's upstream
// hubs (set, replace, remove; upstream_pages.cc). NotFound when the hub has no upstream.
void AddUpstreamTokenPages(http::Router& router, WebDeps& deps);
// The deploy-key forms of a `type` repo's settings page: ".../settings/deploy-keys" (add)
// and ".../settings/deploy-keys/{id}/delete" (key_pages.cc; AddRepoPages calls it).
void AddDeployKeyPages(http::Router& router, WebDeps& deps, RepoType type);

// The discussions and pull requests of `type` repos (discussion_pages.cc; AddRepoPages
// calls it): ".../discussions" (list), ".../discussions/new", ".../discussions/{num}"
// (thread, a pull request's diff) and its comment, status and merge forms. Nothing when
// deps.discussions is null.
void AddDiscussionPages(http::Router& router, WebDeps& deps, RepoType type);

// POST ".../like" (like_pages.cc; AddRepoPages calls it): a signed-in user likes or
// unlikes (`like` = 1 or 0) a `type` repo from its home page. Nothing when deps.social is
// null.
void AddLikePages(http::Router& router, WebDeps& deps, RepoType type);

// POST ".../ask-access" (a browser's form, or a token's holder as on the public hub) and
// ".../settings/access-requests" (a gated repo's writers handle requests) for `type`
// repos (gate_pages.cc; AddRepoPages calls it).
void AddGatePages(http::Router& router, WebDeps& deps, RepoType type);

// "/collections/{ns}/{slug}": a collection's page with the items the viewer may see
// (collection_pages.cc). Nothing when deps.collections is null. Register before the repo
// pages ("collections" is a reserved name).
void AddCollectionPages(http::Router& router, WebDeps& deps);
// Sets `collections` (each with its title, url, count, description and first items) and
// `has_collections` in a profile page's `data`: those of user or org `ns` the viewer may see,
// in the owner's order (collection_pages.cc); nothing when deps.collections is null.
// Errors: those of CollectionService::OfNamespace.
Result<void> SetCollections(WebDeps& deps, const PageContext& ctx, std::string_view ns, Data& data);

// A repo listing entry for templates/_repo_list.mustache.
Data RepoItem(const db::RepoRecord& r);
// An org's members as {name, role} items (profile and org settings pages).
List MemberList(const std::vector<db::OrgMember>& members);

}  // namespace hangar::web

namespace hangar::web {

// The repo named by the route's {ns}/{name} of a `type` page, opened for reading by
// `ctx`. Errors: RepoNotFound (also for private repos `ctx` cannot read), BadRequest.
Result<services::RepoHandle> OpenRepo(WebDeps& deps, const PageContext& ctx,
                                      const http::Request& req, RepoType type,
                                      services::Access needed = services::Access::Read);
// OpenRepo for a page of what a repo shows of itself (home with its card, tree, commit
// list, refs): a gated repo's gate does not apply (RepoService::OpenMetadata).
Result<services::RepoHandle> OpenRepoMetadata(WebDeps& deps, const PageContext& ctx,
                                              const http::Request& req, RepoType type);
// The header fields of a repo page (templates/_repo_header.mustache) at revision `rev`,
// with tab `tab` ("card", "files", "commits", "refs", "search", "settings") highlighted.
Data RepoHeader(const services::RepoHandle& repo, const PageContext& ctx, std::string_view rev,
                std::string_view tab);
// Breadcrumbs of `path` for templates/_crumbs.mustache: each ancestor links to its tree.
List Crumbs(const services::RepoHandle& repo, std::string_view rev, std::string_view path);
// Sets a diff's `files` (templates/_diff.mustache: each with its change, paths, counts and
// patch), `total_files`, `additions`, `deletions` and `truncated` in `data`; the files link
// to `base`/blob/`rev`/…. Each patch's HTML is appended to `patches` and stands in `data`
// as its FragmentMarker (Html's fragments).
void SetDiffFiles(const git::CommitDetail& c, const std::string& base, const std::string& rev,
                  Data& data, std::vector<std::string>& patches);
// The first 12 hex digits of an oid.
std::string ShortOid(const Oid& oid);
// A repo's settings page (templates/repo_settings.mustache) for its admin, with its deploy
// keys; `form` and `error` (status 400) when a deploy-key form is shown again to be fixed.
Result<http::Response> RepoSettingsPage(WebDeps& deps, PageContext& ctx,
                                        const services::RepoHandle& repo,
                                        const Form* form = nullptr, std::string error = {});
// Sets `deploy_keys` and `ssh_keys_enabled` in a settings page's `data` (key_pages.cc);
// nothing when the hub has no SshKeyService. Errors: those of
// SshKeyService::ListDeployKeys.
Result<void> SetDeployKeys(WebDeps& deps, const PageContext& ctx, const services::RepoHandle& repo,
                           Data& data);
// Sets `gate` in a gated repo's home page `data` (gate_pages.cc): the card's
// extra_gated_prompt and extra_gated_fields ((label, "checkbox"|"text") pairs) as the ask
// form, or the caller's request state; nothing for a repo without a gate. Errors: the
// store's.
Result<void> SetGate(WebDeps& deps, const PageContext& ctx, const services::RepoHandle& repo,
                     const std::string& prompt,
                     const std::vector<std::pair<std::string, std::string>>& fields, Data& data);
// Sets `likes` (the count) and, for a signed-in user who may like it, `like_form` with
// whether they do (`liked`) in a repo home page's `data` (like_pages.cc). Errors: the
// store's.
Result<void> SetLikes(WebDeps& deps, const PageContext& ctx, const services::RepoHandle& repo,
                      Data& data);
// Sets the gate's mode (`gated_off|auto|manual`) and, on a gated repo, its requests by
// status (`requests_pending|accepted|rejected`) in a settings page's `data`
// (gate_pages.cc). Errors: those of GateService::List.
Result<void> SetAccessRequests(WebDeps& deps, const PageContext& ctx,
                               const services::RepoHandle& repo, Data& data);

}  // namespace hangar::web
