#pragma once
// SqlWhere: a WHERE clause built from fixed pieces of SQL and the values they bind, in
// order, shared by the registry's and the gateway's stores; with the rule of which
// registered models a caller may see (db/registry_store.h ModelQuery).

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "db/sql/sql.h"

namespace hangar::db {

// Whether registered model `model` (a table alias) pins something private: a version's
// repo or a training dataset that is private now, or that was deleted (whether it was
// private is unknown then: the safe side). SQL, true or false.
inline std::string PinsPrivateSql(const std::string& model) {
  return "(EXISTS (SELECT 1 FROM model_versions pv LEFT JOIN repos pr ON pr.id = pv.repo_id "
         "WHERE pv.model_id = " +
         model +
         ".id AND (pr.id IS NULL OR pr.private <> 0)) OR "
         "EXISTS (SELECT 1 FROM model_version_datasets pd LEFT JOIN repos dr ON dr.id = "
         "pd.repo_id WHERE pd.model_id = " +
         model +
         ".id AND (dr.id IS NULL OR dr.private "
         "<> 0)))";
}

// Clauses are Hangar's literal SQL; every value a caller gave is bound, never spliced.
struct SqlWhere {
  std::string sql;  // "" or " WHERE … AND …"
  std::vector<std::variant<int64_t, std::string>> binds;

  void Add(const std::string& clause) {
    sql += sql.empty() ? " WHERE " : " AND ";
    sql += clause;
  }
  template <typename T>
  void Add(const std::string& clause, T value) {
    Add(clause);
    binds.emplace_back(std::move(value));
  }
  // Only the models (of table alias `model`) a caller may see: all of them, or the public
  // ones (not flagged private, pinning nothing private) and those of `owners`.
  void Visibility(bool all, const std::vector<int64_t>& owners, const std::string& model) {
    if (all) return;
    std::string clause = "(" + model + ".private = 0 AND NOT " + PinsPrivateSql(model);
    for (size_t i = 0; i < owners.size(); ++i) clause += " OR " + model + ".owner_id = ?";
    Add(clause + ")");
    for (int64_t id : owners) binds.emplace_back(id);
  }
  // Binds the values from ?1; returns the next free index.
  int BindAll(Stmt& s) const {
    int i = 1;
    for (const auto& b : binds) std::visit([&](const auto& v) { s.Bind(i++, v); }, b);
    return i;
  }
};

// One page of records in one read transaction: `sql` (its WHERE from `w`, ending in
// "LIMIT ? OFFSET ?") run with w's values, `limit` and `offset`; each row made a record by
// read_row(stmt), then read_parts(conn, records) filling what other tables hold.
template <typename Record, typename ReadRow, typename ReadParts>
Result<std::vector<Record>> ReadPage(Pool& pool, const std::string& sql, const SqlWhere& w,
                                     int64_t limit, int64_t offset, ReadRow read_row,
                                     ReadParts read_parts) {
  HANGAR_ASSIGN_OR_RETURN(auto c, pool.Read());
  return InReadTransaction(*c, [&]() -> Result<std::vector<Record>> {
    std::vector<Record> out;
    {
      HANGAR_ASSIGN_OR_RETURN(auto s, c->Prepare(sql));
      int next = w.BindAll(s);
      s.Bind(next, limit).Bind(next + 1, offset);
      while (true) {
        HANGAR_ASSIGN_OR_RETURN(bool row, s.Step());
        if (!row) break;
        out.push_back(read_row(s));
      }
    }
    HANGAR_TRY(read_parts(*c, out));
    return out;
  });
}

}  // namespace hangar::db
