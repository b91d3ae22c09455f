#pragma once
// ServiceTest: the base of the services' fixtures that need a hub's metadata — a temporary
// directory, the stores on a fresh SQLite database in it, and the access, account and repo
// services over them (repositories under <dir>/repos).

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "db/sql/sql_stores.h"
#include "git/repo_reader.h"
#include "git/test_repo.h"
#include "services/auth/access_policy.h"
#include "services/auth/account_service.h"
#include "services/repo/repo_service.h"

namespace hangar::services::testing {

class ServiceTest : public ::testing::Test {
 protected:
  // Opens the stores and makes the services; a failure is fatal to the test (check
  // HasFatalFailure() before going on).
  void OpenHub() {
    auto s = db::OpenSqliteStores(std::filesystem::path(dir_.path()) / "hangar.db");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
    access_ = std::make_unique<AccessPolicy>(*stores_.users);
    accounts_ = std::make_unique<AccountService>(*stores_.users, *access_);
    repos_ = std::make_unique<RepoService>(*stores_.repos, *access_, reader_,
                                           std::filesystem::path(dir_.path()) / "repos");
  }

  git::testing::TempDir dir_;
  db::Stores stores_;
  git::RepoReader reader_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<RepoService> repos_;
};

}  // namespace hangar::services::testing
