// services/oci/oci_names.h: registry names → hub repos, tags, digests (oci.md §1).

#include "services/oci/oci_names.h"

#include <gtest/gtest.h>

namespace hangar::services {
namespace {

TEST(OciNames, ParsesHubRepoNames) {
  auto m = ParseOciName("acme/bert-base").value();
  EXPECT_EQ(m.type, RepoType::Model);
  EXPECT_EQ(m.ns, "acme");
  EXPECT_EQ(m.name, "bert-base");
  auto d = ParseOciName("datasets/acme/squad").value();
  EXPECT_EQ(d.type, RepoType::Dataset);
  EXPECT_EQ(d.name, "squad");
  EXPECT_EQ(ParseOciName("spaces/acme/demo")->type, RepoType::Space);
  EXPECT_EQ(ParseOciName("a.b/c__d")->name, "c__d");
  EXPECT_EQ(ParseOciName("a/b---c")->name, "b---c");
}

TEST(OciNames, RefusesNamesOutsideTheGrammarOrTheHubsShape) {
  for (const char* bad : {"", "acme", "Acme/bert", "acme/../bert", "acme/bert/", "/acme/bert",
                          "acme//bert", "acme/.bert", "acme/bert.", "acme/b_-c", "acme/b___c",
                          "a/b/c", "models/acme/bert", "datasets/acme/x/y", "acme/bé"}) {
    auto r = ParseOciName(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::NameInvalid) << bad;
    EXPECT_NE(r.error().message.find("invalid repository name"), std::string::npos);
  }
  EXPECT_FALSE(ParseOciName("a/" + std::string(254, 'b')).has_value());
}

TEST(OciNames, GrammarWithoutTheHubsShape) {
  EXPECT_TRUE(MatchesOciNameGrammar("conformance"));
  EXPECT_TRUE(MatchesOciNameGrammar("a/b/c/d"));
  EXPECT_FALSE(MatchesOciNameGrammar("a/../b"));
  EXPECT_FALSE(MatchesOciNameGrammar("A/b"));
  EXPECT_FALSE(MatchesOciNameGrammar(""));
}

TEST(OciNames, OciNameOfLowersAndPrefixes) {
  EXPECT_EQ(OciNameOf(RepoId{RepoType::Model, "Acme", "BERT"}), "acme/bert");
  EXPECT_EQ(OciNameOf(RepoId{RepoType::Dataset, "acme", "x"}), "datasets/acme/x");
}

TEST(OciNames, Tags) {
  EXPECT_TRUE(IsValidTag("latest"));
  EXPECT_TRUE(IsValidTag("V1.0_rc-2"));
  EXPECT_TRUE(IsValidTag(std::string(40, 'a')));
  EXPECT_TRUE(IsValidTag(std::string(128, 'a')));
  EXPECT_FALSE(IsValidTag(std::string(129, 'a')));
  EXPECT_FALSE(IsValidTag(""));
  EXPECT_FALSE(IsValidTag(".hidden"));
  EXPECT_FALSE(IsValidTag("-x"));
  EXPECT_FALSE(IsValidTag("refs/heads/main"));
  EXPECT_FALSE(IsValidTag("a:b"));
  EXPECT_TRUE(IsDigestReference("sha256:abc"));
  EXPECT_FALSE(IsDigestReference("v1"));
}

TEST(OciNames, Digests) {
  std::string hex(64, 'a');
  EXPECT_EQ(ParseDigest("sha256:" + hex)->encoded, hex);
  EXPECT_EQ(ParseDigest("sha512:" + std::string(128, '0'))->algorithm, "sha512");
  for (std::string bad : {"sha256:" + std::string(63, 'a'), "sha256:" + std::string(64, 'A'),
                          std::string("sha256:totallywrong"), "md5:" + std::string(32, 'a'),
                          std::string("sha256"), ":" + hex, "SHA256:" + hex}) {
    auto r = ParseDigest(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::DigestInvalid) << bad;
  }
}

TEST(OciNames, DigestOfMatchesKnownValues) {
  EXPECT_EQ(DigestOf("sha256", "").String(),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(
      DigestOf("sha512", "").String(),
      "sha512:cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0"
      "ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
  OciHasher h("sha256");
  h.Update("{");
  h.Update("}");
  EXPECT_EQ(h.Finish().String(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
}

}  // namespace
}  // namespace hangar::services
