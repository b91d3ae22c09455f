// SshKeyService (services/git/ssh_keys.h): who may add, list and delete keys and deploy
// keys, and whom a key signs in as.

#include "services/git/ssh_keys.h"

#include <gmock/gmock.h>
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
using ::testing::HasSubstr;

// Public keys made with `ssh-keygen -t ed25519 -N ''`.
constexpr const char kAnnKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILYvn+PYd/NTI0WVXdqkNUFCwt9wRCHJyVXA63ghK5Pe ann@laptop";
constexpr const char kAnnBlob[] =
    "AAAAC3NzaC1lZDI1NTE5AAAAILYvn+PYd/NTI0WVXdqkNUFCwt9wRCHJyVXA63ghK5Pe";
constexpr const char kCiKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIImvoSaAW6h2k3beqM8fGJPF8k+CnbhsCcPhGxBjs5m2 second";
constexpr const char kEcdsaKey[] =
    "ecdsa-sha2-nistp256 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBDPaw5Fp1uEccdJCXyR+gMWH9DkMNp1pyfYtaBrZC1"
    "snzeoOZD4N4gw3QIQAHSrgE3j+J7CMLmw8r7umIcc86/Q=";

class SshKeyServiceTest : public testing::ServiceTest {
 protected:
  void SetUp() override {
    OpenHub();
    if (HasFatalFailure()) return;
    keys_ = std::make_unique<SshKeyService>(*stores_.ssh_keys, *stores_.users, *repos_,
                                            [this] { return now_; });
    ann_ = testing::MakeUser(*accounts_, "ann");
    bob_ = testing::MakeUser(*accounts_, "bob");
    ann_read_ = ann_;
    ann_read_.role = TokenRole::Read;
    ann_read_.token_name = "ci";
    repo_id_ = testing::MakeRepoRow(*stores_.repos, "ann", "m", /*is_private=*/true);
    other_repo_id_ = testing::MakeRepoRow(*stores_.repos, "ann", "public");
  }

  db::SshKeyRecord AddDeploy(const char* key, bool read_write, std::string title = "") {
    auto k = keys_->AddDeployKey(ann_, repo_, key, title, read_write);
    EXPECT_TRUE(k.has_value()) << k.error().message;
    return k.has_value() ? *k : db::SshKeyRecord{};
  }

  std::unique_ptr<SshKeyService> keys_;
  int64_t now_ = 1800000000;
  Principal ann_, bob_, ann_read_;
  const RepoId repo_{RepoType::Model, "ann", "m"};
  const RepoId other_repo_{RepoType::Model, "ann", "public"};
  int64_t repo_id_ = 0, other_repo_id_ = 0;
};

TEST_F(SshKeyServiceTest, AddsListsAndDeletesOwnKeys) {
  auto k = keys_->AddUserKey(ann_, kAnnKey, "");
  ASSERT_TRUE(k.has_value()) << k.error().message;
  EXPECT_EQ(k->user_id, ann_.user_id);
  EXPECT_EQ(k->title, "ann@laptop");  // the comment
  EXPECT_EQ(k->key_type, "ssh-ed25519");
  EXPECT_EQ(k->blob_base64, kAnnBlob);
  EXPECT_EQ(k->fingerprint, "SHA256:UjKIvHhdckOpM9k6opAkjXbonwEew6MmFxPcsSKFMoo");
  EXPECT_EQ(k->created_at, now_);
  auto e = keys_->AddUserKey(ann_, kEcdsaKey, "  work  ");
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(e->title, "work");

  auto list = keys_->ListUserKeys(ann_).value();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, k->id);
  EXPECT_EQ(list[1].id, e->id);
  EXPECT_TRUE(keys_->ListUserKeys(bob_).value().empty());

  EXPECT_EQ(keys_->Find("ssh-ed25519", kAnnBlob).value().id, k->id);
  ASSERT_TRUE(keys_->DeleteUserKey(ann_, k->id).has_value());
  EXPECT_EQ(keys_->Find("ssh-ed25519", kAnnBlob).error().code, ErrorCode::NotFound);
  EXPECT_EQ(keys_->ListUserKeys(ann_).value().size(), 1u);
}

TEST_F(SshKeyServiceTest, TitleDefaultsToTheTypeAndIsChecked) {
  std::string no_comment = std::string(kEcdsaKey);
  auto k = keys_->AddUserKey(ann_, no_comment, "");
  ASSERT_TRUE(k.has_value()) << k.error().message;
  EXPECT_EQ(k->title, "ecdsa-sha2-nistp256");
  auto long_title = keys_->AddUserKey(ann_, kCiKey, std::string(101, 't'));
  ASSERT_FALSE(long_title.has_value());
  EXPECT_EQ(long_title.error().code, ErrorCode::BadRequest);
  EXPECT_THAT(long_title.error().message, HasSubstr("at most 100 characters"));
  // 100 characters of two bytes each are fine.
  std::string wide;
  for (int i = 0; i < 100; ++i) wide += "\xc3\xa9";
  EXPECT_TRUE(keys_->AddUserKey(bob_, kCiKey, wide).has_value());
  EXPECT_EQ(keys_->AddUserKey(ann_, kAnnKey, "a\nb").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(keys_->AddUserKey(ann_, kAnnKey, "\xff").error().code, ErrorCode::BadRequest);
  // A long comment is cut, not refused.
  auto cut = keys_->AddUserKey(ann_, std::string(kAnnKey) + std::string(200, 'x'), "");
  ASSERT_TRUE(cut.has_value()) << cut.error().message;
  EXPECT_EQ(cut->title.size(), 100u);
}

TEST_F(SshKeyServiceTest, WhoMayManageOwnKeys) {
  EXPECT_EQ(keys_->AddUserKey(Principal::Anonymous(), kAnnKey, "").error().code,
            ErrorCode::Unauthorized);
  EXPECT_EQ(keys_->ListUserKeys(Principal::Anonymous()).error().code, ErrorCode::Unauthorized);
  auto ro = keys_->AddUserKey(ann_read_, kAnnKey, "");
  ASSERT_FALSE(ro.has_value());
  EXPECT_EQ(ro.error().code, ErrorCode::Forbidden);
  EXPECT_THAT(ro.error().message, HasSubstr("token 'ci' is read-only"));
  // A read token lists, but does not delete.
  auto k = keys_->AddUserKey(ann_, kAnnKey, "").value();
  EXPECT_EQ(keys_->ListUserKeys(ann_read_).value().size(), 1u);
  EXPECT_EQ(keys_->DeleteUserKey(ann_read_, k.id).error().code, ErrorCode::Forbidden);
  // A credential bound to one repo manages no keys.
  Principal scoped = ann_;
  scoped.repo_scope = repo_id_;
  EXPECT_EQ(keys_->AddUserKey(scoped, kCiKey, "").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(keys_->ListUserKeys(scoped).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(keys_->DeleteUserKey(scoped, k.id).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(keys_->AddDeployKey(scoped, repo_, kCiKey, "", false).error().code,
            ErrorCode::Forbidden);
}

TEST_F(SshKeyServiceTest, AnotherUsersKeyIsNotFound) {
  auto k = keys_->AddUserKey(ann_, kAnnKey, "").value();
  auto del = keys_->DeleteUserKey(bob_, k.id);
  ASSERT_FALSE(del.has_value());
  EXPECT_EQ(del.error().code, ErrorCode::NotFound);
  EXPECT_EQ(keys_->DeleteUserKey(bob_, k.id + 100).error().code, ErrorCode::NotFound);
  // A deploy key is no user's key either.
  auto d = AddDeploy(kCiKey, false);
  EXPECT_EQ(keys_->DeleteUserKey(ann_, d.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(keys_->ListUserKeys(ann_).value().size(), 1u);
}

TEST_F(SshKeyServiceTest, OneKeyIsNeverTwoCredentials) {
  ASSERT_TRUE(keys_->AddUserKey(ann_, kAnnKey, "").has_value());
  auto again = keys_->AddUserKey(bob_, kAnnKey, "mine");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::Conflict);
  EXPECT_EQ(again.error().message, "key is already in use");
  EXPECT_EQ(keys_->AddUserKey(ann_, kAnnKey, "twice").error().code, ErrorCode::Conflict);
  EXPECT_EQ(keys_->AddDeployKey(ann_, repo_, kAnnKey, "", false).error().code, ErrorCode::Conflict);
  AddDeploy(kCiKey, false);
  EXPECT_EQ(keys_->AddUserKey(bob_, kCiKey, "").error().code, ErrorCode::Conflict);
  EXPECT_EQ(keys_->AddDeployKey(ann_, other_repo_, kCiKey, "", true).error().code,
            ErrorCode::Conflict);
}

TEST_F(SshKeyServiceTest, MalformedKeyIsBadRequest) {
  auto bad = keys_->AddUserKey(ann_, "ssh-ed25519 AAAA", "");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::BadRequest);
  EXPECT_EQ(keys_->AddDeployKey(ann_, repo_, "-----BEGIN OPENSSH PRIVATE KEY-----", "", false)
                .error()
                .message,
            "this is a private key; paste the .pub file");
}

TEST_F(SshKeyServiceTest, DeployKeysNeedTheRepoAdmin) {
  auto d = AddDeploy(kCiKey, true, "ci");
  EXPECT_EQ(d.repo_id, repo_id_);
  EXPECT_EQ(d.user_id, 0);
  EXPECT_TRUE(d.read_write);
  EXPECT_EQ(d.title, "ci");
  auto list = keys_->ListDeployKeys(ann_, repo_).value();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, d.id);
  EXPECT_TRUE(keys_->ListDeployKeys(ann_, other_repo_).value().empty());
  // Bob cannot see the private repo: it does not exist for him.
  EXPECT_EQ(keys_->ListDeployKeys(bob_, repo_).error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(keys_->AddDeployKey(bob_, repo_, kAnnKey, "", false).error().code,
            ErrorCode::RepoNotFound);
  EXPECT_EQ(keys_->DeleteDeployKey(bob_, repo_, d.id).error().code, ErrorCode::RepoNotFound);
  // He reads the public one, and may not administer it.
  EXPECT_EQ(keys_->ListDeployKeys(bob_, other_repo_).error().code, ErrorCode::Forbidden);
  // Ann's read token reads, and administers nothing.
  EXPECT_EQ(keys_->ListDeployKeys(ann_read_, repo_).error().code, ErrorCode::Forbidden);
  EXPECT_EQ(
      keys_->AddDeployKey(Principal::Anonymous(), other_repo_, kAnnKey, "", false).error().code,
      ErrorCode::Unauthorized);
  // A site admin administers every repo.
  Principal site_admin = Principal::Hub();
  site_admin.role = TokenRole::Write;
  EXPECT_EQ(keys_->ListDeployKeys(site_admin, repo_).value().size(), 1u);
}

TEST_F(SshKeyServiceTest, DeleteDeployKeyOnlyFromItsRepo) {
  auto d = AddDeploy(kCiKey, false);
  auto user_key = keys_->AddUserKey(ann_, kAnnKey, "").value();
  EXPECT_EQ(keys_->DeleteDeployKey(ann_, other_repo_, d.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(keys_->DeleteDeployKey(ann_, repo_, user_key.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(keys_->DeleteDeployKey(ann_, repo_, d.id + 100).error().code, ErrorCode::NotFound);
  ASSERT_TRUE(keys_->DeleteDeployKey(ann_, repo_, d.id).has_value());
  EXPECT_TRUE(keys_->ListDeployKeys(ann_, repo_).value().empty());
  EXPECT_EQ(keys_->ListUserKeys(ann_).value().size(), 1u);
}

TEST_F(SshKeyServiceTest, UserKeySignsInAsItsUser) {
  auto k = keys_->AddUserKey(ann_, kAnnKey, "laptop").value();
  auto p = keys_->PrincipalFor(k.id);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_FALSE(p->anonymous);
  EXPECT_EQ(p->user_id, ann_.user_id);
  EXPECT_EQ(p->name, "ann");
  EXPECT_FALSE(p->is_admin);
  EXPECT_EQ(p->role, TokenRole::Write);
  EXPECT_EQ(p->token_name, "ssh key 'laptop'");
  EXPECT_EQ(p->repo_scope, 0);
  EXPECT_EQ(p->deploy_key_id, 0);
  // Made a site admin since: the key says so at the next connection.
  ASSERT_TRUE(stores_.users->SetAdmin(ann_.user_id, true).has_value());
  EXPECT_TRUE(keys_->PrincipalFor(k.id).value().is_admin);
  // Deleted: refused at once.
  ASSERT_TRUE(keys_->DeleteUserKey(ann_, k.id).has_value());
  auto gone = keys_->PrincipalFor(k.id);
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(gone.error().message, "SSH key is no longer valid");
}

TEST_F(SshKeyServiceTest, DeployKeySignsInBoundToItsRepo) {
  auto ro = AddDeploy(kCiKey, false, "reader");
  auto rw = AddDeploy(kAnnKey, true, "pusher");
  auto p = keys_->PrincipalFor(ro.id).value();
  EXPECT_FALSE(p.anonymous);
  EXPECT_EQ(p.user_id, 0);
  EXPECT_EQ(p.name, "deploy-key-" + std::to_string(ro.id));
  EXPECT_EQ(p.deploy_key_id, ro.id);
  EXPECT_EQ(p.repo_scope, repo_id_);
  EXPECT_EQ(p.role, TokenRole::Read);
  EXPECT_EQ(p.token_name, "deploy key 'reader'");
  EXPECT_EQ(keys_->PrincipalFor(rw.id).value().role, TokenRole::Write);

  // What RepoService lets it do: its repo only, at its level.
  EXPECT_TRUE(repos_->Open(p, repo_, Access::Read).has_value());
  auto push = repos_->Open(p, repo_, Access::Write);
  ASSERT_FALSE(push.has_value());
  EXPECT_EQ(push.error().code, ErrorCode::Forbidden);
  EXPECT_EQ(push.error().message, "deploy key 'reader' is read-only; ann/m needs a read-write key");
  EXPECT_EQ(repos_->Open(p, other_repo_, Access::Read).error().code, ErrorCode::RepoNotFound);
  auto writer = keys_->PrincipalFor(rw.id).value();
  EXPECT_EQ(repos_->Open(writer, repo_, Access::Write).value().access, Access::Write);
  EXPECT_EQ(repos_->Open(writer, repo_, Access::Admin).error().code, ErrorCode::Forbidden);

  // The repo deleted: its keys sign in no more.
  ASSERT_TRUE(stores_.repos->Delete(repo_).has_value());
  EXPECT_EQ(keys_->PrincipalFor(ro.id).error().code, ErrorCode::Unauthorized);
  EXPECT_EQ(keys_->Find("ssh-ed25519", kAnnBlob).error().code, ErrorCode::NotFound);
}

TEST_F(SshKeyServiceTest, DeletedUsersKeySignsInNoMore) {
  auto k = keys_->AddUserKey(bob_, kAnnKey, "").value();
  // No user deletion exists yet; a row the user store no longer answers for stands in.
  ASSERT_TRUE(
      stores_.pool->Write().value()->Exec("DELETE FROM users WHERE name = 'bob'").has_value());
  EXPECT_EQ(keys_->PrincipalFor(k.id).error().code, ErrorCode::Unauthorized);
}

TEST_F(SshKeyServiceTest, LastUseIsRecordedAtMostOnceAMinute) {
  auto k = keys_->AddUserKey(ann_, kAnnKey, "").value();
  auto last_used = [&] { return stores_.ssh_keys->Get(k.id).value().last_used_at; };
  EXPECT_FALSE(last_used().has_value());
  ASSERT_TRUE(keys_->PrincipalFor(k.id).has_value());
  EXPECT_EQ(last_used(), now_);
  const int64_t first = now_;
  now_ += 59;
  ASSERT_TRUE(keys_->PrincipalFor(k.id).has_value());
  EXPECT_EQ(last_used(), first);
  now_ += 1;
  ASSERT_TRUE(keys_->PrincipalFor(k.id).has_value());
  EXPECT_EQ(last_used(), now_);
}

}  // namespace
}  // namespace hangar::services
