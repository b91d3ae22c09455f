// SshKeyStore's conformance suite (db/ssh_key_store.h), on each engine.

#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class SshKeyStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    for (auto [name, id] : {std::pair{"ann", &ann_}, std::pair{"bob", &bob_}}) {
      UserRecord u;
      u.name = name;
      *id = users().CreateUser(u).value().id;
    }
    RepoRecord r;
    r.ns = "ann";
    r.name = "bert";
    repo_ = repos().Create(r).value();
  }
  // A key of user `user_id` (or, when 0, a deploy key of repo_), its blob and fingerprint
  // made from `tag`.
  SshKeyRecord Key(std::string_view tag, int64_t user_id, bool read_write = false) {
    SshKeyRecord k;
    k.user_id = user_id;
    k.repo_id = user_id == 0 ? repo_.id : 0;
    k.read_write = read_write;
    k.title = "key " + std::string(tag);
    k.key_type = "ssh-ed25519";
    k.blob_base64 = "AAAAC3NzaC1lZDI1NTE5AAAAI" + std::string(tag);
    k.fingerprint = "SHA256:" + std::string(tag);
    return k;
  }
  int64_t ann_ = 0, bob_ = 0;
  RepoRecord repo_;
};

TEST_P(SshKeyStoreTest, AddGetAndFindByBlob) {
  SshKeyRecord in = Key("one", ann_);
  in.created_at = 1700000000;
  auto added = ssh_keys().Add(in);
  ASSERT_TRUE(added.has_value()) << added.error().message;
  EXPECT_GT(added->id, 0);
  EXPECT_EQ(added->created_at, 1700000000);
  auto got = ssh_keys().Get(added->id).value();
  EXPECT_EQ(got.user_id, ann_);
  EXPECT_EQ(got.repo_id, 0);
  EXPECT_FALSE(got.read_write);
  EXPECT_EQ(got.title, "key one");
  EXPECT_EQ(got.key_type, "ssh-ed25519");
  EXPECT_EQ(got.blob_base64, in.blob_base64);
  EXPECT_EQ(got.fingerprint, "SHA256:one");
  EXPECT_EQ(got.created_at, 1700000000);
  EXPECT_FALSE(got.last_used_at.has_value());

  auto found = ssh_keys().FindByBlob("ssh-ed25519", in.blob_base64);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->id, added->id);
  // Both the type and the blob must match.
  EXPECT_EQ(ssh_keys().FindByBlob("ssh-rsa", in.blob_base64).error().code, ErrorCode::NotFound);
  EXPECT_EQ(ssh_keys().FindByBlob("ssh-ed25519", "AAAA").error().code, ErrorCode::NotFound);
  EXPECT_EQ(ssh_keys().Get(added->id + 100).error().code, ErrorCode::NotFound);
}

TEST_P(SshKeyStoreTest, CreatedAtDefaultsToNow) {
  auto added = ssh_keys().Add(Key("now", ann_)).value();
  EXPECT_GT(added.created_at, 1700000000);
}

TEST_P(SshKeyStoreTest, DeployKeysBelongToTheirRepo) {
  auto ro = ssh_keys().Add(Key("ro", 0)).value();
  auto rw = ssh_keys().Add(Key("rw", 0, true)).value();
  EXPECT_EQ(ssh_keys().Get(rw.id).value().repo_id, repo_.id);
  EXPECT_EQ(ssh_keys().Get(rw.id).value().user_id, 0);
  EXPECT_TRUE(ssh_keys().Get(rw.id).value().read_write);
  EXPECT_FALSE(ssh_keys().Get(ro.id).value().read_write);
  auto list = ssh_keys().ListForRepo(repo_.id).value();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, ro.id);  // oldest first
  EXPECT_EQ(list[1].id, rw.id);
  EXPECT_TRUE(ssh_keys().ListForUser(ann_).value().empty());
}

TEST_P(SshKeyStoreTest, UserKeysAreNeverReadWrite) {
  auto k = ssh_keys().Add(Key("u", ann_, true)).value();
  EXPECT_FALSE(ssh_keys().Get(k.id).value().read_write);
}

TEST_P(SshKeyStoreTest, OneFingerprintIsOneKeyAcrossUsersAndRepos) {
  ASSERT_TRUE(ssh_keys().Add(Key("same", ann_)).has_value());
  auto again = ssh_keys().Add(Key("same", bob_));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, ErrorCode::Conflict);
  EXPECT_EQ(again.error().message, "key is already in use");
  EXPECT_EQ(ssh_keys().Add(Key("same", 0)).error().code, ErrorCode::Conflict);
  EXPECT_TRUE(ssh_keys().ListForUser(bob_).value().empty());
  EXPECT_TRUE(ssh_keys().ListForRepo(repo_.id).value().empty());
}

TEST_P(SshKeyStoreTest, MissingOwnerIsNotFound) {
  EXPECT_EQ(ssh_keys().Add(Key("ghost", 4242)).error().code, ErrorCode::NotFound);
  SshKeyRecord k = Key("ghost-repo", 0);
  k.repo_id = 4242;
  EXPECT_EQ(ssh_keys().Add(k).error().code, ErrorCode::NotFound);
  // An org is no key's owner.
  OrgRecord org;
  org.name = "acme";
  auto o = users().CreateOrg(org, ann_).value();
  EXPECT_EQ(ssh_keys().Add(Key("org", o.id)).error().code, ErrorCode::NotFound);
  // Neither or both owners: a caller's bug.
  SshKeyRecord both = Key("both", ann_);
  both.repo_id = repo_.id;
  EXPECT_EQ(ssh_keys().Add(both).error().code, ErrorCode::Internal);
}

TEST_P(SshKeyStoreTest, ListsAreOldestFirstAndPerOwner) {
  auto a1 = ssh_keys().Add(Key("a1", ann_)).value();
  auto b1 = ssh_keys().Add(Key("b1", bob_)).value();
  auto a2 = ssh_keys().Add(Key("a2", ann_)).value();
  auto ann = ssh_keys().ListForUser(ann_).value();
  ASSERT_EQ(ann.size(), 2u);
  EXPECT_EQ(ann[0].id, a1.id);
  EXPECT_EQ(ann[1].id, a2.id);
  auto bob = ssh_keys().ListForUser(bob_).value();
  ASSERT_EQ(bob.size(), 1u);
  EXPECT_EQ(bob[0].id, b1.id);
}

TEST_P(SshKeyStoreTest, DeleteAndTouch) {
  auto k = ssh_keys().Add(Key("t", ann_)).value();
  ASSERT_TRUE(ssh_keys().Touch(k.id, 1800000000).has_value());
  EXPECT_EQ(ssh_keys().Get(k.id).value().last_used_at, 1800000000);
  ASSERT_TRUE(ssh_keys().Delete(k.id).has_value());
  EXPECT_EQ(ssh_keys().Get(k.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(ssh_keys().Delete(k.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(ssh_keys().Touch(k.id, 1).error().code, ErrorCode::NotFound);
  // The fingerprint is free again.
  EXPECT_TRUE(ssh_keys().Add(Key("t", bob_)).has_value());
}

TEST_P(SshKeyStoreTest, DeletingTheRepoDeletesItsDeployKeys) {
  auto k = ssh_keys().Add(Key("d", 0)).value();
  ASSERT_TRUE(repos().Delete(repo_.Id()).has_value());
  EXPECT_EQ(ssh_keys().Get(k.id).error().code, ErrorCode::NotFound);
  EXPECT_EQ(ssh_keys().FindByBlob(k.key_type, k.blob_base64).error().code, ErrorCode::NotFound);
  // A new repo of the same name does not inherit them.
  RepoRecord r;
  r.ns = "ann";
  r.name = "bert";
  auto again = repos().Create(r).value();
  EXPECT_TRUE(ssh_keys().ListForRepo(again.id).value().empty());
}

TEST_P(SshKeyStoreTest, MovingTheRepoKeepsItsDeployKeys) {
  auto k = ssh_keys().Add(Key("m", 0)).value();
  RepoId to = repo_.Id();
  to.name = "bert-2";
  ASSERT_TRUE(repos().Move(repo_.Id(), to).has_value());
  EXPECT_EQ(ssh_keys().Get(k.id).value().repo_id, repo_.id);
}

INSTANTIATE_TEST_SUITE_P(Engines, SshKeyStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db
