#include "services/gateway/gateway_service.h"

#include <algorithm>

#include "core/util.h"

namespace hangar::services {
namespace {

constexpr size_t kMaxBackends = 16;

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

Result<void> CheckRouteName(const std::string& name, std::string_view what) {
  bool ok = !name.empty() && name.size() <= 128 && name[0] != '.' && name[0] != '_' &&
            name[0] != '-' && std::all_of(name.begin(), name.end(), NameChar);
  if (ok) return {};
  return MakeError(ErrorCode::BadRequest,
                   std::string(what) +
                       " must be 1 to 128 of letters, digits, '.', '_' and '-', "
                       "starting with a letter or digit");
}

Result<void> CheckRange(int64_t v, int64_t lo, int64_t hi, std::string_view what) {
  if (v >= lo && v <= hi) return {};
  return MakeError(ErrorCode::BadRequest, std::string(what) + " must be from " +
                                              std::to_string(lo) + " to " + std::to_string(hi));
}

// An external backend's base URL: http(s)://host[:port][/path], no blanks or controls.
Result<void> CheckBackendUrl(const std::string& url) {
  std::string_view rest = url;
  bool scheme = rest.rfind("http://", 0) == 0 || rest.rfind("https://", 0) == 0;
  if (scheme) rest.remove_prefix(rest.find("//") + 2);
  bool ok = scheme && url.size() <= 2048 && !rest.empty() && rest[0] != '/' && rest[0] != ':' &&
            rest.find_first_of("@?#\\") == std::string_view::npos &&
            std::none_of(url.begin(), url.end(),
                         [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; });
  if (ok) return {};
  return MakeError(ErrorCode::BadRequest,
                   "a backend url must be http:// or https:// with a host (no credentials, "
                   "query, fragment, backslashes or blanks), at most 2,048 characters, not '" +
                       url.substr(0, 200) + "'");
}

}  // namespace

GatewayService::GatewayService(db::GatewayStore& store, RegistryService& registry,
                               GatewayOptions options)
    : store_(store), registry_(registry), options_(std::move(options)) {
  if (!options_.now_millis) options_.now_millis = NowUnixMillis;
}

int64_t GatewayService::Now() const { return options_.now_millis(); }

// The route `r` would be, checked; its model seen by `who`.
Result<db::RouteRecord> GatewayService::Checked(const Principal& who, const NewRoute& r) {
  if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "sign in to change routes");
  if (!who.is_admin || !who.CanWrite())
    return MakeError(ErrorCode::Forbidden,
                     "routes name hosts of the infrastructure: only a site admin with a write "
                     "token changes them (deployers move the aliases routes follow)");
  HANGAR_TRY(CheckRouteName(r.name, "a route name"));
  if (r.protocol != "openai" && r.protocol != "oip")
    return MakeError(ErrorCode::BadRequest, "protocol must be openai or oip");
  if (r.alias.empty() == (r.version == 0))
    return MakeError(ErrorCode::BadRequest,
                     "a route follows an alias or names a version: give "
                     "exactly one");
  if (!r.fallback.empty()) HANGAR_TRY(CheckRouteName(r.fallback, "fallback"));
  if (r.fallback == r.name)
    return MakeError(ErrorCode::BadRequest, "a route cannot fall back to itself");
  HANGAR_TRY(CheckRange(r.timeout_ms, 1, 3'600'000, "timeout_ms"));
  HANGAR_TRY(CheckRange(r.retries, 0, 5, "retries"));
  HANGAR_TRY(CheckRange(r.requests_per_minute, 0, 1'000'000'000, "requests_per_minute"));
  HANGAR_TRY(CheckRange(r.tokens_per_minute, 0, 1'000'000'000, "tokens_per_minute"));
  if (r.backends.empty() || r.backends.size() > kMaxBackends)
    return MakeError(ErrorCode::BadRequest, "a route has 1 to 16 backends");
  int64_t total = 0;
  for (const auto& b : r.backends) {
    if (b.kind == "runtime") {
      std::string protocol = options_.runtime_protocol ? options_.runtime_protocol(b.target) : "";
      if (protocol.empty())
        return MakeError(ErrorCode::BadRequest, "no runtime template '" + b.target.substr(0, 128) +
                                                    "' is configured ([runtimes." +
                                                    b.target.substr(0, 128) +
                                                    "], docs/gateway.md)");
      if (protocol != r.protocol)
        return MakeError(ErrorCode::BadRequest, "runtime '" + b.target + "' speaks " + protocol +
                                                    ", the route " + r.protocol);
    } else if (b.kind == "url") {
      HANGAR_TRY(CheckBackendUrl(b.target));
    } else {
      return MakeError(ErrorCode::BadRequest, "a backend's kind is url or runtime");
    }
    HANGAR_TRY(CheckRange(b.weight, 0, 100, "a backend's weight"));
    total += b.weight;
  }
  if (total == 0) return MakeError(ErrorCode::BadRequest, "the backends' weights are all 0");
  if (!r.fallback.empty()) {
    HANGAR_ASSIGN_OR_RETURN(auto fallback, store_.GetRoute(r.fallback));
    if (!fallback)
      return MakeError(ErrorCode::BadRequest, "fallback route '" + r.fallback + "' does not exist");
    if (fallback->protocol != r.protocol)
      return MakeError(ErrorCode::BadRequest, "fallback route '" + r.fallback + "' speaks " +
                                                  fallback->protocol + ", this route " +
                                                  r.protocol);
  }
  HANGAR_ASSIGN_OR_RETURN(auto model, registry_.GetModel(who, r.model));
  if (r.version) HANGAR_TRY(registry_.GetVersion(who, model.name, r.version));
  db::RouteRecord out;
  out.name = r.name;
  out.model_id = model.id;
  out.model = model.name;
  out.target_alias = r.alias;
  out.target_version = r.alias.empty() ? r.version : 0;
  out.protocol = r.protocol;
  out.fallback = r.fallback;
  out.timeout_ms = r.timeout_ms;
  out.retries = r.retries;
  out.requests_per_minute = r.requests_per_minute;
  out.tokens_per_minute = r.tokens_per_minute;
  out.backends = r.backends;
  out.created_by = who.user_id;
  out.created_at = out.updated_at = Now();
  return out;
}

RouteView GatewayService::Resolve(const Principal& who, db::RouteRecord route) {
  RouteView view;
  auto version = route.target_alias.empty()
                     ? registry_.GetVersion(who, route.model, route.target_version)
                     : registry_.VersionByAlias(who, route.model, route.target_alias);
  if (version)
    view.version = std::move(*version);
  else
    view.problem = version.error().message;
  view.route = std::move(route);
  return view;
}

Result<RouteView> GatewayService::CreateRoute(const Principal& who, const NewRoute& r) {
  HANGAR_ASSIGN_OR_RETURN(db::RouteRecord rec, Checked(who, r));
  auto id = store_.CreateRoute(rec);
  registry_.NoteChange();  // the routes' answers embed the registry's
  if (!id && id.error().code == ErrorCode::Conflict)
    return MakeError(ErrorCode::Conflict, "route '" + r.name + "' exists");
  if (!id) return std::move(id).error();
  return GetRoute(who, r.name);
}

Result<RouteView> GatewayService::GetRoute(const Principal& who, const std::string& name) {
  auto missing = [&] {
    return MakeError(ErrorCode::NotFound, "route '" + name.substr(0, 140) + "' not found");
  };
  if (!CheckRouteName(name, "route")) return missing();
  HANGAR_ASSIGN_OR_RETURN(auto route, store_.GetRoute(name));
  if (!route) return missing();
  // Seen as its model is: a private model's route is NotFound to others.
  auto model = registry_.GetModel(who, route->model);
  if (!model && model.error().code == ErrorCode::NotFound) return missing();
  if (!model) return std::move(model).error();
  return Resolve(who, std::move(*route));
}

Result<RoutePage> GatewayService::ListRoutes(const Principal& who, int64_t offset, int64_t limit) {
  HANGAR_TRY(CheckRange(limit, 1, 1000, "limit"));
  HANGAR_TRY(CheckRange(offset, 0, INT64_MAX / 2, "offset"));
  HANGAR_ASSIGN_OR_RETURN(auto seen, registry_.VisibleModels(who));
  db::RouteQuery q;
  q.include_all_private = seen.all;
  q.readable_owner_ids = std::move(seen.owner_ids);
  q.offset = offset;
  q.limit = limit + 1;  // one more: whether a next page exists
  HANGAR_ASSIGN_OR_RETURN(auto routes, store_.ListRoutes(q));
  RoutePage page;
  if (static_cast<int64_t>(routes.size()) > limit) {
    routes.pop_back();
    page.next_offset = offset + limit;
  }
  for (auto& r : routes) page.routes.push_back(Resolve(who, std::move(r)));
  return page;
}

Result<RouteView> GatewayService::UpdateRoute(const Principal& who, const std::string& name,
                                              const NewRoute& r) {
  HANGAR_ASSIGN_OR_RETURN(RouteView current, GetRoute(who, name));
  if ((!r.name.empty() && r.name != name) || (!r.model.empty() && r.model != current.route.model))
    return MakeError(ErrorCode::BadRequest,
                     "a route keeps its name and model: delete it and create another");
  NewRoute full = r;
  full.name = name;
  full.model = current.route.model;
  HANGAR_ASSIGN_OR_RETURN(db::RouteRecord rec, Checked(who, full));
  rec.id = current.route.id;
  auto updated = store_.UpdateRoute(rec);
  registry_.NoteChange();
  HANGAR_TRY(updated);
  return GetRoute(who, name);
}

Result<std::vector<std::pair<std::string, std::string>>> GatewayService::AllBackends() {
  std::vector<std::pair<std::string, std::string>> out;
  db::RouteQuery q;
  q.include_all_private = true;
  q.limit = 1000;
  for (;; q.offset += q.limit) {
    HANGAR_ASSIGN_OR_RETURN(auto routes, store_.ListRoutes(q));
    for (const auto& r : routes) {
      for (const auto& b : r.backends) {
        if (b.kind == "url") out.emplace_back(r.protocol, b.target);
      }
    }
    if (static_cast<int64_t>(routes.size()) < q.limit) break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<RouteView>> GatewayService::AllRoutes() {
  const Principal hub = Principal::Hub();  // the hub itself: sees every repo and model
  std::vector<RouteView> out;
  db::RouteQuery q;
  q.include_all_private = true;
  q.limit = 1000;
  for (;; q.offset += q.limit) {
    HANGAR_ASSIGN_OR_RETURN(auto routes, store_.ListRoutes(q));
    size_t n = routes.size();
    for (auto& r : routes) out.push_back(Resolve(hub, std::move(r)));
    if (static_cast<int64_t>(n) < q.limit) break;
  }
  return out;
}

Result<void> GatewayService::DeleteRoute(const Principal& who, const std::string& name) {
  if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "sign in to change routes");
  HANGAR_ASSIGN_OR_RETURN(RouteView current, GetRoute(who, name));
  if (!who.is_admin || !who.CanWrite())
    return MakeError(ErrorCode::Forbidden, "only a site admin with a write token deletes routes");
  auto deleted = store_.DeleteRoute(current.route.id);
  registry_.NoteChange();
  return deleted;
}

}  // namespace hangar::services
