// Collection handlers (docs/collections.md): parse, call CollectionService, render in the
// public hub's shapes (huggingface_hub hf_api.py Collection and CollectionItem).

#include "api/collection/collection_routes.h"

#include <boost/json.hpp>

#include <algorithm>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::CollectionService;
using services::CollectionView;

// Bodies of collection calls, at most: a note of 500 characters is at most 2 KiB of UTF-8,
// escaped at most 12 KiB.
constexpr size_t kMaxCollectionBody = 64 * 1024;
// A listing's page, at most (the client's `limit` stops it early through the pages).
constexpr int kMaxPage = 100;

json::object Owner(const db::CollectionRecord& c) {
  return json::object{{"_id", ObjectId(c.owner_id, c.owner_is_org ? '7' : '6')},
                      {"name", c.owner},
                      {"fullname", c.owner_fullname.empty() ? c.owner : c.owner_fullname},
                      {"type", c.owner_is_org ? "org" : "user"},
                      {"avatarUrl", AvatarUrl(c.owner)},
                      {"isPro", false}};
}

// An item as the public hub sends it: CollectionItem reads _id, id, type, position, note
// (and a nested collection's slug); the rest is what it shows of the repo.
json::object Item(const db::CollectionItemRecord& i) {
  json::object o{{"_id", ObjectId(i.id, services::kCollectionItemIdKind)},
                 {"position", i.position},
                 {"type", db::CollectionItemKindName(i.kind)}};
  if (i.kind == db::CollectionItemKind::Collection) {
    o["id"] = ObjectId(i.ref_id, services::kCollectionIdKind);
    o["slug"] = services::RefSlug(i);
    o["title"] = i.ref_title;
    o["private"] = i.ref_private;
  } else {
    o["id"] = i.repo_ns + "/" + i.repo_name;
    o["author"] = i.repo_ns;
    o["repoType"] = RepoTypeName(i.repo_type);
    o["private"] = i.repo_private;
    o["gated"] = GatedJson(i.repo_gated);
    o["likes"] = i.repo_likes;
    o["downloads"] = i.repo_downloads;
    o["lastModified"] = Iso8601(i.repo_last_modified);
  }
  if (!i.note.empty()) o["note"] = json::object{{"text", i.note}, {"html", FormatHtml(i.note)}};
  return o;
}

json::object Collection(const CollectionView& v, const http::Request& req) {
  const auto& c = v.collection;
  json::array items;
  for (const auto& i : v.items) items.push_back(Item(i));
  json::object o{{"slug", v.slug},
                 {"title", c.title},
                 {"owner", Owner(c)},
                 {"items", std::move(items)},
                 {"lastUpdated", Iso8601(c.updated_at)},
                 {"position", c.position},
                 {"private", c.is_private},
                 {"theme", c.theme},
                 {"upvotes", 0},
                 {"isUpvotedByUser", false},
                 {"shareUrl", req.base_url + "/collections/" + v.slug}};
  // The client reads a missing description as None.
  if (!c.description.empty()) o["description"] = c.description;
  return o;
}

// The collection's slug of the route: {ns}/{slug}, each decoded once.
std::string SlugParam(const http::Request& req) {
  return PercentDecode(req.Param("ns")) + "/" + PercentDecode(req.Param("slug"));
}

Result<json::object> BodyObject(http::Request& req) {
  return ReadJsonObject(req, kMaxCollectionBody, ErrorCode::BadRequest, true);
}

// PATCH answers: update_collection_metadata reads `data`.
http::Response Updated(const CollectionView& v, const http::Request& req) {
  return JsonResponse(json::object{{"success", true}, {"data", Collection(v, req)}});
}

Result<http::Response> List(CollectionService& s, http::Request& req) {
  services::CollectionListing q;
  q.owners = req.QueryAll("owner");
  q.items = req.QueryAll("item");
  q.sort = req.Query("sort").value_or("");
  q.cursor = req.Query("cursor").value_or("");
  if (auto l = req.Query("limit")) {
    // Any positive limit: the client stops reading pages once it has that many.
    auto n = ParseRowId(*l);
    if (!n) return MakeError(ErrorCode::BadRequest, "'limit' is a number from 1");
    q.limit = static_cast<int>(std::min<int64_t>(*n, kMaxPage));
  } else {
    q.limit = kMaxPage;
  }
  HANGAR_ASSIGN_OR_RETURN(auto page, s.List(req.principal, q));
  json::array out;
  for (const auto& v : page.items) out.push_back(Collection(v, req));
  http::Response res = JsonResponse(out);
  if (!page.next_cursor.empty()) SetNextLink(res, req, page.next_cursor);
  return res;
}

Result<http::Response> Create(CollectionService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  if (body.contains("resourceGroupId")) {
    return MakeError(ErrorCode::BadRequest, "this hub has no resource groups");
  }
  HANGAR_TRY(OnlyKeys(body, {"title", "namespace", "private", "description"}));
  services::NewCollection in;
  HANGAR_ASSIGN_OR_RETURN(auto title, OptionalString(body, "title"));
  if (!title) return MakeError(ErrorCode::BadRequest, "'title' is required");
  in.title = std::move(*title);
  HANGAR_ASSIGN_OR_RETURN(in.ns, StringField(body, "namespace"));
  HANGAR_ASSIGN_OR_RETURN(in.description, StringField(body, "description"));
  HANGAR_ASSIGN_OR_RETURN(in.is_private, BoolField(body, "private"));
  HANGAR_ASSIGN_OR_RETURN(auto made, s.Create(req.principal, in));
  if (made.existed) {
    // create_collection(exists_ok=True) reads the slug of the 409's body.
    const std::string msg = "You already have a collection titled '" + made.view.collection.title +
                            "' in " + made.view.collection.owner;
    http::Response res = JsonResponse(json::object{{"error", msg}, {"slug", made.view.slug}}, 409);
    res.SetHeader("X-Error-Code", "Conflict");
    res.SetHeader("X-Error-Message", msg);
    return res;
  }
  return JsonResponse(Collection(made.view, req));
}

Result<http::Response> Get(CollectionService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto v, s.Get(req.principal, SlugParam(req)));
  return JsonResponse(Collection(v, req));
}

Result<http::Response> Update(CollectionService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_TRY(OnlyKeys(body, {"title", "description", "position", "private", "theme"}));
  services::CollectionChanges c;
  HANGAR_ASSIGN_OR_RETURN(c.title, OptionalString(body, "title"));
  HANGAR_ASSIGN_OR_RETURN(c.description, OptionalString(body, "description"));
  HANGAR_ASSIGN_OR_RETURN(c.theme, OptionalString(body, "theme"));
  HANGAR_ASSIGN_OR_RETURN(c.is_private, OptionalBool(body, "private"));
  HANGAR_ASSIGN_OR_RETURN(c.position, OptionalInt(body, "position"));
  HANGAR_ASSIGN_OR_RETURN(auto v, s.Update(req.principal, SlugParam(req), c));
  return Updated(v, req);
}

Result<http::Response> Delete(CollectionService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object ignored, BodyObject(req));
  HANGAR_TRY(s.Delete(req.principal, SlugParam(req)));
  return JsonResponse(json::object{});
}

Result<http::Response> AddItem(CollectionService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_TRY(OnlyKeys(body, {"item", "note"}));
  const json::value* item = body.if_contains("item");
  if (!item || !item->is_object()) {
    return MakeError(ErrorCode::BadRequest, "'item' must be an object {id, type}");
  }
  HANGAR_TRY(OnlyKeys(item->as_object(), {"id", "type"}));
  services::NewCollectionItem in;
  HANGAR_ASSIGN_OR_RETURN(auto id, OptionalString(item->as_object(), "id"));
  HANGAR_ASSIGN_OR_RETURN(auto type, OptionalString(item->as_object(), "type"));
  if (!id || !type) return MakeError(ErrorCode::BadRequest, "'item' needs 'id' and 'type'");
  in.id = std::move(*id);
  in.type = std::move(*type);
  HANGAR_ASSIGN_OR_RETURN(in.note, StringField(body, "note"));
  HANGAR_ASSIGN_OR_RETURN(auto v, s.AddItem(req.principal, SlugParam(req), in));
  return JsonResponse(Collection(v, req));
}

Result<http::Response> UpdateItem(CollectionService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_TRY(OnlyKeys(body, {"note", "position"}));
  services::CollectionItemChanges c;
  HANGAR_ASSIGN_OR_RETURN(c.note, OptionalString(body, "note"));
  HANGAR_ASSIGN_OR_RETURN(c.position, OptionalInt(body, "position"));
  HANGAR_ASSIGN_OR_RETURN(
      auto v, s.UpdateItem(req.principal, SlugParam(req), PercentDecode(req.Param("item")), c));
  return Updated(v, req);
}

Result<http::Response> DeleteItem(CollectionService& s, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(json::object ignored, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(
      auto v, s.DeleteItem(req.principal, SlugParam(req), PercentDecode(req.Param("item"))));
  return Updated(v, req);
}

}  // namespace

void AddCollectionRoutes(http::Router& r, CollectionService& collections) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  // Writes: a write credential, and a declared body within bounds, from the head; a
  // change of one collection also the caller's right to change it, so that a refused
  // change's body is never read.
  auto capped = [](http::Request& q) { return CheckDeclaredLength(q, kMaxCollectionBody); };
  const Requirement write = Requirement::WriteRole().Also(capped);
  const Requirement change =
      Requirement::WriteRole().Also([&collections, capped](http::Request& q) -> Result<void> {
        HANGAR_TRY(capped(q));
        return collections.CheckMayChange(q.principal, SlugParam(q));
      });
  using Handler = Result<http::Response> (*)(CollectionService&, http::Request&);
  auto add = [&](Method m, const char* path, Requirement need, Handler h) {
    r.Add(m, path, ApiFamily::Hf, need,
          [&collections, h](http::Request& q) { return h(collections, q); });
  };
  const char* one = "/api/collections/{ns}/{slug}";
  const char* item = "/api/collections/{ns}/{slug}/items/{item}";
  add(Method::Get, "/api/collections", Requirement::Public(), List);
  add(Method::Post, "/api/collections", write, Create);
  add(Method::Get, one, Requirement::Public(), Get);
  add(Method::Patch, one, change, Update);
  add(Method::Delete, one, change, Delete);
  add(Method::Post, "/api/collections/{ns}/{slug}/items", change, AddItem);
  add(Method::Patch, item, change, UpdateItem);
  add(Method::Delete, item, change, DeleteItem);
}

}  // namespace hangar::api
