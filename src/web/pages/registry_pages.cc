// The model registry's pages (docs/registry.md): "/registry" (the models, filtered by name,
// in pages) and "/registry/{name}" (a model: its versions with the commit each pins, its
// aliases, and the log of their moves). Data only from services::RegistryService.

#include "core/util.h"
#include "services/registry/registry_service.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

constexpr int64_t kPage = 50;
constexpr int64_t kVersionsShown = 100;
constexpr int64_t kEventsShown = 100;

std::string Time(int64_t unix_millis) { return Iso8601(unix_millis / 1000); }

Result<http::Response> Models(services::RegistryService& r, PageContext& ctx, http::Request& req) {
  services::ModelFilter f;
  f.search = req.Query("search").value_or("");
  auto offset = ParseUint64(req.Query("offset").value_or("0"));
  if (!offset || *offset > 1'000'000'000)
    return MakeError(ErrorCode::BadRequest, "'offset' must be a number");
  f.offset = static_cast<int64_t>(*offset);
  f.limit = kPage;
  HANGAR_ASSIGN_OR_RETURN(auto page, r.ListModels(ctx.principal, f));
  List models;
  for (const auto& m : page.models) {
    Data d;
    d.set("name", m.name);
    d.set("owner", m.owner);
    d.set("private", m.is_private || m.pins_private);
    d.set("updated", Time(m.updated_at));
    List aliases;
    for (const auto& [alias, version] : m.aliases) {
      Data a;
      a.set("alias", alias);
      a.set("version", std::to_string(version));
      aliases.push_back(a);
    }
    d.set("aliases", aliases);
    models.push_back(d);
  }
  Data data;
  data.set("models", models);
  data.set("search", f.search);
  std::string query = f.search.empty() ? "" : "&search=" + PercentEncode(f.search);
  if (f.offset > 0)
    data.set("prev_url",
             "/registry?offset=" + std::to_string(std::max<int64_t>(0, f.offset - kPage)) + query);
  if (page.next_offset)
    data.set("next_url", "/registry?offset=" + std::to_string(page.next_offset) + query);
  return Html(ctx, 200, "Model registry", "registry", data);
}

Result<http::Response> Model(services::RegistryService& r, PageContext& ctx, http::Request& req) {
  std::string name(req.Param("name"));
  HANGAR_ASSIGN_OR_RETURN(auto m, r.GetModel(ctx.principal, name));
  services::VersionFilter f;
  f.name = m.name;
  f.limit = kVersionsShown;
  HANGAR_ASSIGN_OR_RETURN(auto page, r.ListVersions(ctx.principal, f));
  HANGAR_ASSIGN_OR_RETURN(auto events, r.AliasLog(ctx.principal, m.name, 0, kEventsShown));
  Data data;
  data.set("name", m.name);
  data.set("owner", m.owner);
  data.set("private", m.is_private || m.pins_private);
  data.set("updated", Time(m.updated_at));
  if (!m.description.empty()) data.set("description", m.description);
  List tags;
  for (const auto& [key, value] : m.tags) {
    Data t;
    t.set("key", key);
    t.set("value", value);
    tags.push_back(t);
  }
  data.set("has_tags", !m.tags.empty());
  data.set("tags", tags);
  List versions;
  for (const auto& v : page.versions) {
    Data d;
    d.set("version", std::to_string(v.version));
    d.set("repo", v.repo);
    d.set("short", v.commit.substr(0, 12));
    auto type = ParseRepoType(v.repo_type).value_or(RepoType::Model);
    d.set("tree_url", "/" + std::string(RepoUrlPrefix(type)) + v.repo + "/tree/" + v.commit);
    d.set("stage", std::string(services::StageName(services::StageOf(m, v))));
    List aliases;
    for (const auto& [alias, target] : m.aliases)
      if (target == v.version) aliases.push_back(Data(alias));
    d.set("aliases", aliases);
    d.set("created", Time(v.created_at));
    versions.push_back(d);
  }
  data.set("versions", versions);
  List log;
  for (const auto& e : events) {
    Data d;
    d.set("at", Time(e.at));
    d.set("actor", e.actor);
    d.set("alias", e.alias);
    d.set("from", e.from_version ? "v" + std::to_string(e.from_version) : std::string("—"));
    d.set("to", e.to_version ? "v" + std::to_string(e.to_version) : std::string("—"));
    log.push_back(d);
  }
  data.set("events", log);
  return Html(ctx, 200, m.name + " · Model registry", "registered_model", data);
}

}  // namespace

void AddRegistryPages(http::Router& router, WebDeps& deps) {
  if (!deps.registry) return;
  services::RegistryService& r = *deps.registry;
  AddPage(router, deps, http::Method::Get, "/registry", http::Requirement::Public(),
          [&r](PageContext& ctx, http::Request& req) { return Models(r, ctx, req); });
  AddPage(router, deps, http::Method::Get, "/registry/{name}", http::Requirement::Public(),
          [&r](PageContext& ctx, http::Request& req) { return Model(r, ctx, req); });
}

}  // namespace hangar::web
