// RegistryService (registry_service.h): models, who sees and changes them, names and tags.
// Versions, aliases and stages are in registry_versions.cc.

#include "services/registry/registry_service.h"

#include <algorithm>

#include "core/util.h"
#include "services/registry/registry_internal.h"

namespace hangar::services {
namespace registry {

namespace {
bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
}  // namespace

Result<void> CheckModelName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 128 && IsAlnum(name[0]) &&
            std::all_of(name.begin(), name.end(),
                        [](char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '-'; });
  if (ok) return {};
  return MakeError(ErrorCode::BadRequest,
                   "invalid model name '" + name.substr(0, 140) +
                       "': 1 to 128 of letters, digits, '.', '_' and '-', starting with a letter "
                       "or digit");
}

Result<void> CheckAlias(const std::string& alias) {
  bool ok = !alias.empty() && alias.size() <= 256 && (IsAlnum(alias[0]) || alias[0] == '_') &&
            std::all_of(alias.begin(), alias.end(),
                        [](char c) { return IsAlnum(c) || c == '_' || c == '-'; });
  if (ok && (alias[0] >= '0' && alias[0] <= '9')) ok = false;
  if (!ok)
    return MakeError(ErrorCode::BadRequest,
                     "invalid alias '" + alias.substr(0, 260) +
                         "': 1 to 256 of letters, digits, '_' and '-', starting with a letter or "
                         "'_'");
  bool version_like =
      alias.size() > 1 && (alias[0] == 'v' || alias[0] == 'V') &&
      std::all_of(alias.begin() + 1, alias.end(), [](char c) { return c >= '0' && c <= '9'; });
  std::string lower = AsciiLower(alias);
  if (lower == "latest" || version_like)
    return MakeError(ErrorCode::BadRequest, "the alias '" + alias +
                                                "' is reserved: 'latest' and v<number> name "
                                                "versions already");
  return {};
}

Result<void> CheckTag(const std::string& key, const std::string* value) {
  bool ok = !key.empty() && key.size() <= 250 && std::none_of(key.begin(), key.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20;
  });
  if (!ok)
    return MakeError(ErrorCode::BadRequest,
                     "invalid tag key: 1 to 250 bytes without control characters");
  if (value && value->size() > 5000)
    return MakeError(ErrorCode::BadRequest, "the value of tag '" + key + "' is over 5,000 bytes");
  return {};
}

Result<void> CheckTags(const std::map<std::string, std::string>& tags) {
  if (tags.size() > 100) return MakeError(ErrorCode::BadRequest, "more than 100 tags");
  for (const auto& [key, value] : tags) HANGAR_TRY(CheckTag(key, &value));
  return {};
}

Result<void> CheckDescription(const std::string& text) {
  if (text.size() <= 65536) return {};
  return MakeError(ErrorCode::BadRequest, "the description is over 65,536 bytes");
}

}  // namespace registry

RegistryService::RegistryService(db::RegistryStore& store, db::UserStore& users,
                                 AccessPolicy& access, RepoService& repos, ContentService& content,
                                 RegistryOptions options)
    : store_(store),
      users_(users),
      access_(access),
      repos_(repos),
      content_(content),
      options_(std::move(options)) {
  if (!options_.now_millis) options_.now_millis = NowUnixMillis;
}

int64_t RegistryService::Now() const { return options_.now_millis(); }

Result<RegistryService::Seen> RegistryService::See(const Principal& who, const std::string& name) {
  auto missing = [&] {
    return MakeError(ErrorCode::NotFound,
                     "Registered model '" + name.substr(0, 140) + "' not found");
  };
  if (!registry::CheckModelName(name)) return missing();
  HANGAR_ASSIGN_OR_RETURN(auto model, store_.GetModel(name));
  if (!model) return missing();
  Access access = access_.NamespaceAccess(who, model->owner);
  Seen seen{std::move(*model), access};
  bool hidden = seen.model.is_private || seen.model.pins_private;
  if (hidden && seen.access == Access::None) return missing();  // as a private repo: unseen
  return seen;
}

Result<RegistryService::Seen> RegistryService::SeeFor(const Principal& who, const std::string& name,
                                                      Access needed) {
  if (who.anonymous)
    return MakeError(ErrorCode::Unauthorized, "sign in to change the model registry");
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  if (seen.access < needed || !who.CanWrite())
    return MakeError(ErrorCode::Forbidden,
                     std::string("this needs ") + (needed == Access::Admin ? "admin" : "write") +
                         " access to '" + seen.model.owner + "' and a write token");
  return seen;
}

Result<int64_t> RegistryService::OwnerId(const std::string& owner) {
  auto user = users_.FindUserByName(owner);
  if (user) return user->id;
  if (user.error().code != ErrorCode::NotFound) return std::move(user).error();
  auto org = users_.FindOrgByName(owner);
  if (org) return org->id;
  if (org.error().code != ErrorCode::NotFound) return std::move(org).error();
  return MakeError(ErrorCode::NotFound, "no user or organization '" + owner + "'");
}

Result<RegistryService::Visibility> RegistryService::VisibleModels(const Principal& who) {
  Visibility v;
  v.all = who.is_admin;
  if (v.all || who.anonymous) return v;
  // The caller's own namespace and their orgs': those whose private models they read.
  v.owner_ids.push_back(who.user_id);
  HANGAR_ASSIGN_OR_RETURN(auto orgs, users_.ListOrgsOfUser(who.user_id));
  for (const auto& m : orgs) v.owner_ids.push_back(m.org.id);
  return v;
}

Result<db::ModelRecord> RegistryService::Proposed(const Principal& who, const NewModel& m) {
  if (who.anonymous) return MakeError(ErrorCode::Unauthorized, "sign in to register a model");
  HANGAR_TRY(registry::CheckModelName(m.name));
  HANGAR_TRY(registry::CheckDescription(m.description));
  HANGAR_TRY(registry::CheckTags(m.tags));
  std::string owner = m.owner.empty() ? who.name : m.owner;
  if (access_.NamespaceAccess(who, owner) < Access::Write || !who.CanWrite())
    return MakeError(ErrorCode::Forbidden, "you cannot create models in '" + owner +
                                               "': it needs write access and a write token");
  db::ModelRecord rec;
  HANGAR_ASSIGN_OR_RETURN(rec.owner_id, OwnerId(owner));
  rec.owner = owner;
  rec.name = m.name;
  rec.description = m.description;
  rec.is_private = m.is_private;
  rec.created_by = who.user_id;
  rec.created_at = Now();
  rec.tags = m.tags;
  return rec;
}

Result<db::ModelRecord> RegistryService::Insert(const db::ModelRecord& rec) {
  auto id = store_.CreateModel(rec);
  if (!id && id.error().code == ErrorCode::Conflict)
    return MakeError(ErrorCode::Conflict,
                     "Registered model (name=" + rec.name + ") already exists.");
  if (!id) return std::move(id).error();
  HANGAR_ASSIGN_OR_RETURN(auto created, store_.GetModelById(*id));
  if (!created) return MakeError(ErrorCode::Conflict, "the model was deleted meanwhile");
  return std::move(*created);
}

Result<db::ModelRecord> RegistryService::CreateModel(const Principal& who, const NewModel& m) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(db::ModelRecord rec, Proposed(who, m));
  return Insert(rec);
}

Result<db::ModelRecord> RegistryService::GetModel(const Principal& who, const std::string& name) {
  HANGAR_ASSIGN_OR_RETURN(Seen seen, See(who, name));
  return std::move(seen.model);
}

Result<ModelPage> RegistryService::ListModels(const Principal& who, const ModelFilter& f) {
  if (f.limit < 1 || f.limit > 1000 || f.offset < 0)
    return MakeError(ErrorCode::BadRequest, "the page size must be 1 to 1000");
  for (const std::string* text : {&f.search, &f.like, &f.name, &f.owner})
    if (std::any_of(text->begin(), text->end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
      return MakeError(ErrorCode::BadRequest, "a search holds control characters");
  db::ModelQuery q;
  q.owner = f.owner;
  if (!f.like.empty()) {
    q.name_like = f.like;
  } else if (!f.search.empty()) {
    // Its % _ and \ are the caller's text, not wildcards.
    q.name_like = "%";
    for (char c : f.search) {
      if (c == '%' || c == '_' || c == '\\') q.name_like += '\\';
      q.name_like += c;
    }
    q.name_like += "%";
  }
  q.name_equals = f.name;
  q.tag_key = f.tag_key;
  q.tag_value = f.tag_value;
  q.newest_first = f.newest_first;
  q.offset = f.offset;
  q.limit = f.limit + 1;  // one more: whether a next page exists
  HANGAR_ASSIGN_OR_RETURN(Visibility seen, VisibleModels(who));
  q.include_all_private = seen.all;
  q.readable_owner_ids = std::move(seen.owner_ids);
  HANGAR_ASSIGN_OR_RETURN(auto models, store_.ListModels(q));
  ModelPage page;
  if (static_cast<int64_t>(models.size()) > f.limit) {
    models.pop_back();
    page.next_offset = f.offset + f.limit;
  }
  page.models = std::move(models);
  return page;
}

Result<db::ModelRecord> RegistryService::UpdateModel(const Principal& who, const std::string& name,
                                                     const std::optional<std::string>& description,
                                                     const std::optional<std::string>& new_name) {
  auto changed = Changing();
  // A rename moves the name every models:/name@alias consumer uses: as a delete, Admin.
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, new_name ? Access::Admin : Access::Write));
  if (description) HANGAR_TRY(registry::CheckDescription(*description));
  if (new_name) HANGAR_TRY(registry::CheckModelName(*new_name));
  auto done = store_.UpdateModel(seen.model.id, description, new_name, Now());
  if (!done && done.error().code == ErrorCode::Conflict)
    return MakeError(ErrorCode::Conflict,
                     "Registered model (name=" + *new_name + ") already exists.");
  if (!done) return std::move(done).error();
  return GetModel(who, new_name.value_or(name));
}

Result<void> RegistryService::DeleteModel(const Principal& who, const std::string& name) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, Access::Admin));
  return store_.DeleteModel(seen.model.id);
}

Result<void> RegistryService::SetModelTag(const Principal& who, const std::string& name,
                                          const std::string& key,
                                          const std::optional<std::string>& value) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, Access::Write));
  HANGAR_TRY(registry::CheckTag(key, value ? &*value : nullptr));
  if (value && !seen.model.tags.count(key) && seen.model.tags.size() >= 100)
    return MakeError(ErrorCode::BadRequest, "a model holds at most 100 tags");
  return store_.SetModelTag(seen.model.id, key, value, Now());
}

Result<void> RegistryService::SetRole(const Principal& who, const std::string& name,
                                      const std::string& user,
                                      const std::optional<std::string>& role) {
  auto changed = Changing();
  HANGAR_ASSIGN_OR_RETURN(Seen seen, SeeFor(who, name, Access::Admin));
  if (role && *role != "deployer")
    return MakeError(ErrorCode::BadRequest, "unknown role '" + *role + "': only 'deployer'");
  HANGAR_ASSIGN_OR_RETURN(auto rec, users_.FindUserByName(user));
  return store_.SetRole(seen.model.id, rec.id, role);
}

}  // namespace hangar::services
