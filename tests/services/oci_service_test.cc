// OciService (services/oci/oci_service.h): uploads, blobs, manifests, tags, referrers, deletes,
// mounts, names and permissions, over SQLite, a memory blob store and real git repos.

#include "services/oci/oci_service.h"
#include <boost/json.hpp>

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "storage/memory/memory_blob_store.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;
using testing::MakeUser;

constexpr const char* kManifestType = "application/vnd.oci.image.manifest.v1+json";
constexpr const char* kIndexType = "application/vnd.oci.image.index.v1+json";

std::string D(std::string_view bytes) { return "sha256:" + Sha256::Of(bytes).Hex(); }

// The service as `hangar serve` configures it by default (config.h's [oci] numbers).
OciOptions Configured() {
  OciOptions o;
  o.max_manifest_bytes = 4 << 20;
  o.max_open_uploads = 1000;
  o.upload_idle = std::chrono::seconds(3600);
  return o;
}

class OciServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "hangar-oci-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    stores_ = std::move(db::OpenSqliteStores(dir_ / "hangar.db").value());
    access_ = std::make_unique<AccessPolicy>(*stores_.users);
    accounts_ = std::make_unique<AccountService>(*stores_.users, *access_);
    repos_ = std::make_unique<RepoService>(*stores_.repos, *access_, reader_, dir_ / "repos");
    projection_ = std::make_unique<OciProjection>(reader_, blobs_, *stores_.oci, *stores_.lfs,
                                                  "http://hub.test");
    Make();
    alice_ = MakeUser(*accounts_, "alice");
    bob_ = MakeUser(*accounts_, "bob");
  }
  void TearDown() override {
    oci_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void Make(OciOptions options = Configured()) {
    options.now = [this] { return now_; };
    oci_ = std::make_unique<OciService>(*repos_, *access_, *stores_.repos, *stores_.users,
                                        *stores_.oci, *stores_.lfs, blobs_, *projection_, options);
  }

  // Pushes `bytes` as a blob of `name` (POST + PUT); returns its digest.
  std::string Push(std::string_view name, std::string bytes) {
    auto up = oci_->StartUpload(alice_, name);
    EXPECT_TRUE(up.has_value()) << up.error().message;
    StringSource body(bytes);
    auto d = oci_->FinishUpload(alice_, name, up->id, D(bytes), std::nullopt, body, bytes.size());
    EXPECT_TRUE(d.has_value()) << d.error().message;
    return D(bytes);
  }

  // An image manifest over config `config` and layer digests.
  static std::string ImageManifest(const std::string& config,
                                   const std::vector<std::string>& layers, std::string extra = "") {
    std::string s = R"({"schemaVersion":2,"mediaType":")" + std::string(kManifestType) +
                    R"(","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":")" +
                    config + R"(","size":2},"layers":[)";
    for (size_t i = 0; i < layers.size(); ++i) {
      s += (i ? "," : "") +
           std::string(R"({"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":")") +
           layers[i] + R"(","size":1})";
    }
    return s + "]" + extra + "}";
  }

  Result<OciManifestPut> PutManifest(std::string_view name, std::string_view ref, std::string body,
                                     std::string_view ct = kManifestType,
                                     std::vector<std::string> tags = {}) {
    StringSource src(std::move(body));
    return oci_->PutManifest(alice_, name, ref, ct, src, tags);
  }

  std::string ReadBlob(std::string_view name, std::string_view digest,
                       storage::ByteRange range = {}) {
    auto b = oci_->OpenBlob(alice_, name, digest,
                            [&](uint64_t) -> Result<storage::ByteRange> { return range; });
    if (!b) return "error:" + std::string(Describe(b.error().code).name);
    return ReadAll(*b->body, 1 << 20).value();
  }

  fs::path dir_;
  db::Stores stores_;
  storage::MemoryBlobStore blobs_;
  git::RepoReader reader_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<RepoService> repos_;
  std::unique_ptr<OciProjection> projection_;
  std::unique_ptr<OciService> oci_;
  Principal alice_, bob_;
  int64_t now_ = 1000;
};

TEST_F(OciServiceTest, MonolithicPushCreatesTheRepoAndServesRanges) {
  std::string d = Push("alice/model", "hello world");
  auto repo = stores_.repos->Find(RepoId{RepoType::Model, "alice", "model"});
  ASSERT_TRUE(repo.has_value());
  EXPECT_FALSE(repo->is_private);
  auto stat = oci_->StatBlob(Principal::Anonymous(), "alice/model", d);
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->size, 11u);
  EXPECT_EQ(ReadBlob("alice/model", d), "hello world");
  EXPECT_EQ(ReadBlob("alice/model", d, storage::ByteRange::Window(6, 5)), "world");
  EXPECT_EQ(ReadBlob("alice/model", D("absent")), "error:BlobUnknown");
  EXPECT_EQ(oci_->OpenUploads(), 0u);
}

TEST_F(OciServiceTest, ChunksMustComeInOrderWithoutGapOrOverlap) {
  auto up = oci_->StartUpload(alice_, "alice/chunks").value();
  auto patch = [&](std::optional<OciChunkRange> r, std::string bytes, std::optional<uint64_t> len) {
    StringSource src(std::move(bytes));
    return oci_->AppendUpload(alice_, "alice/chunks", up.id, r, src, len);
  };
  // The second chunk first: 416.
  EXPECT_EQ(patch(OciChunkRange{5, 9}, "world", 5).error().code, ErrorCode::BlobUploadInvalid);
  auto first = patch(OciChunkRange{0, 4}, "hello", 5);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->offset, 5u);
  EXPECT_EQ(patch(OciChunkRange{0, 4}, "hello", 5).error().code,
            ErrorCode::BlobUploadInvalid);  // resent (overlap)
  EXPECT_EQ(patch(OciChunkRange{3, 7}, "lo wo", 5).error().code,
            ErrorCode::BlobUploadInvalid);  // overlap
  EXPECT_EQ(patch(OciChunkRange{7, 9}, "rld", 3).error().code,
            ErrorCode::BlobUploadInvalid);  // gap
  EXPECT_EQ(patch(OciChunkRange{5, 9}, "world", 4).error().code,
            ErrorCode::SizeInvalid);  // Content-Length ≠ range
  EXPECT_EQ(oci_->UploadStatus(alice_, "alice/chunks", up.id)->offset, 5u);
  // A streamed chunk (no Content-Range) appends at the offset.
  ASSERT_TRUE(patch(std::nullopt, " world", std::nullopt).has_value());
  EXPECT_EQ(oci_->UploadStatus(alice_, "alice/chunks", up.id)->offset, 11u);
  StringSource none("");
  auto d =
      oci_->FinishUpload(alice_, "alice/chunks", up.id, D("hello world"), std::nullopt, none, 0);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(ReadBlob("alice/chunks", *d), "hello world");
  EXPECT_EQ(oci_->UploadStatus(alice_, "alice/chunks", up.id).error().code,
            ErrorCode::BlobUploadUnknown);
}

TEST_F(OciServiceTest, WrongDigestStoresNothingAndEndsTheUpload) {
  auto up = oci_->StartUpload(alice_, "alice/m").value();
  StringSource body("actual");
  auto r = oci_->FinishUpload(alice_, "alice/m", up.id, D("claimed"), std::nullopt, body, 6);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::DigestInvalid);
  EXPECT_EQ(blobs_.Stat(Sha256::Of("actual")).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(blobs_.Stat(Sha256::Of("claimed")).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(oci_->UploadStatus(alice_, "alice/m", up.id).error().code,
            ErrorCode::BlobUploadUnknown);
  // A malformed digest keeps the upload: the client may PUT again.
  auto up2 = oci_->StartUpload(alice_, "alice/m").value();
  StringSource b2("x");
  EXPECT_EQ(oci_->FinishUpload(alice_, "alice/m", up2.id, "sha256:nothex", std::nullopt, b2, 1)
                .error()
                .code,
            ErrorCode::DigestInvalid);
  EXPECT_TRUE(oci_->UploadStatus(alice_, "alice/m", up2.id).has_value());
}

TEST_F(OciServiceTest, EmptyBlobAndSinglePost) {
  std::string d = Push("alice/m", "");
  EXPECT_EQ(d, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(oci_->StatBlob(alice_, "alice/m", d)->size, 0u);
  EXPECT_EQ(ReadBlob("alice/m", d), "");
  StringSource body("single");
  auto put = oci_->PutBlob(alice_, "alice/m", D("single"), body, 6);
  ASSERT_TRUE(put.has_value());
  EXPECT_EQ(ReadBlob("alice/m", D("single")), "single");
  StringSource bad("single");
  EXPECT_EQ(oci_->PutBlob(alice_, "alice/m", D("other"), bad, 6).error().code,
            ErrorCode::DigestInvalid);
}

TEST_F(OciServiceTest, Sha512IsAcceptedAnnouncedOrNot) {
  const std::string bytes = "sha512 content";
  const std::string d512 = DigestOf("sha512", bytes).String();
  // Announced: hashed as it arrives.
  auto up = oci_->StartUpload(alice_, "alice/m", "sha512").value();
  StringSource b1(bytes);
  ASSERT_EQ(
      oci_->FinishUpload(alice_, "alice/m", up.id, d512, std::nullopt, b1, bytes.size()).value(),
      d512);
  EXPECT_EQ(ReadBlob("alice/m", d512), bytes);
  EXPECT_EQ(stores_.oci->FindAlias(d512).value()->first, Sha256::Of(bytes));
  // Not announced: re-read at the end; a wrong one is refused and not readable.
  const std::string other = "unannounced";
  auto up2 = oci_->StartUpload(alice_, "alice/n").value();
  StringSource b2(other);
  ASSERT_TRUE(oci_->FinishUpload(alice_, "alice/n", up2.id, DigestOf("sha512", other).String(),
                                 std::nullopt, b2, other.size())
                  .has_value());
  EXPECT_EQ(ReadBlob("alice/n", DigestOf("sha512", other).String()), other);
  auto up3 = oci_->StartUpload(alice_, "alice/n", "sha512").value();
  StringSource b3("tampered");
  EXPECT_EQ(oci_->FinishUpload(alice_, "alice/n", up3.id, d512, std::nullopt, b3, 8).error().code,
            ErrorCode::DigestInvalid);
  EXPECT_EQ(ReadBlob("alice/n", d512), "error:BlobUnknown");
  EXPECT_EQ(oci_->StartUpload(alice_, "alice/n", "md5").error().code, ErrorCode::DigestInvalid);
}

TEST_F(OciServiceTest, UploadsAreCappedAndExpire) {
  OciOptions o = Configured();
  o.max_open_uploads = 2;
  o.upload_idle = std::chrono::seconds(60);
  Make(o);
  auto a = oci_->StartUpload(alice_, "alice/m").value();
  ASSERT_TRUE(oci_->StartUpload(alice_, "alice/m").has_value());
  EXPECT_EQ(oci_->StartUpload(alice_, "alice/m").error().code, ErrorCode::TooManyRequests);
  now_ += 61;
  EXPECT_EQ(oci_->UploadStatus(alice_, "alice/m", a.id).error().code, ErrorCode::BlobUploadUnknown);
  ASSERT_TRUE(oci_->StartUpload(alice_, "alice/m").has_value());  // the idle one went
  EXPECT_EQ(oci_->OpenUploads(), 1u);
  EXPECT_EQ(oci_->UploadStatus(alice_, "alice/m", "nope").error().code,
            ErrorCode::BlobUploadUnknown);
}

// One user opening uploads until the process cap is reached must not lock every other
// pusher out (oci_hardening found this): each user has a share of their own.
TEST_F(OciServiceTest, OneUserCannotTakeEveryUploadSlot) {
  OciOptions o = Configured();
  o.max_open_uploads = 10;
  o.max_open_uploads_per_user = 3;
  Make(o);
  std::vector<std::string> mine;
  for (int i = 0; i < 3; ++i) mine.push_back(oci_->StartUpload(bob_, "bob/m").value().id);
  auto refused = oci_->StartUpload(bob_, "bob/m");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::TooManyRequests);
  EXPECT_EQ(oci_->OpenUploads(), 3u);  // the refused one left nothing behind
  // Another user still gets slots.
  ASSERT_TRUE(oci_->StartUpload(alice_, "alice/m").has_value());
  // Cancelling one of bob's frees his slot.
  ASSERT_TRUE(oci_->CancelUpload(bob_, "bob/m", mine[0]).has_value());
  EXPECT_TRUE(oci_->StartUpload(bob_, "bob/m").has_value());
}

TEST_F(OciServiceTest, AnUploadBelongsToTheUserWhoBeganIt) {
  // alice and bob both write to acme/m; bob learns the id of alice's upload.
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Write).has_value());
  Push("acme/m", "x");  // the repo exists and bob may write to it
  ASSERT_TRUE(oci_->StartUpload(bob_, "acme/m").has_value());
  auto up = oci_->StartUpload(alice_, "acme/m").value();
  auto append = [&](const Principal& who, std::string bytes) {
    StringSource src(std::move(bytes));
    return oci_->AppendUpload(who, "acme/m", up.id, std::nullopt, src, std::nullopt);
  };
  ASSERT_EQ(append(alice_, "alice's ").value().offset, 8u);
  auto unknown = [&](const auto& r) {
    return !r.has_value() && r.error().code == ErrorCode::BlobUploadUnknown;
  };
  // Answered exactly as an upload that does not exist.
  auto theirs = append(bob_, "bob's bytes");
  ASSERT_TRUE(unknown(theirs));
  StringSource none("");
  auto missing = oci_->AppendUpload(bob_, "acme/m", "00000000-0000-4000-8000-000000000000",
                                    std::nullopt, none, std::nullopt);
  ASSERT_TRUE(unknown(missing));
  EXPECT_EQ(theirs.error().message, "blob upload " + up.id + " is unknown or expired");
  EXPECT_EQ(missing.error().message,
            "blob upload 00000000-0000-4000-8000-000000000000 is unknown or expired");
  EXPECT_TRUE(unknown(oci_->UploadStatus(bob_, "acme/m", up.id)));
  StringSource tail("tail");
  EXPECT_TRUE(unknown(oci_->FinishUpload(bob_, "acme/m", up.id, D("alice's tail"), std::nullopt,
                                         tail, std::nullopt)));
  EXPECT_TRUE(unknown(oci_->CancelUpload(bob_, "acme/m", up.id)));
  // Another token of alice's is still alice; her upload is untouched by bob's attempts.
  Principal alice_again = alice_;
  alice_again.token_id = 42;
  EXPECT_EQ(oci_->UploadStatus(alice_again, "acme/m", up.id).value().offset, 8u);
  StringSource rest("tail");
  EXPECT_EQ(oci_->FinishUpload(alice_, "acme/m", up.id, D("alice's tail"), std::nullopt, rest,
                               std::nullopt)
                .value(),
            D("alice's tail"));
  EXPECT_EQ(ReadBlob("acme/m", D("alice's tail")), "alice's tail");
  EXPECT_EQ(ReadBlob("acme/m", D("alice's bob's bytestail")), "error:BlobUnknown");
}

TEST_F(OciServiceTest, PermissionsAndNames) {
  Push("alice/m", "x");
  // Anonymous push to a missing repo: not found (the handler turns it into a 401).
  EXPECT_EQ(oci_->StartUpload(Principal::Anonymous(), "alice/new").error().code,
            ErrorCode::RepoNotFound);
  EXPECT_EQ(oci_->StartUpload(Principal::Anonymous(), "alice/m").error().code,
            ErrorCode::Unauthorized);
  EXPECT_EQ(oci_->StartUpload(bob_, "alice/m").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(oci_->StartUpload(bob_, "alice/other").error().code, ErrorCode::Forbidden);
  auto read_only = alice_;
  read_only.role = TokenRole::Read;
  EXPECT_EQ(oci_->StartUpload(read_only, "alice/m").error().code, ErrorCode::Forbidden);
  EXPECT_EQ(oci_->StartUpload(alice_, "Alice/m").error().code, ErrorCode::NameInvalid);
  EXPECT_EQ(oci_->StartUpload(alice_, "alice/../m").error().code, ErrorCode::NameInvalid);
  EXPECT_EQ(oci_->AccessFor(alice_, "alice/m").value(), Access::Admin);
  EXPECT_EQ(oci_->AccessFor(bob_, "alice/m").value(), Access::Read);
  EXPECT_EQ(oci_->AccessFor(alice_, "alice/unborn").value(), Access::Write);
  EXPECT_EQ(oci_->AccessFor(bob_, "alice/unborn").error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(oci_->AccessFor(bob_, "X/y").error().code, ErrorCode::NameInvalid);
  EXPECT_EQ(oci_->AccessFor(bob_, "x").value(), Access::Read);  // can never be a repo
  // A well-formed name that is no hub repo's: reads find nothing (404), writes are told why.
  EXPECT_EQ(oci_->GetManifest(alice_, "conformance", "v1").error().code, ErrorCode::RepoNotFound);
  EXPECT_EQ(oci_->StartUpload(alice_, "conformance").error().code, ErrorCode::NameInvalid);
  EXPECT_EQ(oci_->GetManifest(alice_, "a/B", "v1").error().code, ErrorCode::NameInvalid);
}

TEST_F(OciServiceTest, APrivateRepoAnswersExactlyAsAMissingOne) {
  Push("alice/secret", "x");
  ASSERT_TRUE(repos_->SetPrivate(alice_, RepoId{RepoType::Model, "alice", "secret"}, true));
  auto hidden = oci_->GetManifest(bob_, "alice/secret", "v1");
  auto missing = oci_->GetManifest(bob_, "alice/nothing", "v1");
  ASSERT_FALSE(hidden.has_value());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(hidden.error().code, missing.error().code);
  auto without = [](std::string msg, std::string_view name) {
    return msg.replace(msg.find(name), name.size(), "NAME");
  };
  EXPECT_EQ(without(hidden.error().message, "alice/secret"),
            without(missing.error().message, "alice/nothing"));
  auto push_hidden = oci_->StartUpload(bob_, "alice/secret");
  auto push_missing = oci_->StartUpload(bob_, "alice/nothing");
  EXPECT_EQ(push_hidden.error().code, ErrorCode::Forbidden);
  EXPECT_EQ(push_hidden.error().message, push_missing.error().message);
}

TEST_F(OciServiceTest, AManifestMayUseTheRepoGitFilesAsBlobs) {
  Push("alice/m", "{}");
  auto projected = oci_->GetManifest(alice_, "alice/m", "main");  // hashes .gitattributes
  ASSERT_TRUE(projected.has_value()) << projected.error().message;
  auto doc = boost::json::parse(projected->body).as_object();
  std::string git_file;
  for (const auto& layer : doc.at("layers").as_array()) {
    git_file = std::string(layer.as_object().at("digest").as_string());
  }
  ASSERT_FALSE(git_file.empty());
  EXPECT_FALSE(ReadBlob("alice/m", git_file).starts_with("error:"));  // HEAD/GET serve it
  auto put = PutManifest("alice/m", "copy", ImageManifest(D("{}"), {git_file}));
  EXPECT_TRUE(put.has_value()) << put.error().message;
  auto other = PutManifest("alice/m", "bad", ImageManifest(D("{}"), {D("not here")}));
  EXPECT_EQ(other.error().code, ErrorCode::ManifestBlobUnknown);
}

TEST_F(OciServiceTest, NamesAreFoundIgnoringCaseAndAmbiguityIsRefused) {
  ASSERT_TRUE(repos_->Create(alice_, RepoId{RepoType::Model, "alice", "GPT-Big"}, false));
  std::string d = Push("alice/gpt-big", "weights");
  EXPECT_EQ(ReadBlob("alice/gpt-big", d), "weights");
  EXPECT_FALSE(stores_.repos->Find(RepoId{RepoType::Model, "alice", "gpt-big"}).has_value());
  ASSERT_TRUE(repos_->Create(alice_, RepoId{RepoType::Model, "alice", "GPT-big"}, false));
  EXPECT_EQ(oci_->StatBlob(alice_, "alice/gpt-big", d).error().code, ErrorCode::NameInvalid);
  // Datasets live under datasets/.
  Push("datasets/alice/data", "rows");
  EXPECT_TRUE(stores_.repos->Find(RepoId{RepoType::Dataset, "alice", "data"}).has_value());
}

TEST_F(OciServiceTest, MountNeedsReadAccessToTheSource) {
  std::string d = Push("alice/src", "layer");
  ASSERT_TRUE(repos_->SetPrivate(alice_, RepoId{RepoType::Model, "alice", "src"}, true));
  EXPECT_FALSE(oci_->Mount(bob_, "bob/dst", d, "alice/src").value());  // cannot read
  EXPECT_EQ(ReadBlob("alice/src", d), "layer");
  EXPECT_TRUE(oci_->Mount(alice_, "alice/dst", d, "alice/src").value());
  EXPECT_EQ(ReadBlob("alice/dst", d), "layer");
  EXPECT_FALSE(oci_->Mount(alice_, "alice/dst2", D("absent"), "alice/src").value());
  EXPECT_FALSE(oci_->Mount(alice_, "alice/dst2", d, "").value());  // no `from`: upload
  EXPECT_EQ(oci_->Mount(alice_, "alice/dst2", "sha256:zz", "alice/src").error().code,
            ErrorCode::DigestInvalid);
}

TEST_F(OciServiceTest, ManifestRoundTripTagsAndDeletes) {
  std::string cfg = Push("alice/m", "{}");
  std::string layer = Push("alice/m", "l");
  std::string body = ImageManifest(cfg, {layer}, R"(,"custom":{"kept":true})");
  auto put = PutManifest("alice/m", "v1", body, kManifestType, {"extra"});
  ASSERT_TRUE(put.has_value()) << put.error().message;
  EXPECT_EQ(put->digest, D(body));
  EXPECT_EQ(put->tags, (std::vector<std::string>{"v1", "extra"}));
  auto got = oci_->GetManifest(Principal::Anonymous(), "alice/m", "v1");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->body, body);
  EXPECT_EQ(got->media_type, kManifestType);
  EXPECT_EQ(oci_->GetManifest(alice_, "alice/m", D(body))->body, body);
  EXPECT_EQ(oci_->GetManifest(alice_, "alice/m", "nope").error().code, ErrorCode::ManifestUnknown);
  EXPECT_EQ(oci_->GetManifest(alice_, "alice/m", ".INVALID_MANIFEST_NAME").error().code,
            ErrorCode::ManifestUnknown);
  // By digest reference, which must match.
  EXPECT_TRUE(PutManifest("alice/m", D(body), body).has_value());
  EXPECT_EQ(PutManifest("alice/m", D("other"), body).error().code, ErrorCode::DigestInvalid);
  // Delete a tag, then the manifest with its remaining tag.
  ASSERT_TRUE(oci_->DeleteManifest(alice_, "alice/m", "v1").has_value());
  EXPECT_EQ(oci_->DeleteManifest(alice_, "alice/m", "v1").error().code, ErrorCode::ManifestUnknown);
  // The repo's branch "main" is listed too (the projection's revision tags).
  EXPECT_EQ(oci_->ListTags(alice_, "alice/m", std::nullopt, "")->names,
            (std::vector<std::string>{"extra", "main"}));
  ASSERT_TRUE(oci_->DeleteManifest(alice_, "alice/m", D(body)).has_value());
  EXPECT_EQ(oci_->ListTags(alice_, "alice/m", std::nullopt, "")->names,
            std::vector<std::string>{"main"});
  EXPECT_EQ(oci_->GetManifest(alice_, "alice/m", D(body)).error().code, ErrorCode::ManifestUnknown);
  // Blob delete: unlinked from the repo.
  ASSERT_TRUE(oci_->DeleteBlob(alice_, "alice/m", layer).has_value());
  EXPECT_EQ(ReadBlob("alice/m", layer), "error:BlobUnknown");
  EXPECT_EQ(oci_->DeleteBlob(alice_, "alice/m", layer).error().code, ErrorCode::BlobUnknown);
}

TEST_F(OciServiceTest, BadManifestsAreRefusedAndStoreNothing) {
  std::string cfg = Push("alice/m", "{}");
  auto code = [&](std::string body, std::string_view ct = kManifestType,
                  std::string_view ref = "t") {
    auto r = PutManifest("alice/m", ref, std::move(body), ct);
    return r ? ErrorCode::Internal : r.error().code;  // Internal = unexpectedly accepted
  };
  EXPECT_EQ(code("{not json"), ErrorCode::ManifestInvalid);
  EXPECT_EQ(code("[]"), ErrorCode::ManifestInvalid);
  EXPECT_EQ(code(R"({"schemaVersion":1,"config":{},"layers":[]})"), ErrorCode::ManifestInvalid);
  EXPECT_EQ(code(ImageManifest(cfg, {}), kIndexType), ErrorCode::ManifestInvalid);
  EXPECT_EQ(code(R"({"schemaVersion":2,"mediaType":"application/x-unknown","layers":[]})",
                 "application/x-unknown"),
            ErrorCode::ManifestInvalid);
  EXPECT_EQ(
      code(
          R"({"schemaVersion":2,"config":{"mediaType":"a","digest":"sha256:xyz","size":1},"layers":[]})"),
      ErrorCode::ManifestInvalid);
  EXPECT_EQ(code(R"({"schemaVersion":2,"config":{"mediaType":"a","digest":")" + cfg +
                 R"(","size":-1},"layers":[]})"),
            ErrorCode::ManifestInvalid);
  EXPECT_EQ(code(ImageManifest(cfg, {D("never pushed")})), ErrorCode::ManifestBlobUnknown);
  EXPECT_EQ(code(ImageManifest(D("no config"), {})), ErrorCode::ManifestBlobUnknown);
  EXPECT_EQ(code(ImageManifest(cfg, {}), kManifestType, "bad/tag"), ErrorCode::TagInvalid);
  EXPECT_EQ(
      code(R"({"schemaVersion":2,"mediaType":")" + std::string(kIndexType) +
               R"(","manifests":[{"mediaType":"x","digest":")" + D("child") + R"(","size":3}]})",
           kIndexType),
      ErrorCode::ManifestBlobUnknown);
  OciOptions small = Configured();
  small.max_manifest_bytes = 64;
  Make(small);
  EXPECT_EQ(code(ImageManifest(cfg, {})), ErrorCode::PayloadTooLarge);
  EXPECT_EQ(oci_->ListTags(alice_, "alice/m", std::nullopt, "")->names,
            std::vector<std::string>{"main"});  // the branch only: no pushed tag
  Make();
  // Non-distributable layers are never uploaded: exempt.
  std::string nd =
      R"({"schemaVersion":2,"config":{"mediaType":"a","digest":")" + cfg +
      R"(","size":2},"layers":[{"mediaType":"application/vnd.oci.image.layer.nondistributable.v1.tar","digest":")" +
      D("foreign") + R"(","size":7}]})";
  auto ok = PutManifest("alice/m", "nd", nd, "");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(oci_->GetManifest(alice_, "alice/m", "nd")->media_type, kManifestType);
}

TEST_F(OciServiceTest, ReferrersFilterAndTagSchemaFallback) {
  std::string cfg = Push("alice/m", "{}");
  std::string subject = D("subject manifest, not pushed yet");
  auto referrer = [&](std::string type, std::string note) {
    return ImageManifest(cfg, {},
                         R"(,"artifactType":")" + type +
                             R"(","subject":{"mediaType":"x","digest":")" + subject +
                             R"(","size":1},"annotations":{"n":")" + note + "\"}");
  };
  auto r1 = PutManifest("alice/m", D(referrer("sig", "1")), referrer("sig", "1"));
  ASSERT_TRUE(r1.has_value()) << r1.error().message;
  EXPECT_EQ(r1->subject, subject);
  ASSERT_TRUE(PutManifest("alice/m", D(referrer("sbom", "2")), referrer("sbom", "2")));
  // A client-maintained referrers index under tag sha256-<hex>: one new entry, one dup.
  std::string legacy = R"({"schemaVersion":2,"mediaType":")" + std::string(kIndexType) +
                       R"(","manifests":[{"mediaType":"m","digest":")" + D("legacy") +
                       R"(","size":5,"artifactType":"sig"},{"mediaType":"m","digest":")" +
                       D(referrer("sig", "1")) + R"(","size":1}]})";
  // Its children must exist: store them first under digests.
  ASSERT_TRUE(
      stores_.oci->PutManifest({stores_.repos->Find(RepoId{RepoType::Model, "alice", "m"})->id,
                                D("legacy"), kManifestType, "legacy", "", "", "", 1},
                               {}));
  auto tag = "sha256-" + subject.substr(7);
  auto li = PutManifest("alice/m", tag, legacy, kIndexType);
  ASSERT_TRUE(li.has_value()) << li.error().message;
  auto all = oci_->ListReferrers(alice_, "alice/m", subject, "").value();
  EXPECT_FALSE(all.filter_applied);
  EXPECT_NE(all.body.find(R"("annotations":{"n":"1"})"), std::string::npos) << all.body;
  EXPECT_NE(all.body.find(D("legacy")), std::string::npos);
  EXPECT_EQ(all.body.find(D(referrer("sig", "1"))), all.body.rfind(D(referrer("sig", "1"))))
      << "deduplicated: " << all.body;
  auto sigs = oci_->ListReferrers(alice_, "alice/m", subject, "sig").value();
  EXPECT_TRUE(sigs.filter_applied);
  EXPECT_EQ(sigs.body.find(D(referrer("sbom", "2"))), std::string::npos);
  EXPECT_NE(sigs.body.find(D("legacy")), std::string::npos);
  // An index referrer may list its not-yet-pushed subject as a child; other children must
  // exist.
  auto idx = [&](std::string child) {
    return R"({"schemaVersion":2,"mediaType":")" + std::string(kIndexType) +
           R"(","manifests":[{"mediaType":"m","digest":")" + child +
           R"(","size":1}],"subject":{"mediaType":"m","digest":")" + subject + R"(","size":1}})";
  };
  EXPECT_TRUE(PutManifest("alice/m", "idx", idx(subject), kIndexType).has_value());
  EXPECT_EQ(PutManifest("alice/m", "idx2", idx(D("gone")), kIndexType).error().code,
            ErrorCode::ManifestBlobUnknown);
  auto none = oci_->ListReferrers(alice_, "alice/m", D("nothing"), "").value();
  EXPECT_NE(none.body.find(R"("manifests":[])"), std::string::npos) << none.body;
  EXPECT_EQ(oci_->ListReferrers(alice_, "alice/m", "sha256:bad", "").error().code,
            ErrorCode::DigestInvalid);
}

TEST_F(OciServiceTest, TagPagination) {
  std::string cfg = Push("alice/m", "{}");
  std::string body = ImageManifest(cfg, {});
  for (const char* t : {"b", "a", "C", "d"}) ASSERT_TRUE(PutManifest("alice/m", t, body));
  EXPECT_EQ(oci_->ListTags(alice_, "alice/m", std::nullopt, "")->names,
            (std::vector<std::string>{"C", "a", "b", "d", "main"}));  // pushed + branch
  auto p1 = oci_->ListTags(alice_, "alice/m", 2, "").value();
  EXPECT_EQ(p1.names, (std::vector<std::string>{"C", "a"}));
  EXPECT_TRUE(p1.more);
  auto p2 = oci_->ListTags(alice_, "alice/m", 2, "a").value();
  EXPECT_EQ(p2.names, (std::vector<std::string>{"b", "d"}));
  EXPECT_TRUE(p2.more);
  auto p3 = oci_->ListTags(alice_, "alice/m", 2, "d").value();
  EXPECT_EQ(p3.names, std::vector<std::string>{"main"});
  EXPECT_FALSE(p3.more);
  auto zero = oci_->ListTags(alice_, "alice/m", 0, "").value();
  EXPECT_TRUE(zero.names.empty());
  EXPECT_FALSE(zero.more);
  EXPECT_EQ(oci_->ListTags(alice_, "alice/none", std::nullopt, "").error().code,
            ErrorCode::RepoNotFound);
}

}  // namespace
}  // namespace hangar::services
