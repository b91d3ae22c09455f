#pragma once
// Shared fixture for db tests: a fresh SQLite database in a temporary directory.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "db/sql/sql_stores.h"

namespace hangar::db::testing {

inline std::filesystem::path MakeTempDir(const char* prefix) {
  std::string tmpl =
      (std::filesystem::path(::testing::TempDir()) / (std::string(prefix) + "-XXXXXX")).string();
  char* p = mkdtemp(tmpl.data());
  EXPECT_NE(p, nullptr);
  return p ? std::filesystem::path(p) : std::filesystem::path();
}

class DbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("hangar-db");
    auto s = OpenSqliteStores(DbFile());
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
  }
  void TearDown() override {
    stores_ = Stores{};
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path DbFile() const { return dir_ / "hangar.db"; }
  UserStore& users() { return *stores_.users; }
  RepoStore& repos() { return *stores_.repos; }
  LfsStore& lfs() { return *stores_.lfs; }
  UploadStore& uploads() { return *stores_.uploads; }
  RegistryStore& registry() { return *stores_.registry; }
  GatewayStore& gateway() { return *stores_.gateway; }

  std::filesystem::path dir_;
  Stores stores_;
};

}  // namespace hangar::db::testing
