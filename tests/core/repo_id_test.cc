#include "core/repo_id.h"

#include <gtest/gtest.h>

namespace hangar {
namespace {

TEST(RepoId, AcceptsValidNames) {
  auto id = RepoId::Parse(RepoType::Dataset, "acme", "bert-base_v1.2");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->Id(), "acme/bert-base_v1.2");
  EXPECT_EQ(id->UrlPath(), "datasets/acme/bert-base_v1.2");
}

TEST(RepoId, RejectsInvalidNamesWithMessage) {
  for (const char* bad :
       {"", "-x", "x-", ".x", "a..b", "a--b", "a/b", "a b", "x.git", "a\\b", "..", "caf\xc3\xa9"}) {
    auto id = RepoId::Parse(RepoType::Model, "acme", bad);
    ASSERT_FALSE(id.has_value()) << bad;
    EXPECT_EQ(id.error().code, ErrorCode::BadRequest);
    EXPECT_NE(id.error().message.find("repo name"), std::string::npos) << bad;
  }
  EXPECT_FALSE(RepoId::Parse(RepoType::Model, std::string(97, 'a'), "x").has_value());
}

}  // namespace
}  // namespace hangar
