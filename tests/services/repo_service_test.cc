// RepoService's access rules for credentials bound to one repo (issue 18): deploy keys and
// repo-scoped user credentials (Principal::repo_scope, Principal::deploy_key_id).

#include "services/repo/repo_service.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "git/test_repo.h"
#include "service_test.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;

class RepoScopeTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    ann_ = testing::MakeUser(*accounts_, "ann");
    private_id_ = testing::MakeRepoRow(*stores_.repos, "ann", "private", /*is_private=*/true);
    public_id_ = testing::MakeRepoRow(*stores_.repos, "ann", "public");
  }

  // A deploy key's principal as SshKeyService::PrincipalFor makes it.
  Principal DeployKey(int64_t repo_id, TokenRole role) {
    Principal p;
    p.anonymous = false;
    p.name = "deploy-key-7";
    p.deploy_key_id = 7;
    p.repo_scope = repo_id;
    p.role = role;
    p.token_name = "deploy key 'ci'";
    return p;
  }

  Principal ann_;
  const RepoId private_{RepoType::Model, "ann", "private"};
  const RepoId public_{RepoType::Model, "ann", "public"};
  int64_t private_id_ = 0, public_id_ = 0;
};

TEST_F(RepoScopeTest, ReadOnlyDeployKeyReadsItsRepoOnly) {
  Principal key = DeployKey(private_id_, TokenRole::Read);
  auto opened = repos_->Open(key, private_, Access::Read);
  ASSERT_TRUE(opened.has_value()) << opened.error().message;
  EXPECT_EQ(opened->access, Access::Read);
  auto write = repos_->Open(key, private_, Access::Write);
  ASSERT_FALSE(write.has_value());
  EXPECT_EQ(write.error().code, ErrorCode::Forbidden);
  EXPECT_EQ(write.error().message,
            "deploy key 'ci' is read-only; ann/private needs a read-write key");
  EXPECT_EQ(repos_->Open(key, private_, Access::Admin).error().code, ErrorCode::Forbidden);
  // Every other repo is unknown to it, public ones included.
  auto other = repos_->Open(key, public_, Access::Read);
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(other.error().message, "Repository not found: ann/public");
}

TEST_F(RepoScopeTest, ReadWriteDeployKeyPushesButDoesNotAdminister) {
  Principal key = DeployKey(public_id_, TokenRole::Write);
  EXPECT_EQ(repos_->Open(key, public_, Access::Write).value().access, Access::Write);
  auto admin = repos_->Open(key, public_, Access::Admin);
  ASSERT_FALSE(admin.has_value());
  EXPECT_EQ(admin.error().code, ErrorCode::Forbidden);
  EXPECT_EQ(admin.error().message, "deploy key 'ci' cannot administer ann/public");
  EXPECT_EQ(repos_->Open(key, private_, Access::Read).error().code, ErrorCode::RepoNotFound);
}

TEST_F(RepoScopeTest, DeployKeyGetsNothingFromNamespaceMemberships) {
  // Named like the namespace's owner, a site admin even: the key's own level still rules.
  Principal key = DeployKey(private_id_, TokenRole::Read);
  key.name = "ann";
  key.is_admin = true;
  EXPECT_EQ(repos_->Open(key, private_, Access::Write).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(repos_->Open(key, public_, Access::Read).error().code, ErrorCode::RepoNotFound);
  // A deploy key bound to no repo opens none.
  Principal unbound = DeployKey(0, TokenRole::Write);
  EXPECT_EQ(repos_->Open(unbound, public_, Access::Read).error().code, ErrorCode::RepoNotFound);
}

TEST_F(RepoScopeTest, ScopedUserHasTheirAccessOnThatRepoOnly) {
  Principal scoped = ann_;
  scoped.repo_scope = private_id_;
  EXPECT_EQ(repos_->Open(scoped, private_, Access::Admin).value().access, Access::Admin);
  EXPECT_EQ(repos_->Open(scoped, public_, Access::Read).error().code, ErrorCode::RepoNotFound);
  // Unscoped, the same user opens both.
  EXPECT_TRUE(repos_->Open(ann_, public_, Access::Admin).has_value());
}

TEST_F(RepoScopeTest, ScopedPrincipalsTakeNoNamespaceActions) {
  Principal scoped = ann_;
  scoped.repo_scope = private_id_;
  auto created = repos_->Create(scoped, {RepoType::Model, "ann", "new"}, false);
  ASSERT_FALSE(created.has_value());
  EXPECT_EQ(created.error().code, ErrorCode::Forbidden);
  EXPECT_EQ(
      repos_
          ->Create(DeployKey(private_id_, TokenRole::Write), {RepoType::Model, "ann", "new"}, false)
          .error()
          .code,
      ErrorCode::Forbidden);
  auto moved = repos_->Move(scoped, private_, {RepoType::Model, "ann", "renamed"});
  ASSERT_FALSE(moved.has_value());
  EXPECT_EQ(moved.error().code, ErrorCode::Forbidden);
  EXPECT_TRUE(stores_.repos->Find(private_).has_value());
  // Listings show such a principal the public repos only.
  auto page = repos_->List(scoped, db::RepoQuery{}).value();
  ASSERT_EQ(page.items.size(), 1u);
  EXPECT_EQ(page.items[0].name, "public");
  EXPECT_EQ(repos_->List(ann_, db::RepoQuery{}).value().items.size(), 2u);
}

// A pull mirror (issue 18 §4) is read-only for everyone: only its syncs change it. Reading
// and administering it (settings, turning it back into a normal repo) still work.
TEST_F(RepoScopeTest, APullMirrorRefusesWritesOnly) {
  ASSERT_TRUE(repos_->Open(ann_, public_, Access::Write).has_value());
  ASSERT_TRUE(repos_->SetMirror(public_id_, true).has_value());
  auto write = repos_->Open(ann_, public_, Access::Write);
  ASSERT_FALSE(write.has_value());
  EXPECT_EQ(write.error().code, ErrorCode::Forbidden);
  EXPECT_NE(write.error().message.find("mirror"), std::string::npos) << write.error().message;
  EXPECT_TRUE(repos_->Open(ann_, public_, Access::Read).has_value());
  EXPECT_TRUE(repos_->Open(ann_, public_, Access::Admin).has_value());
  // The mark is read through the cache: turning it off takes effect at once.
  ASSERT_TRUE(repos_->SetMirror(public_id_, false).has_value());
  EXPECT_TRUE(repos_->Open(ann_, public_, Access::Write).has_value());
  EXPECT_EQ(repos_->SetMirror(9999999, true).error().code, ErrorCode::RepoNotFound);
}

}  // namespace
}  // namespace hangar::services
