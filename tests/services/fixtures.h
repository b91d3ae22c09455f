#pragma once
// Fixture pieces shared by the services tests: a signed-in user and a repo row.

#include <gtest/gtest.h>

#include <string>

#include "core/principal.h"
#include "db/repo_store.h"
#include "services/auth/account_service.h"

namespace hangar::services::testing {

// Creates user `name` and returns them as a principal holding a token of `role`.
inline Principal MakeUser(AccountService& accounts, const std::string& name,
                          TokenRole role = TokenRole::Write) {
  auto u = accounts.CreateUser(name, name + "@example.com", false);
  EXPECT_TRUE(u.has_value()) << u.error().message;
  Principal p;
  p.anonymous = false;
  p.user_id = u.has_value() ? u->id : 0;
  p.name = name;
  p.role = role;
  return p;
}

// Creates the row of model repo `ns`/`name` (no git repository) and returns its id.
inline int64_t MakeRepoRow(db::RepoStore& repos, const std::string& ns, const std::string& name,
                           bool is_private = false) {
  db::RepoRecord r;
  r.type = RepoType::Model;
  r.ns = ns;
  r.name = name;
  r.is_private = is_private;
  auto c = repos.Create(r);
  EXPECT_TRUE(c.has_value()) << c.error().message;
  return c.has_value() ? c->id : 0;
}

}  // namespace hangar::services::testing
