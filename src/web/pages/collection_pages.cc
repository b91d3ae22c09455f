// Collections on the web (issue 19 §6, docs/collections.md): a collection's page with its
// items, and the collections a profile shows. Rules live in services::CollectionService.

#include "services/collection/collection_service.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

// The collections a profile shows, at most.
constexpr int kProfileCollections = 100;

std::string CollectionUrl(std::string_view slug) { return "/collections/" + EncodePath(slug); }

// An item for templates (collection.mustache, profile.mustache): every key set, so that none
// is looked up in the enclosing page's data.
Data ItemData(const db::CollectionItemRecord& i) {
  Data o;
  o.set("kind", std::string(db::CollectionItemKindName(i.kind)));
  if (i.kind == db::CollectionItemKind::Collection) {
    const std::string slug = services::RefSlug(i);
    o.set("id", i.ref_owner + "/" + i.ref_title);
    o.set("url", CollectionUrl(slug));
    o.set("private", i.ref_private);
  } else {
    const RepoId id{i.repo_type, i.repo_ns, i.repo_name};
    o.set("id", id.Id());
    o.set("url", RepoPath(id));
    o.set("private", i.repo_private);
  }
  o.set("note", i.note.empty() ? Data(false) : Data(i.note));
  return o;
}

// A collection for templates, with its items.
Data CollectionData(const services::CollectionView& v) {
  const auto& c = v.collection;
  Data o;
  o.set("title", c.title);
  o.set("url", CollectionUrl(v.slug));
  o.set("owner", c.owner);
  o.set("owner_url", "/" + EncodeSegment(c.owner));
  o.set("private", c.is_private);
  o.set("description", c.description.empty() ? Data(false) : Data(c.description));
  o.set("theme", c.theme);
  o.set("updated", Ago(c.updated_at));
  o.set("count", std::to_string(c.item_count));
  List items;
  for (const auto& i : v.items) items.push_back(ItemData(i));
  o.set("items", items);
  return o;
}

Result<http::Response> CollectionPage(WebDeps& deps, PageContext& ctx, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(std::string ns, DecodedParam(req, "ns"));
  HANGAR_ASSIGN_OR_RETURN(std::string slug, DecodedParam(req, "slug"));
  HANGAR_ASSIGN_OR_RETURN(auto v, deps.collections->Get(ctx.principal, ns + "/" + slug));
  Data data = CollectionData(v);
  data.set("slug", v.slug);
  return Html(ctx, 200, v.collection.title, "collection", data);
}

}  // namespace

Result<void> SetCollections(WebDeps& deps, const PageContext& ctx, std::string_view ns,
                            Data& data) {
  if (!deps.collections) return {};
  HANGAR_ASSIGN_OR_RETURN(auto views,
                          deps.collections->OfNamespace(ctx.principal, ns, kProfileCollections));
  List list;
  for (const auto& v : views) list.push_back(CollectionData(v));
  data.set("has_collections", !views.empty());
  data.set("collections", list);
  return {};
}

void AddCollectionPages(http::Router& router, WebDeps& deps) {
  if (!deps.collections) return;
  AddPage(router, deps, http::Method::Get, "/collections/{ns}/{slug}", http::Requirement::Public(),
          [&deps](PageContext& ctx, http::Request& req) { return CollectionPage(deps, ctx, req); });
}

}  // namespace hangar::web
