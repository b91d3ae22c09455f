#include "db/sql/sql_registry_parts.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace hangar::db {
namespace {

// Placeholders for an IN list of `n` values, rounded up to a few sizes so that each query
// has few texts to prepare (the extra places repeat the last value).
size_t InListSize(size_t n) {
  for (size_t size : {4, 16, 64, 256, 1024})
    if (n <= size) return size;
  return n;
}
std::string Marks(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += i ? ", ?" : "?";
  return out;
}

}  // namespace

Result<void> ReadModelsParts(Connection& c, std::vector<ModelRecord>& models) {
  if (models.empty()) return {};
  std::unordered_map<int64_t, ModelRecord*> by_id;
  for (auto& m : models) by_id[m.id] = &m;
  size_t n = InListSize(models.size());
  for (bool tags : {true, false}) {
    HANGAR_ASSIGN_OR_RETURN(auto s,
                            c.Prepare(std::string(tags ? "SELECT model_id, key, value FROM "
                                                         "registered_model_tags"
                                                       : "SELECT model_id, alias, version FROM "
                                                         "model_aliases") +
                                      " WHERE model_id IN (" + Marks(n) + ")"));
    for (size_t i = 0; i < n; ++i) s.Bind(int(i) + 1, models[std::min(i, models.size() - 1)].id);
    while (true) {
      HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ModelRecord* m = by_id.at(s.Int(0));
      if (tags)
        m->tags[s.Text(1)] = s.Text(2);
      else
        m->aliases[s.Text(1)] = s.Int(2);
    }
  }
  return {};
}

Result<void> ReadVersionsParts(Connection& c, std::vector<VersionRecord>& versions) {
  if (versions.empty()) return {};
  std::map<std::pair<int64_t, int64_t>, VersionRecord*> by_key;
  for (auto& v : versions) by_key[{v.model_id, v.version}] = &v;
  size_t n = InListSize(versions.size());
  std::string pairs;
  for (size_t i = 0; i < n; ++i) pairs += i ? ", (?, ?)" : "(?, ?)";
  for (bool tags : {true, false}) {
    HANGAR_ASSIGN_OR_RETURN(
        auto s, c.Prepare(std::string(tags ? "SELECT model_id, version, key, value FROM "
                                             "model_version_tags"
                                           : "SELECT model_id, version, COALESCE(repo_id, 0), "
                                             "repo, commit_sha FROM model_version_datasets") +
                          " WHERE (model_id, version) IN (VALUES " + pairs + ")" +
                          (tags ? "" : " ORDER BY model_id, version, position")));
    for (size_t i = 0; i < n; ++i) {
      const VersionRecord& v = versions[std::min(i, versions.size() - 1)];
      s.Bind(int(2 * i) + 1, v.model_id).Bind(int(2 * i) + 2, v.version);
    }
    while (true) {
      HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      VersionRecord* v = by_key.at({s.Int(0), s.Int(1)});
      if (tags)
        v->tags[s.Text(2)] = s.Text(3);
      else
        v->datasets.push_back(VersionDataset{s.Int(2), s.Text(3), s.Text(4)});
    }
  }
  return {};
}

}  // namespace hangar::db
