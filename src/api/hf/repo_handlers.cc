// Repo management, listing, identity (hf-api.md §5, §6.1–6.4, §6.10, §9.1).

#include "api/hf/hf_common.h"
#include "api/hf/hf_handlers.h"
#include "api/json_util.h"
#include "core/util.h"
#include "services/repo/model_card.h"

namespace hangar::api {

namespace json = boost::json;

namespace {

size_t MaxJson(const HfDeps& d) { return static_cast<size_t>(d.config.limits.max_json_body_bytes); }

// `private` (bool, older clients) and `visibility` ("public"|"private"|"protected", newer
// ones; it wins) as create and settings send them (hf-api.md §6.1, §6.3); nullopt when
// neither is given. Errors: BadRequest for a wrong type or value, never a silent default.
Result<std::optional<bool>> PrivacyFromBody(const json::object& body) {
  std::optional<bool> out;
  if (const auto* p = body.if_contains("private"); p && !p->is_null()) {
    if (!p->is_bool()) return MakeError(ErrorCode::BadRequest, "'private' must be a boolean");
    out = p->as_bool();
  }
  if (const auto* v = body.if_contains("visibility"); v && !v->is_null()) {
    if (!v->is_string()) return MakeError(ErrorCode::BadRequest, "'visibility' must be a string");
    const auto& vis = v->as_string();
    if (vis != "public" && vis != "private" && vis != "protected") {
      return MakeError(ErrorCode::BadRequest, "unknown visibility '" + std::string(vis) +
                                                  "' (public, private, protected)");
    }
    out = vis != "public";
  }
  return out;
}

// The settings a PUT …/settings body asks for (hf-api.md §6.3): `private`/`visibility`
// (PrivacyFromBody; "protected" only for spaces, the two must agree), `gated` ("auto",
// "manual" or false) and `xetEnabled` (bool; older Python). JSON null is "not given".
// Errors: BadRequest naming the field for any other member, a wrong type or value —
// never a setting accepted and ignored (issue #13 point 3).
Result<services::RepoSettings> SettingsFromBody(const json::object& body, RepoType type) {
  for (const auto& member : body) {
    std::string_view key = member.key();
    if (key != "private" && key != "visibility" && key != "gated" && key != "xetEnabled") {
      return MakeError(ErrorCode::BadRequest,
                       "unknown setting '" + std::string(key.substr(0, 100)) +
                           "' (Hangar takes private, visibility, gated and xetEnabled)");
    }
  }
  services::RepoSettings out;
  HANGAR_ASSIGN_OR_RETURN(out.is_private, PrivacyFromBody(body));
  const auto* p = body.if_contains("private");
  const auto* v = body.if_contains("visibility");
  if (p && !p->is_null() && v && !v->is_null() && p->as_bool() != (v->as_string() != "public")) {
    return MakeError(ErrorCode::BadRequest, "'private' and 'visibility' disagree; send one");
  }
  if (v && !v->is_null() && v->as_string() == "protected" && type != RepoType::Space) {
    return MakeError(ErrorCode::BadRequest, "visibility 'protected' is for spaces only");
  }
  if (const auto* g = body.if_contains("gated"); g && !g->is_null()) {
    if (g->is_bool() && !g->as_bool()) {
      out.gated = "";
    } else if (g->is_string() && (g->as_string() == "auto" || g->as_string() == "manual")) {
      out.gated = std::string(g->as_string());
    } else {
      return MakeError(ErrorCode::BadRequest, "'gated' must be \"auto\", \"manual\" or false");
    }
  }
  if (const auto* x = body.if_contains("xetEnabled"); x && !x->is_null()) {
    if (!x->is_bool()) return MakeError(ErrorCode::BadRequest, "'xetEnabled' must be a boolean");
    out.xet_enabled = x->as_bool();
  }
  return out;
}

// One listing item (hf-api.md §5.3): the compact set plus the card index's fields.
json::object RepoSummary(const db::RepoRecord& r, bool trending) {
  json::object o;
  o["_id"] = ObjectId(r.id, '6');
  o["id"] = r.ns + "/" + r.name;
  o["author"] = r.ns;
  o["private"] = r.is_private;
  o["gated"] = GatedJson(r.gated);
  o["disabled"] = false;
  o["downloads"] = r.downloads;
  o["downloadsAllTime"] = r.downloads;
  if (trending) o["trendingScore"] = r.trending;
  o["likes"] = r.likes;
  json::array tags;
  for (const auto& t : r.tags) tags.emplace_back(t);
  o["tags"] = std::move(tags);
  if (!r.library.empty()) o["library_name"] = r.library;
  if (!r.pipeline.empty()) o["pipeline_tag"] = r.pipeline;
  o["createdAt"] = Iso8601(r.created_at);
  o["lastModified"] = Iso8601(r.last_modified);
  if (!r.last_commit.empty()) o["sha"] = r.last_commit;
  if (!r.sdk.empty()) o["sdk"] = r.sdk;
  return o;
}

}  // namespace

Result<http::Response> HandleCreateRepo(HfDeps& d, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto body, ReadJsonObject(req, MaxJson(d)));
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromBody(body, req.principal));
  HANGAR_ASSIGN_OR_RETURN(auto is_private, PrivacyFromBody(body));
  // huggingface_hub's space_sdk.
  HANGAR_ASSIGN_OR_RETURN(std::string sdk, StringField(body, "sdk"));
  std::string url = req.base_url + "/" + id.UrlPath();
  auto created = d.repos.Create(req.principal, id, is_private.value_or(false), sdk);
  if (!created) {
    if (created.error().code == ErrorCode::Conflict) {
      // Python's exist_ok path reads `url` from the 409 body (hf-api.md §6.1).
      std::string msg =
          "You already created this " + std::string(RepoTypeName(id.type)) + " repo: " + id.Id();
      http::Response res = JsonResponse(json::object{{"error", msg}, {"url", url}}, 409);
      res.SetHeader("X-Error-Code", "Conflict");
      res.SetHeader("X-Error-Message", msg);
      return res;
    }
    return std::move(created).error();
  }
  return JsonResponse(
      json::object{{"url", url}, {"name", id.Id()}, {"id", ObjectId(created->id, '6')}});
}

Result<http::Response> HandleDeleteRepo(HfDeps& d, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto body, ReadJsonObject(req, MaxJson(d)));
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromBody(body, req.principal));
  HANGAR_TRY(d.repos.Delete(req.principal, id));
  return JsonResponse(json::object{});
}

Result<http::Response> HandleMoveRepo(HfDeps& d, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto body, ReadJsonObject(req, MaxJson(d)));
  HANGAR_ASSIGN_OR_RETURN(auto from, StringField(body, "fromRepo"));
  HANGAR_ASSIGN_OR_RETURN(auto to, StringField(body, "toRepo"));
  HANGAR_ASSIGN_OR_RETURN(auto type, TypeFromBody(body));
  auto parse = [t = type](const std::string& s) -> Result<RepoId> {
    size_t slash = s.find('/');
    if (slash == std::string::npos) {
      return MakeError(ErrorCode::BadRequest, "repo id '" + s + "' must be 'namespace/name'");
    }
    return RepoId::Parse(t, s.substr(0, slash), s.substr(slash + 1));
  };
  HANGAR_ASSIGN_OR_RETURN(auto from_id, parse(from));
  HANGAR_ASSIGN_OR_RETURN(auto to_id, parse(to));
  HANGAR_TRY(d.repos.Move(req.principal, from_id, to_id));
  return JsonResponse(json::object{{"url", req.base_url + "/" + to_id.UrlPath()}});
}

Result<http::Response> HandleRepoSettings(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto body, ReadJsonObject(req, MaxJson(d)));
  HANGAR_ASSIGN_OR_RETURN(services::RepoSettings settings, SettingsFromBody(body, type));
  HANGAR_TRY(d.repos.UpdateSettings(req.principal, id, settings));
  return JsonResponse(json::object{});
}

Result<http::Response> HandleListRepos(HfDeps& d, http::Request& req, RepoType type) {
  db::RepoQuery q;
  q.type = type;
  for (const auto& s : req.QueryAll("search")) q.search = s;  // last one wins
  q.author = req.Query("author").value_or("");
  // Every `filter` must be among the repo's tags; values are the indexed tags, e.g.
  // "license:mit", "dataset:squad", "en" (hf-api.md §5.2).
  for (const auto& tag : req.QueryAll("filter")) {
    if (!tag.empty()) q.tags.push_back(tag);
  }
  if (q.tags.size() > 20) return MakeError(ErrorCode::BadRequest, "at most 20 'filter' values");
  q.library = req.Query("library").value_or("");
  q.pipeline = req.Query("pipeline_tag").value_or("");
  q.sort = db::ParseRepoSort(req.Query("sort").value_or(""));
  if (auto dir = req.Query("direction"); dir && *dir == "1") q.descending = false;
  q.limit = 100;
  if (auto lim = req.Query("limit")) {
    try {
      q.limit = std::clamp(std::stoi(*lim), 1, 1000);
    } catch (const std::exception&) {
      return MakeError(ErrorCode::BadRequest, "'limit' must be a number");
    }
  }
  q.cursor = req.Query("cursor").value_or("");
  HANGAR_ASSIGN_OR_RETURN(auto expand, ExpandKeys(req, type));
  // huggingface_hub's full=True and cardData=True (hf-api.md §5.2), or their keys in expand.
  auto asked = [&](const char* param, std::string_view key) {
    return http::ParseBool(req.Query(param).value_or("false")).value_or(false) ||
           std::find(expand.begin(), expand.end(), key) != expand.end();
  };
  const bool full = http::ParseBool(req.Query("full").value_or("false")).value_or(false);
  const bool siblings = asked("full", "siblings");
  const bool card = full || asked("cardData", "cardData");
  if (d.downloads && (q.sort == db::RepoSort::Downloads || q.sort == db::RepoSort::Trending)) {
    // Counts still in memory are written first, so this process's listing by downloads
    // includes them (a no-op when nothing is pending; a failure keeps them for later).
    (void)d.downloads->Flush();
  }
  HANGAR_ASSIGN_OR_RETURN(auto page, d.repos.List(req.principal, q));
  json::array items;
  for (const auto& r : page.items) {
    json::object o = RepoSummary(r, q.sort == db::RepoSort::Trending);
    auto head = Oid::ParseHex(r.last_commit);
    if ((siblings || card) && head) {
      // The listing showed this repo to the caller: its card and file list are theirs to see.
      // (A repo deleted since the page was read is listed without them.)
      if (auto repo = d.repos.OpenMetadata(req.principal, r.Id())) {
        HANGAR_TRY(AddRepoContent(d, *repo, *head, card, siblings, /*blobs=*/false, o));
      }
    }
    KeepExpanded(o, expand);
    items.push_back(std::move(o));
  }
  http::Response res = JsonResponse(items);
  if (!page.next_cursor.empty()) SetNextLink(res, req, page.next_cursor);
  return res;
}

Result<http::Response> HandleAuthCheck(HfDeps& d, http::Request& req, RepoType type,
                                       Access needed) {
  // The route's gate opened the repo for its metadata only: a gated repo's files are
  // Open's to decide.
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_TRY(d.repos.Open(req.principal, id, needed));
  return JsonResponse(json::object{});
}

Result<http::Response> HandleWhoAmI(HfDeps& d, http::Request& req) {
  HANGAR_ASSIGN_OR_RETURN(auto who, d.authenticator.WhoAmI(req.principal));
  json::array orgs;
  for (const auto& m : who.orgs) {
    orgs.push_back(json::object{{"type", "org"},
                                {"id", ObjectId(m.org.id, '7')},
                                {"name", m.org.name},
                                {"fullname", m.org.fullname.empty() ? m.org.name : m.org.fullname},
                                {"email", nullptr},
                                {"avatarUrl", AvatarUrl(m.org.name)},
                                {"canPay", false},
                                {"periodEnd", nullptr},
                                {"roleInOrg", std::string(db::OrgRoleName(m.role))}});
  }
  json::object token{{"displayName", who.token_display_name},
                     {"role", std::string(db::TokenRoleName(who.token_role))},
                     {"createdAt", Iso8601(who.token_created_at)}};
  return JsonResponse(json::object{
      {"type", "user"},
      {"id", ObjectId(who.user_id, '6')},
      {"name", who.name},
      {"fullname", who.fullname.empty() ? who.name : who.fullname},
      {"email", who.email.empty() ? json::value(nullptr) : json::value(who.email)},
      {"emailVerified", !who.email.empty()},
      {"avatarUrl", AvatarUrl(who.name)},
      {"isPro", false},
      {"canPay", false},
      {"periodEnd", nullptr},
      {"billingMode", "postpaid"},
      {"orgs", std::move(orgs)},
      {"auth", json::object{{"type", "access_token"}, {"accessToken", std::move(token)}}}});
}

Result<http::Response> HandleValidateYaml(HfDeps& d, http::Request& req) {
  // Always JSON, whatever the status: the client parses the body first (hf-api.md §6.10).
  auto body = ReadJsonObject(req, MaxJson(d));
  if (!body) {
    return JsonResponse(
        json::object{{"errors", json::array{json::object{{"message", body.error().message}}}},
                     {"warnings", json::array{}}},
        Describe(body.error().code).http_status);
  }
  auto content = StringField(*body, "content");
  std::string text = content ? *content : "";
  auto card = services::ParseCardData(text);
  if (!card) {
    return JsonResponse(
        json::object{{"errors", json::array{json::object{{"message", card.error().message}}}},
                     {"warnings", json::array{}}},
        400);
  }
  return JsonResponse(json::object{{"errors", json::array{}}, {"warnings", json::array{}}});
}

}  // namespace hangar::api
