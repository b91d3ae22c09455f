// SqlOciStore (db/oci_store.h): manifests, tags, referrers, blob links and their GC
// pruning, aliases, the git-blob cache; and the registry-related parts of the other stores
// (case-folded repo lookup, CountLinks over OCI links).

#include <gtest/gtest.h>

#include "db/test_db.h"

namespace hangar::db {
namespace {

class OciStoreTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    RepoRecord in;
    in.ns = "acme";
    in.name = "bert";
    repo_ = repos().Create(in).value().id;
  }
  OciStore& oci() { return *stores_.oci; }

  OciManifestRecord Manifest(std::string digest, std::string subject = "",
                             std::string artifact_type = "") {
    OciManifestRecord m;
    m.repo_id = repo_;
    m.digest = std::move(digest);
    m.media_type = "application/vnd.oci.image.manifest.v1+json";
    m.body = "{\"schemaVersion\":2,\"x\":\"" + m.digest + "\"}";
    m.subject = std::move(subject);
    m.artifact_type = std::move(artifact_type);
    m.created_at = 100;
    return m;
  }

  int64_t repo_ = 0;
};

std::string D(char c) { return "sha256:" + std::string(64, c); }

TEST_P(OciStoreTest, ManifestKeepsExactBytesAndFirstRow) {
  auto m = Manifest(D('a'));
  m.body = "{\"a\":\"\xc3\xa9\"}\n  ";  // non-ASCII, trailing whitespace
  m.annotations_json = "{\"k\":\"v\"}";
  ASSERT_TRUE(oci().PutManifest(m, {}).has_value());
  auto again = m;
  again.media_type = "other";
  ASSERT_TRUE(oci().PutManifest(again, {}).has_value());  // same digest: first row kept
  auto got = oci().GetManifest(repo_, D('a')).value();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->body, m.body);
  EXPECT_EQ(got->media_type, m.media_type);
  EXPECT_EQ(got->annotations_json, "{\"k\":\"v\"}");
  EXPECT_FALSE(oci().GetManifest(repo_, D('b')).value().has_value());
  auto orphan = Manifest(D('c'));
  orphan.repo_id = 4242;
  EXPECT_EQ(oci().PutManifest(orphan, {}).error().code, ErrorCode::RepoNotFound);
}

TEST_P(OciStoreTest, TagsPointMoveListAndDelete) {
  ASSERT_TRUE(oci().PutManifest(Manifest(D('a')), {}).has_value());
  ASSERT_TRUE(oci().PutManifest(Manifest(D('b')), {}).has_value());
  EXPECT_EQ(oci().PutTag(repo_, "v1", D('f'), 1).error().code, ErrorCode::ManifestUnknown);
  for (const char* t : {"v2", "B", "a", "v1", "_x"}) {
    ASSERT_TRUE(oci().PutTag(repo_, t, D('a'), 1).has_value());
  }
  ASSERT_TRUE(oci().PutTag(repo_, "v1", D('b'), 2).has_value());  // moved
  EXPECT_EQ(oci().GetTag(repo_, "v1").value(), std::optional<std::string>(D('b')));
  // Byte order: upper case before '_' before lower case.
  EXPECT_EQ(oci().ListTags(repo_, "", 100).value(),
            (std::vector<std::string>{"B", "_x", "a", "v1", "v2"}));
  EXPECT_EQ(oci().ListTags(repo_, "_x", 2).value(), (std::vector<std::string>{"a", "v1"}));
  EXPECT_TRUE(oci().ListTags(repo_, "", 0).value().empty());
  EXPECT_TRUE(oci().DeleteTag(repo_, "a").value());
  EXPECT_FALSE(oci().DeleteTag(repo_, "a").value());
  EXPECT_FALSE(oci().GetTag(repo_, "a").value().has_value());
}

TEST_P(OciStoreTest, DeleteManifestTakesItsTagsAndRefs) {
  Sha256 layer = Sha256::Of("layer");
  ASSERT_TRUE(oci().PutManifest(Manifest(D('a')), {{"sha256:" + layer.Hex(), false}}).has_value());
  ASSERT_TRUE(oci().PutManifest(Manifest(D('b')), {}).has_value());
  ASSERT_TRUE(oci().PutTag(repo_, "one", D('a'), 1).has_value());
  ASSERT_TRUE(oci().PutTag(repo_, "two", D('a'), 1).has_value());
  ASSERT_TRUE(oci().PutTag(repo_, "other", D('b'), 1).has_value());
  EXPECT_EQ(oci().CountReferences(repo_, "sha256:" + layer.Hex()).value(), 1);
  EXPECT_TRUE(oci().DeleteManifest(repo_, D('a')).value());
  EXPECT_FALSE(oci().DeleteManifest(repo_, D('a')).value());
  EXPECT_EQ(oci().ListTags(repo_, "", 10).value(), std::vector<std::string>{"other"});
  EXPECT_EQ(oci().CountReferences(repo_, "sha256:" + layer.Hex()).value(), 0);
}

TEST_P(OciStoreTest, ReferrersBySubjectFilteredAndPaged) {
  ASSERT_TRUE(oci().PutManifest(Manifest(D('1'), D('s'), "sig"), {}).has_value());
  ASSERT_TRUE(oci().PutManifest(Manifest(D('2'), D('s'), "sbom"), {}).has_value());
  ASSERT_TRUE(oci().PutManifest(Manifest(D('3'), D('s'), "sig"), {}).has_value());
  ASSERT_TRUE(oci().PutManifest(Manifest(D('4'), D('t'), "sig"), {}).has_value());
  ASSERT_TRUE(oci().PutManifest(Manifest(D('5')), {}).has_value());
  auto all = oci().ListReferrers(repo_, D('s'), "", "", 100).value();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].digest, D('1'));
  EXPECT_EQ(all[0].size, Manifest(D('1')).body.size());
  EXPECT_EQ(all[1].artifact_type, "sbom");
  auto sigs = oci().ListReferrers(repo_, D('s'), "sig", "", 100).value();
  ASSERT_EQ(sigs.size(), 2u);
  EXPECT_EQ(sigs[1].digest, D('3'));
  auto page = oci().ListReferrers(repo_, D('s'), "", D('1'), 1).value();
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].digest, D('2'));
  EXPECT_TRUE(oci().ListReferrers(repo_, D('z'), "", "", 100).value().empty());
  EXPECT_TRUE(oci().ListReferrers(repo_, "", "", "", 100).value().empty());
}

TEST_P(OciStoreTest, BlobLinksAndCountLinksIncludeThem) {
  Sha256 a = Sha256::Of("a");
  EXPECT_FALSE(oci().BlobLinked(repo_, a).value().has_value());
  ASSERT_TRUE(oci().LinkBlob(repo_, a, 1, 10).has_value());
  ASSERT_TRUE(oci().LinkBlob(repo_, a, 1, 11).has_value());
  EXPECT_EQ(oci().BlobLinked(repo_, a).value(), std::optional<uint64_t>(1));
  EXPECT_EQ(lfs().CountLinks(a).value(), 1);
  ASSERT_TRUE(lfs().Link(repo_, a, 1).has_value());
  EXPECT_EQ(lfs().CountLinks(a).value(), 2);  // one LFS link + one OCI link
  EXPECT_TRUE(oci().UnlinkBlob(repo_, a).value());
  EXPECT_FALSE(oci().UnlinkBlob(repo_, a).value());
  EXPECT_EQ(lfs().CountLinks(a).value(), 1);
  EXPECT_EQ(oci().LinkBlob(4242, a, 1, 1).error().code, ErrorCode::RepoNotFound);
}

TEST_P(OciStoreTest, PruneRemovesOnlyOldUnreferencedLinks) {
  Sha256 used = Sha256::Of("used"), old = Sha256::Of("old"), fresh = Sha256::Of("fresh");
  Sha256 by_alias = Sha256::Of("alias");
  std::string sha512 = "sha512:" + std::string(128, 'e');
  ASSERT_TRUE(oci().PutAlias(sha512, by_alias, 5).has_value());
  ASSERT_TRUE(oci()
                  .PutManifest(Manifest(D('a')), {{"sha256:" + used.Hex(), false}, {sha512, false}})
                  .has_value());
  ASSERT_TRUE(oci().LinkBlob(repo_, used, 4, 10).has_value());
  ASSERT_TRUE(oci().LinkBlob(repo_, old, 3, 10).has_value());
  ASSERT_TRUE(oci().LinkBlob(repo_, fresh, 5, 500).has_value());
  ASSERT_TRUE(oci().LinkBlob(repo_, by_alias, 5, 10).has_value());
  EXPECT_EQ(oci().PruneUnreferencedLinks(100).value(), 1);
  EXPECT_TRUE(oci().BlobLinked(repo_, used).value().has_value());
  EXPECT_FALSE(oci().BlobLinked(repo_, old).value().has_value());
  EXPECT_TRUE(oci().BlobLinked(repo_, fresh).value().has_value());
  EXPECT_TRUE(oci().BlobLinked(repo_, by_alias).value().has_value());
  // Once the manifest goes, its blobs' links go at the next prune.
  ASSERT_TRUE(oci().DeleteManifest(repo_, D('a')).value());
  EXPECT_EQ(oci().PruneUnreferencedLinks(100).value(), 2);
}

TEST_P(OciStoreTest, AliasesAndGitBlobs) {
  std::string d = "sha512:" + std::string(128, '1');
  Sha256 s = Sha256::Of("x");
  EXPECT_FALSE(oci().FindAlias(d).value().has_value());
  ASSERT_TRUE(oci().PutAlias(d, s, 1).has_value());
  ASSERT_TRUE(oci().PutAlias(d, s, 1).has_value());  // idempotent
  auto got = oci().FindAlias(d).value();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->first, s);
  EXPECT_EQ(got->second, 1u);

  OciGitBlob b{Sha256::Of("readme"), std::string(40, 'a'), 6};
  ASSERT_TRUE(oci().PutGitBlob(b).has_value());
  EXPECT_EQ(oci().FindGitBlobByOid(std::string(40, 'a')).value()->sha256, b.sha256);
  EXPECT_EQ(oci().FindGitBlobBySha256(b.sha256).value()->git_oid, std::string(40, 'a'));
  EXPECT_FALSE(oci().FindGitBlobByOid(std::string(40, 'b')).value().has_value());
}

TEST_P(OciStoreTest, DeletingTheRepoDropsItsRegistryRows) {
  ASSERT_TRUE(oci().PutManifest(Manifest(D('a')), {}).has_value());
  ASSERT_TRUE(oci().PutTag(repo_, "v1", D('a'), 1).has_value());
  ASSERT_TRUE(oci().LinkBlob(repo_, Sha256::Of("a"), 1, 1).has_value());
  ASSERT_TRUE(repos().Delete(RepoId{RepoType::Model, "acme", "bert"}).has_value());
  EXPECT_FALSE(oci().GetManifest(repo_, D('a')).value().has_value());
  EXPECT_EQ(lfs().CountLinks(Sha256::Of("a")).value(), 0);
}

TEST_P(OciStoreTest, FindFoldedIgnoresCaseAndReportsAmbiguity) {
  RepoRecord in;
  in.ns = "Acme";
  in.name = "GPT-X";
  ASSERT_TRUE(repos().Create(in).has_value());
  auto one = repos().FindFolded(RepoType::Model, "acme", "gpt-x").value();
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].ns, "Acme");
  EXPECT_EQ(one[0].name, "GPT-X");
  EXPECT_TRUE(repos().FindFolded(RepoType::Dataset, "acme", "gpt-x").value().empty());
  in.ns = "ACME";
  ASSERT_TRUE(repos().Create(in).has_value());
  EXPECT_EQ(repos().FindFolded(RepoType::Model, "acme", "gpt-x").value().size(), 2u);
  EXPECT_EQ(repos().FindFolded(RepoType::Model, "acme", "bert").value().size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Engines, OciStoreTest, testing::kEngines, testing::EngineName);

}  // namespace
}  // namespace hangar::db
