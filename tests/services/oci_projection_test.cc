// OciProjection (oci.md §11–12, issue #5 point 3): repo revisions as ModelPack/ORAS OCI
// manifests, on real git repositories built with the git binary.

#include "services/oci/oci_projection.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <atomic>
#include <boost/json.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "db/sql/sql_stores.h"
#include "git/test_repo.h"
#include "services/oci/oci_model_config.h"
#include "storage/memory/memory_blob_store.h"

namespace hangar::services {
namespace {

namespace json = boost::json;
using git::testing::Quote;
using git::testing::Sh;
using git::testing::TempDir;

// The real SqliteOciStore, counting the git-blob cache writes (to show what is not
// hashed again).
class CountingOciStore final : public db::OciStore {
 public:
  explicit CountingOciStore(db::OciStore& real) : real_(real) {}
  Result<void> PutManifest(const db::OciManifestRecord& m,
                           const std::vector<db::OciManifestRef>& refs) override {
    return real_.PutManifest(m, refs);
  }
  Result<std::optional<db::OciManifestRecord>> GetManifest(int64_t repo,
                                                           std::string_view d) override {
    return real_.GetManifest(repo, d);
  }
  Result<bool> DeleteManifest(int64_t repo, std::string_view d) override {
    return real_.DeleteManifest(repo, d);
  }
  Result<void> PutTag(int64_t repo, std::string_view t, std::string_view d, int64_t now) override {
    return real_.PutTag(repo, t, d, now);
  }
  Result<std::optional<std::string>> GetTag(int64_t repo, std::string_view t) override {
    return real_.GetTag(repo, t);
  }
  Result<std::vector<std::string>> ListTags(int64_t repo, std::string_view after,
                                            int limit) override {
    return real_.ListTags(repo, after, limit);
  }
  Result<bool> DeleteTag(int64_t repo, std::string_view t) override {
    return real_.DeleteTag(repo, t);
  }
  Result<std::vector<db::OciReferrer>> ListReferrers(int64_t repo, std::string_view subject,
                                                     std::string_view type, std::string_view after,
                                                     int limit) override {
    return real_.ListReferrers(repo, subject, type, after, limit);
  }
  Result<int64_t> CountReferences(int64_t repo, std::string_view d) override {
    return real_.CountReferences(repo, d);
  }
  Result<void> LinkBlob(int64_t repo, const Sha256& sha, uint64_t size, int64_t now) override {
    return real_.LinkBlob(repo, sha, size, now);
  }
  Result<std::optional<uint64_t>> BlobLinked(int64_t repo, const Sha256& sha) override {
    return real_.BlobLinked(repo, sha);
  }
  Result<bool> UnlinkBlob(int64_t repo, const Sha256& sha) override {
    return real_.UnlinkBlob(repo, sha);
  }
  Result<int64_t> PruneUnreferencedLinks(int64_t before) override {
    return real_.PruneUnreferencedLinks(before);
  }
  Result<void> PutAlias(std::string_view d, const Sha256& sha, uint64_t size) override {
    return real_.PutAlias(d, sha, size);
  }
  Result<std::optional<std::pair<Sha256, uint64_t>>> FindAlias(std::string_view d) override {
    return real_.FindAlias(d);
  }
  Result<void> PutGitBlob(const db::OciGitBlob& b) override {
    ++git_blob_puts;
    return real_.PutGitBlob(b);
  }
  Result<std::optional<db::OciGitBlob>> FindGitBlobByOid(std::string_view oid) override {
    return real_.FindGitBlobByOid(oid);
  }
  Result<std::optional<db::OciGitBlob>> FindGitBlobBySha256(const Sha256& sha) override {
    return real_.FindGitBlobBySha256(sha);
  }

  std::atomic<int> git_blob_puts{0};

 private:
  db::OciStore& real_;
};

constexpr char kLfsOid[] = "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";
constexpr char kReadme[] = "---\nlicense: apache-2.0\ntags: [test]\n---\n# Tiny BERT\n";
constexpr char kConfigJson[] = R"({"model_type":"bert","torch_dtype":"float16"})";
const std::string kPublicUrl = "http://hub.test";

// A model repo: README with a card, config.json, an LFS weight, code, nested and big files,
// a symlink; main (2 commits), branch dev, annotated tag v1 and a tag with a slash.
std::string BuildModelRepo(const std::string& dir) {
  std::string script = R"SH(
git init -q -b main work && cd work
commit() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
printf '*.safetensors filter=lfs diff=lfs merge=lfs -text\n' > .gitattributes
printf '%s' "$README" > README.md
printf '%s' "$CONFIG" > config.json
git add -A && commit 1700000000 -m one
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 12345\n' "$OID" > model.safetensors
mkdir -p src nested/deeper
printf 'print("hi")\n' > src/train.py
printf 'notes\n' > nested/deeper/notes.txt
printf 'big\n%.0s' $(seq 1 2000) > big.txt
ln -s README.md link.md
git add -A && commit 1700000100 -m two
git branch dev HEAD~1
GIT_COMMITTER_DATE='@1700000200 +0000' git tag -a v1 -m 'version one'
git tag rel/2 HEAD~1
cd .. && git clone -q --mirror work repo.git
)SH";
  Sh(dir, "export README=" + Quote(kReadme) + " CONFIG=" + Quote(kConfigJson) + " OID=" + kLfsOid +
              "\n" + script);
  return dir + "/repo.git";
}

std::string ReadAllOf(ByteSource& src) {
  auto all = ReadAll(src, 1 << 20);
  EXPECT_TRUE(all.has_value());
  return all.has_value() ? *all : "";
}

class OciProjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto stores = db::OpenSqliteStores(std::filesystem::path(tmp_.path()) / "hangar.db");
    ASSERT_TRUE(stores.has_value()) << stores.error().message;
    stores_ = std::move(*stores);
    oci_ = std::make_unique<CountingOciStore>(*stores_.oci);
    git_path_ = BuildModelRepo(tmp_.path());
    repo_ = Repo(RepoType::Model, "tiny-bert", git_path_);
    projection_ = MakeProjection();
  }
  void TearDown() override {
    projection_.reset();
    oci_.reset();
    stores_ = db::Stores{};
  }
  // A repo row `acme/<name>` of `type` over the git repository at `git_path`.
  RepoHandle Repo(RepoType type, const std::string& name, const std::string& git_path) {
    db::RepoRecord r;
    r.type = type;
    r.ns = "acme";
    r.name = name;
    auto created = stores_.repos->Create(r);
    EXPECT_TRUE(created.has_value()) << created.error().message;
    RepoHandle h;
    if (created.has_value()) h.record = *created;
    h.git_path = git_path;
    return h;
  }
  std::unique_ptr<OciProjection> MakeProjection() {
    return std::make_unique<OciProjection>(reader_, blobs_, *oci_, *stores_.lfs, kPublicUrl);
  }
  std::string Git(const std::string& cmd) {
    std::string out = Sh(git_path_, cmd);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  ProjectedManifest Get(std::string_view ref) {
    auto m = projection_->Manifest(repo_, ref);
    EXPECT_TRUE(m.has_value()) << m.error().message;
    EXPECT_TRUE(m.has_value() && m->has_value()) << ref;
    return m.has_value() && m->has_value() ? **m : ProjectedManifest{};
  }
  int64_t Id() const { return repo_.record.id; }

  TempDir tmp_;
  db::Stores stores_;
  std::unique_ptr<CountingOciStore> oci_;
  std::string git_path_;
  RepoHandle repo_;
  git::RepoReader reader_;
  storage::MemoryBlobStore blobs_;
  std::unique_ptr<OciProjection> projection_;
};

TEST_F(OciProjectionTest, BranchManifestIsModelPackWithOneLayerPerFileSortedByPath) {
  ProjectedManifest m = Get("main");
  EXPECT_EQ(m.commit, Git("git rev-parse main"));
  EXPECT_EQ(m.media_type, "application/vnd.oci.image.manifest.v1+json");
  EXPECT_EQ(m.digest, "sha256:" + Sha256::Of(m.body).Hex());
  json::object doc = json::parse(m.body).as_object();
  EXPECT_EQ(doc["schemaVersion"].as_int64(), 2);
  EXPECT_EQ(doc["mediaType"].as_string(), "application/vnd.oci.image.manifest.v1+json");
  EXPECT_EQ(doc["artifactType"].as_string(), "application/vnd.cncf.model.manifest.v1+json");
  EXPECT_EQ(doc["config"].at("mediaType").as_string(), "application/vnd.cncf.model.config.v1+json");

  // Every regular file, sorted bytewise; the symlink is left out.
  std::vector<std::string> paths;
  std::map<std::string, json::object> by_path;
  for (const auto& l : doc["layers"].as_array()) {
    const auto& a = l.at("annotations").as_object();
    std::string path(a.at("org.opencontainers.image.title").as_string());
    EXPECT_EQ(a.at("org.cncf.model.filepath").as_string(), path);
    paths.push_back(path);
    by_path[path] = l.as_object();
  }
  EXPECT_EQ(paths, (std::vector<std::string>{".gitattributes", "README.md", "big.txt",
                                             "config.json", "model.safetensors",
                                             "nested/deeper/notes.txt", "src/train.py"}));

  // LFS: the pointer's oid and size, no bytes copied; small files: sha256 of the blob.
  auto& weight = by_path["model.safetensors"];
  EXPECT_EQ(weight["digest"].as_string(), std::string("sha256:") + kLfsOid);
  EXPECT_EQ(weight["size"].to_number<uint64_t>(), 12345u);
  EXPECT_EQ(weight["mediaType"].as_string(), "application/vnd.cncf.model.weight.v1.raw");
  EXPECT_FALSE(
      weight["annotations"].as_object().contains("org.cncf.model.file.mediatype.untested"));
  std::string big = Git("git cat-file blob main:big.txt") + "\n";
  EXPECT_EQ(big.size(), 8000u);
  EXPECT_EQ(by_path["big.txt"]["digest"].as_string(), "sha256:" + Sha256::Of(big).Hex());
  EXPECT_EQ(by_path["big.txt"]["size"].to_number<uint64_t>(), 8000u);
  EXPECT_EQ(by_path["config.json"]["digest"].as_string(),
            "sha256:" + Sha256::Of(kConfigJson).Hex());
  EXPECT_EQ(by_path["config.json"]["mediaType"].as_string(),
            "application/vnd.cncf.model.weight.config.v1.raw");
  EXPECT_EQ(by_path["README.md"]["mediaType"].as_string(), "application/vnd.cncf.model.doc.v1.raw");
  EXPECT_EQ(by_path["src/train.py"]["mediaType"].as_string(),
            "application/vnd.cncf.model.code.v1.raw");
  // A guess is marked.
  EXPECT_EQ(by_path["nested/deeper/notes.txt"]["annotations"]
                .at("org.cncf.model.file.mediatype.untested")
                .as_string(),
            "true");

  const auto& ann = doc["annotations"].as_object();
  EXPECT_EQ(ann.at("org.opencontainers.image.created").as_string(), "2023-11-14T22:15:00Z");
  EXPECT_EQ(ann.at("org.opencontainers.image.revision").as_string(), m.commit);
  EXPECT_EQ(ann.at("org.opencontainers.image.source").as_string(),
            "http://hub.test/acme/tiny-bert");
}

TEST_F(OciProjectionTest, ConfigBlobDescribesTheRepoAndIsStoredAndLinked) {
  ProjectedManifest m = Get("main");
  json::object doc = json::parse(m.body).as_object();
  std::string digest(doc["config"].at("digest").as_string());
  auto sha = Sha256::ParseHex(digest.substr(7));
  ASSERT_TRUE(sha);
  auto src = blobs_.Open(*sha, storage::ByteRange{});
  ASSERT_TRUE(src.has_value());
  std::string config = ReadAllOf(**src);
  EXPECT_EQ(doc["config"].at("size").to_number<uint64_t>(), config.size());
  EXPECT_EQ(*oci_->BlobLinked(Id(), *sha).value(), config.size());

  json::object c = json::parse(config).as_object();
  const auto& d = c["descriptor"].as_object();
  EXPECT_EQ(d.at("createdAt").as_string(), "2023-11-14T22:15:00Z");
  EXPECT_EQ(d.at("family").as_string(), "bert");
  EXPECT_EQ(d.at("name").as_string(), "tiny-bert");
  EXPECT_EQ(d.at("revision").as_string(), m.commit);
  EXPECT_EQ(d.at("licenses").as_array(), json::array({"apache-2.0"}));
  EXPECT_EQ(c["config"].at("format").as_string(), "safetensors");
  EXPECT_EQ(c["config"].at("precision").as_string(), "float16");
  EXPECT_EQ(c["modelfs"].at("type").as_string(), "layers");
  json::array layer_digests;
  for (const auto& l : doc["layers"].as_array()) layer_digests.push_back(l.at("digest"));
  EXPECT_EQ(c["modelfs"].at("diffIds").as_array(), layer_digests);
  // No whitespace: byte-stable serialisation.
  EXPECT_EQ(config.find(' '), std::string::npos);
}

TEST_F(OciProjectionTest, ManifestIsStoredAsARowWithItsReferences) {
  ProjectedManifest m = Get("main");
  auto row = oci_->GetManifest(Id(), m.digest);
  ASSERT_TRUE(row.has_value() && row->has_value());
  EXPECT_EQ((*row)->body, m.body);
  EXPECT_EQ((*row)->media_type, m.media_type);
  EXPECT_EQ((*row)->artifact_type, "application/vnd.cncf.model.manifest.v1+json");
  EXPECT_EQ((*row)->subject, "");
  EXPECT_NE((*row)->annotations_json.find("org.opencontainers.image.revision"), std::string::npos);
  json::object doc = json::parse(m.body).as_object();
  std::set<std::string> want{std::string(doc["config"].at("digest").as_string())};
  for (const auto& l : doc["layers"].as_array())
    want.insert(std::string(l.at("digest").as_string()));
  for (const auto& d : want) EXPECT_EQ(oci_->CountReferences(Id(), d).value(), 1) << d;
  EXPECT_EQ(oci_->CountReferences(Id(), "sha256:" + std::string(64, '0')).value(), 0);

  // A deleted row (manifest DELETE) is stored again on the next GET by tag.
  ASSERT_TRUE(oci_->DeleteManifest(Id(), m.digest).value());
  EXPECT_EQ(Get("main").digest, m.digest);
  EXPECT_TRUE(oci_->GetManifest(Id(), m.digest).value().has_value());
}

TEST_F(OciProjectionTest, SameRevisionSameDigestByBranchTagShaAndAfterRestart) {
  ProjectedManifest by_branch = Get("main");
  EXPECT_EQ(Get("v1").body, by_branch.body);              // annotated tag on main
  EXPECT_EQ(Get(by_branch.commit).body, by_branch.body);  // the commit sha
  EXPECT_EQ(Get("main").digest, by_branch.digest);        // served twice
  ProjectedManifest dev = Get("dev");
  EXPECT_NE(dev.digest, by_branch.digest);
  EXPECT_EQ(dev.commit, Git("git rev-parse dev"));

  // A fresh instance (a restart: empty caches) builds the same bytes, and does not hash
  // the small files again: their sha256 come from the store.
  int puts = oci_->git_blob_puts.load();
  EXPECT_GT(puts, 0);
  projection_ = MakeProjection();
  EXPECT_EQ(Get("main").body, by_branch.body);
  EXPECT_EQ(oci_->git_blob_puts, puts);
}

TEST_F(OciProjectionTest, WithoutPublicUrlTheSourceIsLeftOutNotGuessed) {
  OciProjection bare(reader_, blobs_, *oci_, *stores_.lfs, "");
  auto m = bare.Manifest(repo_, "main");
  ASSERT_TRUE(m.has_value() && m->has_value());
  json::object doc = json::parse((*m)->body).as_object();
  EXPECT_FALSE(doc["annotations"].as_object().contains("org.opencontainers.image.source"));
  EXPECT_EQ(doc["annotations"].at("org.opencontainers.image.revision").as_string(),
            Git("git rev-parse main"));
  auto sha = Sha256::ParseHex(std::string(doc["config"].at("digest").as_string()).substr(7));
  auto src = blobs_.Open(*sha, storage::ByteRange{});
  ASSERT_TRUE(src.has_value());
  json::object c = json::parse(ReadAllOf(**src)).as_object();
  EXPECT_FALSE(c["descriptor"].as_object().contains("docURL"));
  EXPECT_EQ(c["descriptor"].at("name").as_string(), "tiny-bert");
  EXPECT_NE((*m)->digest, Get("main").digest);  // with a public_url: a different artifact
}

TEST_F(OciProjectionTest, ConcurrentFirstRequestsAgreeOnOneManifest) {
  std::vector<std::string> digests(6);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < digests.size(); ++i) {
    threads.emplace_back([&, i] {
      auto m = projection_->Manifest(repo_, i % 2 ? "main" : "v1");
      digests[i] = m.has_value() && m->has_value() ? (*m)->digest : "error";
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& d : digests) EXPECT_EQ(d, digests[0]);
  EXPECT_NE(digests[0], "error");
  EXPECT_TRUE(oci_->GetManifest(Id(), digests[0]).value().has_value());
}

TEST_F(OciProjectionTest, OnlyBranchesTagsAndFullCommitShasAreReferences) {
  std::string head = Git("git rev-parse main");
  std::string tree = Git("git rev-parse main^{tree}");
  std::string blob = Git("git rev-parse main:config.json");
  for (std::string ref : {std::string("nope"), std::string("HEAD"), head.substr(0, 12), tree, blob,
                          std::string(40, 'a'), std::string("rel-2")}) {
    auto m = projection_->Manifest(repo_, ref);
    ASSERT_TRUE(m.has_value()) << ref << ": " << m.error().message;
    EXPECT_FALSE(m->has_value()) << ref;
  }
  EXPECT_EQ(oci_->git_blob_puts, 0);  // nothing was built
}

TEST_F(OciProjectionTest, OpenBlobServesSmallGitFilesOfThisRepoOnly) {
  Get("main");
  std::string big = Git("git cat-file blob main:big.txt") + "\n";
  auto whole = projection_->OpenBlob(repo_, Sha256::Of(big), storage::ByteRange{});
  ASSERT_TRUE(whole.has_value() && whole->has_value());
  EXPECT_EQ((*whole)->size, 8000u);
  EXPECT_EQ(ReadAllOf(*(*whole)->body), big);

  auto window = projection_->OpenBlob(repo_, Sha256::Of(big), storage::ByteRange::Window(4, 8));
  ASSERT_TRUE(window.has_value() && window->has_value());
  EXPECT_EQ((*window)->size, 8000u);
  EXPECT_EQ((*window)->body->Size(), 8u);
  EXPECT_EQ(ReadAllOf(*(*window)->body), "big\nbig\n");

  auto past = projection_->OpenBlob(repo_, Sha256::Of(big), storage::ByteRange::From(9000));
  ASSERT_FALSE(past.has_value());
  EXPECT_EQ(past.error().code, ErrorCode::RangeNotSatisfiable);

  // An LFS object is the blob store's, not a git blob; unknown digests are nobody's.
  auto lfs = projection_->OpenBlob(repo_, *Sha256::ParseHex(kLfsOid), storage::ByteRange{});
  ASSERT_TRUE(lfs.has_value());
  EXPECT_FALSE(lfs->has_value());
  auto unknown = projection_->OpenBlob(repo_, Sha256::Of("never seen"), storage::ByteRange{});
  ASSERT_TRUE(unknown.has_value());
  EXPECT_FALSE(unknown->has_value());

  // A file only another repo holds is not served through this one, whatever the range.
  TempDir other_dir;
  Sh(other_dir.path(),
     "git init -q -b main w && cd w && printf 'secret\\n' > s.txt && "
     "git add -A && git commit -q -m s && cd .. && git clone -q --bare w o.git");
  RepoHandle other = Repo(RepoType::Model, "other", other_dir.path() + "/o.git");
  auto om = projection_->Manifest(other, "main");
  ASSERT_TRUE(om.has_value() && om->has_value());
  for (auto range : {storage::ByteRange{}, storage::ByteRange::From(100)}) {
    auto leak = projection_->OpenBlob(repo_, Sha256::Of("secret\n"), range);
    ASSERT_TRUE(leak.has_value());
    EXPECT_FALSE(leak->has_value());
  }
  auto own = projection_->OpenBlob(other, Sha256::Of("secret\n"), storage::ByteRange{});
  ASSERT_TRUE(own.has_value() && own->has_value());
}

TEST_F(OciProjectionTest, RevisionTagsAreBranchesAndTagsValidAsOciTags) {
  auto tags = projection_->RevisionTags(repo_);
  ASSERT_TRUE(tags.has_value());
  // rel/2 has a slash: not an OCI tag.
  EXPECT_EQ(*tags, (std::vector<std::string>{"dev", "main", "v1"}));
}

TEST_F(OciProjectionTest, HugeTreeIsRefusedWithAClearError) {
  // 24,000 files with 120-byte names: well over 4 MiB of manifest. One blob, many paths.
  Sh(tmp_.path(), R"SH(
git init -q -b main huge && cd huge
blob=$(printf 'x\n' | git hash-object -w --stdin)
seq 1 24000 | awk -v b="$blob" '{ printf "100644 blob %s\td/%0120d\n", b, $1 }' | git update-index --index-info
git commit -q -m huge
)SH");
  RepoHandle huge = Repo(RepoType::Model, "huge", tmp_.path() + "/huge/.git");
  auto m = projection_->Manifest(huge, "main");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, ErrorCode::ManifestInvalid);
  EXPECT_NE(m.error().message.find("24000 files"), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("4 MiB"), std::string::npos);
  EXPECT_EQ(oci_->git_blob_puts, 0);  // refused before reading a blob
}

TEST_F(OciProjectionTest, DatasetsAndSpacesAreOrasStyleWithTheEmptyConfig) {
  Sh(tmp_.path(),
     "git init -q -b main ds && cd ds && printf 'a,b\\n1,2\\n' > train.csv && "
     "printf '# Data\\n' > README.md && printf '{}\\n' > extra.json && "
     "git add -A && git commit -q -m d");
  RepoHandle ds = Repo(RepoType::Dataset, "data", tmp_.path() + "/ds/.git");
  auto m = projection_->Manifest(ds, "main");
  ASSERT_TRUE(m.has_value() && m->has_value());
  json::object doc = json::parse((*m)->body).as_object();
  EXPECT_EQ(doc["artifactType"].as_string(), "application/vnd.hangar.dataset.v1");
  EXPECT_EQ(doc["config"].at("mediaType").as_string(), "application/vnd.oci.empty.v1+json");
  EXPECT_EQ(doc["config"].at("digest").as_string(),
            "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
  EXPECT_EQ(doc["config"].at("size").as_int64(), 2);
  EXPECT_TRUE(blobs_.Stat(Sha256::Of("{}")).has_value());
  EXPECT_TRUE(oci_->BlobLinked(ds.record.id, Sha256::Of("{}")).value().has_value());
  const auto& layers = doc["layers"].as_array();
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[2].at("annotations").at("org.opencontainers.image.title").as_string(),
            "train.csv");
  EXPECT_EQ(layers[2].at("mediaType").as_string(), "application/vnd.cncf.model.dataset.v1.raw");
  EXPECT_EQ(layers[1].at("mediaType").as_string(), "application/vnd.cncf.model.dataset.v1.raw");
  EXPECT_TRUE(
      layers[1].at("annotations").as_object().contains("org.cncf.model.file.mediatype.untested"));
  EXPECT_EQ(doc["annotations"].at("org.opencontainers.image.source").as_string(),
            "http://hub.test/datasets/acme/data");

  RepoHandle space = Repo(RepoType::Space, "app", tmp_.path() + "/ds/.git");
  auto s = projection_->Manifest(space, "main");
  ASSERT_TRUE(s.has_value() && s->has_value());
  json::object sdoc = json::parse((*s)->body).as_object();
  EXPECT_EQ(sdoc["artifactType"].as_string(), "application/vnd.hangar.space.v1");
  EXPECT_EQ(sdoc["layers"].at(0).at("mediaType").as_string(),
            "application/vnd.oci.image.layer.v1.tar");
}

TEST(OciModelConfig, ClassifiesByNameThenExtension) {
  auto type = [](RepoType t, std::string_view p) { return ClassifyLayer(t, p).media_type; };
  const std::string w = "application/vnd.cncf.model.weight.v1.raw";
  const std::string wc = "application/vnd.cncf.model.weight.config.v1.raw";
  EXPECT_EQ(type(RepoType::Model, "sub/Model-00001.SafeTensors"), w);
  EXPECT_EQ(type(RepoType::Model, "q4.gguf"), w);
  EXPECT_EQ(type(RepoType::Model, "tokenizer.model"), wc);
  EXPECT_EQ(type(RepoType::Model, "model.safetensors.index.json"), wc);
  EXPECT_EQ(type(RepoType::Model, "LICENSE"), "application/vnd.cncf.model.doc.v1.raw");
  EXPECT_FALSE(ClassifyLayer(RepoType::Model, "tokenizer_config.json").untested);
  EXPECT_TRUE(ClassifyLayer(RepoType::Model, "pytorch_model.bin").untested);
  EXPECT_TRUE(ClassifyLayer(RepoType::Model, "pytorch_model.bin").is_weight);
  EXPECT_TRUE(ClassifyLayer(RepoType::Model, "other.json").untested);
  EXPECT_TRUE(ClassifyLayer(RepoType::Model, "noextension").untested);
  EXPECT_EQ(type(RepoType::Model, "noextension"), "application/vnd.cncf.model.doc.v1.raw");
  EXPECT_EQ(ClassifyLayer(RepoType::Model, "tessdata/eng.traineddata", true).media_type, w);
  EXPECT_TRUE(ClassifyLayer(RepoType::Model, "tessdata/eng.traineddata", true).untested);
  EXPECT_EQ(ClassifyLayer(RepoType::Model, "notes.md", true).media_type,  // names win
            "application/vnd.cncf.model.doc.v1.raw");
  EXPECT_EQ(type(RepoType::Dataset, "data/train-00000.parquet"),
            "application/vnd.cncf.model.dataset.v1.raw");
  EXPECT_FALSE(ClassifyLayer(RepoType::Dataset, "data/train-00000.parquet").untested);
  EXPECT_EQ(type(RepoType::Dataset, "load.py"), "application/vnd.cncf.model.code.v1.raw");
}

TEST(OciModelConfig, MalformedInputsContributeNothingAndListLicensesAreKept) {
  ModelConfigInput in;
  in.created_at = "2023-11-14T22:13:20Z";
  in.name = "m";
  in.revision = std::string(40, 'a');
  in.readme = "---\nlicense: [mit, apache-2.0]\n---\n";
  in.config_json = "{not json";
  in.weight_paths = {"pytorch_model.bin", "model.safetensors"};
  in.diff_ids = {"sha256:" + std::string(64, 'b')};
  std::string out = BuildModelConfig(in);
  EXPECT_EQ(out, R"({"descriptor":{"createdAt":"2023-11-14T22:13:20Z","name":"m","revision":")" +
                     std::string(40, 'a') +
                     R"(","licenses":["mit","apache-2.0"]},"config":{"format":"safetensors"},)"
                     R"("modelfs":{"type":"layers","diffIds":["sha256:)" +
                     std::string(64, 'b') + R"("]}})");
  in.readme = "---\nlicense: [unclosed\n---\n";
  in.config_json = R"({"model_type":7,"torch_dtype":"auto","dtype":"x",)"
                   R"("quantization_config":{"quant_method":"gptq"}})";
  json::object c = json::parse(BuildModelConfig(in)).as_object();
  EXPECT_FALSE(c["descriptor"].as_object().contains("licenses"));
  EXPECT_FALSE(c["descriptor"].as_object().contains("family"));
  EXPECT_FALSE(c["config"].as_object().contains("precision"));
  EXPECT_EQ(c["config"].at("quantization").as_string(), "gptq");
}

}  // namespace
}  // namespace hangar::services
