// LfsService's HF multipart transfer (hf-api.md §7.4): part uploads and completion, staged
// as uploads of UploadService's in the blob store's staging areas.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "services/auth/account_service.h"
#include "services/lfs/lfs_service.h"
#include "services/repo/repo_service.h"
#include "services/uploads/upload_service.h"
#include "storage/memory/memory_blob_store.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;

constexpr char kKey[] = "test-secret-key-of-reasonable-length";
constexpr uint64_t kChunk = 40;

// 100 bytes: parts of 40, 40 and 20.
std::string Data(char seed = 'a') {
  std::string s;
  for (int i = 0; i < 100; ++i) s += static_cast<char>(seed + i % 26);
  return s;
}

class LfsMultipartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "hangar-mp-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = db::OpenSqliteStores(dir_ / "hangar.db");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
    access_ = std::make_unique<AccessPolicy>(*stores_.users);
    accounts_ = std::make_unique<AccountService>(*stores_.users, *access_);
    repos_ = std::make_unique<RepoService>(*stores_.repos, *access_, reader_, dir_ / "repos");
    UploadServiceOptions upload_opts;
    upload_opts.expiry = std::chrono::hours(24);
    upload_opts.max_open_per_user = 2;
    uploads_ = std::make_unique<UploadService>(*repos_, *stores_.repos, *stores_.uploads,
                                               *stores_.lfs, blobs_, upload_opts);
    LfsServiceOptions opts;
    opts.ticket_ttl = std::chrono::seconds(600);
    opts.max_objects = 10;
    opts.multipart_threshold = 50;
    opts.multipart_chunk_bytes = kChunk;
    lfs_ = std::make_unique<LfsService>(*repos_, *stores_.lfs, blobs_, *uploads_, kKey, opts);

    alice_ = testing::MakeUser(*accounts_, "alice");
    repo_id_ = testing::MakeRepoRow(*stores_.repos, "alice", "model");
  }
  void TearDown() override {
    lfs_.reset();
    uploads_.reset();
    repos_.reset();
    accounts_.reset();
    access_.reset();
    stores_ = db::Stores{};
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Batch-uploads an object of `size` bytes with sha256 `oid`; returns the result object.
  LfsBatchObjectResult Batch(const Sha256& oid, int64_t size,
                             std::vector<std::string> transfers = {"basic", "multipart"}) {
    LfsBatchRequest req;
    req.operation = LfsOperation::Upload;
    req.transfers = std::move(transfers);
    req.objects.push_back({oid.Hex(), size});
    auto b = lfs_->Batch(alice_, RepoId{RepoType::Model, "alice", "model"}, req);
    EXPECT_TRUE(b.has_value()) << b.error().message;
    return b.has_value() ? b->objects.at(0) : LfsBatchObjectResult{};
  }
  // Part `n` (1-based) of `data`.
  static std::string Part(const std::string& data, uint64_t n) {
    return data.substr((n - 1) * kChunk, kChunk);
  }
  // PUTs part `n` of the upload `r` (a batch answer) for `oid`, as the handler does: the
  // head's checks first, then the body.
  Result<std::string> Put(const LfsBatchObjectResult& r, const Sha256& oid, uint64_t n,
                          std::string body) {
    StringSource src(std::move(body));
    uint64_t len = src.Size().value_or(0);
    const std::string ticket = r.ticket.value_or("");
    HANGAR_TRY(lfs_->CheckPart(ticket, oid, r.upload_id, n, len));
    return lfs_->UploadPart(ticket, oid, r.upload_id, n, src, len);
  }
  Result<void> Complete(const LfsBatchObjectResult& r, const Sha256& oid,
                        const std::vector<LfsPartRef>& parts) {
    return lfs_->CompleteMultipart(r.ticket.value_or(""), oid, r.upload_id, parts);
  }
  // Uploads every part of `data` (last first) and returns the completion list.
  std::vector<LfsPartRef> PutAll(const LfsBatchObjectResult& r, const Sha256& oid,
                                 const std::string& data) {
    std::vector<LfsPartRef> parts;
    for (uint64_t n = 3; n >= 1; --n) {
      auto etag = Put(r, oid, n, Part(data, n));
      EXPECT_TRUE(etag.has_value()) << etag.error().message;
      parts.insert(parts.begin(), LfsPartRef{n, etag ? *etag : ""});
    }
    return parts;
  }
  bool Linked(const Sha256& oid) {
    auto l = stores_.lfs->IsLinked(repo_id_, oid);
    return l.has_value() && l->has_value();
  }
  // Staging areas the blob store holds, however new.
  size_t StagingAreas() {
    auto all = blobs_.ListStaleParts(std::chrono::seconds(-3600));
    EXPECT_TRUE(all.has_value());
    return all ? all->size() : 0;
  }
  // Parts stored in the staging area of upload `id`.
  size_t StoredParts(const std::string& id) {
    auto u = stores_.uploads->Get(id);
    if (!u || !u->has_value()) return 0;
    auto parts = blobs_.ListParts((*u)->store_handle);
    return parts ? parts->size() : 0;
  }

  fs::path dir_;
  db::Stores stores_;
  git::RepoReader reader_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<RepoService> repos_;
  storage::MemoryBlobStore blobs_;
  std::unique_ptr<UploadService> uploads_;
  std::unique_ptr<LfsService> lfs_;
  Principal alice_;
  int64_t repo_id_ = 0;
};

TEST_F(LfsMultipartTest, BatchOffersMultipartOnlyWhenListedAndLargeEnough) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto r = Batch(oid, 100);
  EXPECT_EQ(r.chunk_size, kChunk);
  EXPECT_EQ(r.upload_id.size(), 32u);
  EXPECT_EQ(StagingAreas(), 1u);            // the upload's staging area, begun by the batch
  auto basic = Batch(oid, 100, {"basic"});  // git-lfs
  EXPECT_EQ(basic.chunk_size, 0u);
  EXPECT_TRUE(basic.upload_id.empty());
  EXPECT_EQ(Batch(oid, 49).chunk_size, 0u);  // under the threshold
  EXPECT_EQ(StagingAreas(), 1u);
}

TEST_F(LfsMultipartTest, PartsOutOfOrderAndConcurrentlyThenComplete) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto up = Batch(oid, 100);
  std::vector<LfsPartRef> parts(3);
  std::vector<std::thread> threads;
  for (uint64_t n = 3; n >= 1; --n) {
    threads.emplace_back([&, n] {
      auto etag = Put(up, oid, n, Part(data, n));
      ASSERT_TRUE(etag.has_value()) << etag.error().message;
      EXPECT_EQ(*etag, "\"" + Sha256::Of(Part(data, n)).Hex() + "\"");
      parts[n - 1] = LfsPartRef{n, *etag};
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(StoredParts(up.upload_id), 3u);
  std::reverse(parts.begin(), parts.end());  // any order in the completion list too
  auto ok = Complete(up, oid, parts);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_TRUE(Linked(oid));
  auto size = blobs_.Stat(oid);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(*size, 100u);
  EXPECT_EQ(StagingAreas(), 0u);          // the parts went into the blob
  auto again = Complete(up, oid, parts);  // a retried completion
  EXPECT_TRUE(again.has_value()) << again.error().message;
  auto row = stores_.uploads->Get(up.upload_id);
  ASSERT_TRUE(row.has_value() && row->has_value());
  EXPECT_TRUE((*row)->completed_at.has_value());
}

TEST_F(LfsMultipartTest, WrongPartLengthIsSizeInvalidFromTheHead) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto up = Batch(oid, 100);
  const std::string ticket = up.ticket.value_or("");
  auto head = lfs_->CheckPart(ticket, oid, up.upload_id, 1, 39);
  ASSERT_FALSE(head.has_value());
  EXPECT_EQ(head.error().code, ErrorCode::SizeInvalid);
  auto r = Put(up, oid, 3, data.substr(0, 21));  // last part is 20 bytes
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::SizeInvalid);
  // Announced right but sent short: refused by the body's check.
  StringSource short_body(data.substr(0, 39));
  auto cut = lfs_->UploadPart(ticket, oid, up.upload_id, 1, short_body, std::nullopt);
  ASSERT_FALSE(cut.has_value());
  r = Put(up, oid, 4, "x");  // no such part
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
  EXPECT_EQ(StoredParts(up.upload_id), 0u);  // nothing of them kept
}

TEST_F(LfsMultipartTest, MissingPartKeepsTheOthersForAResend) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto up = Batch(oid, 100);
  auto e1 = Put(up, oid, 1, Part(data, 1));
  auto e3 = Put(up, oid, 3, Part(data, 3));
  ASSERT_TRUE(e1.has_value() && e3.has_value());
  std::vector<LfsPartRef> parts = {{1, *e1}, {2, "\"whatever\""}, {3, *e3}};
  auto r = Complete(up, oid, parts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  EXPECT_FALSE(Linked(oid));
  EXPECT_EQ(blobs_.BlobCount(), 0u);
  EXPECT_EQ(StoredParts(up.upload_id), 2u);
  // Not listing a part is refused too, and so is listing one twice.
  r = Complete(up, oid, {{1, *e1}, {3, *e3}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  r = Complete(up, oid, {{1, *e1}, {1, *e1}, {3, *e3}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  // The client sends the missing part and completes.
  auto e2 = Put(up, oid, 2, Part(data, 2));
  ASSERT_TRUE(e2.has_value());
  parts[1].etag = *e2;
  auto ok = Complete(up, oid, parts);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_TRUE(Linked(oid));
}

TEST_F(LfsMultipartTest, ASecondBatchResumesTheUploadWithItsParts) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto first = Batch(oid, 100);
  auto e1 = Put(first, oid, 1, Part(data, 1));
  ASSERT_TRUE(e1.has_value());
  // The client restarts (a crash, a lost connection) and asks again.
  auto second = Batch(oid, 100);
  EXPECT_EQ(second.upload_id, first.upload_id);
  EXPECT_EQ(StoredParts(second.upload_id), 1u);
  auto e2 = Put(second, oid, 2, Part(data, 2));
  auto e3 = Put(second, oid, 3, Part(data, 3));
  ASSERT_TRUE(e2.has_value() && e3.has_value());
  auto ok = Complete(second, oid, {{1, *e1}, {2, *e2}, {3, *e3}});
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_TRUE(Linked(oid));
}

TEST_F(LfsMultipartTest, WrongEtagIsRefusedAndStoresNothing) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto up = Batch(oid, 100);
  auto parts = PutAll(up, oid, data);
  parts[1].etag = "\"" + Sha256::Of("other").Hex() + "\"";
  auto r = Complete(up, oid, parts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  EXPECT_FALSE(Linked(oid));
  EXPECT_EQ(blobs_.BlobCount(), 0u);
  EXPECT_EQ(blobs_.PendingWriters(), 0u);
  EXPECT_EQ(StoredParts(up.upload_id), 3u);  // kept for a completion with the right tags
}

TEST_F(LfsMultipartTest, WrongTotalDigestLeavesNothingAndDeletesParts) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto up = Batch(oid, 100);
  auto parts = PutAll(up, oid, Data('b'));  // same size, other bytes
  auto r = Complete(up, oid, parts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::DigestInvalid);
  EXPECT_FALSE(Linked(oid));
  EXPECT_EQ(blobs_.BlobCount(), 0u);
  EXPECT_EQ(blobs_.PendingWriters(), 0u);
  EXPECT_EQ(StagingAreas(), 0u);
  auto row = stores_.uploads->Get(up.upload_id);
  ASSERT_TRUE(row.has_value());
  EXPECT_FALSE(row->has_value());  // the upload is gone: the next batch starts afresh
  EXPECT_NE(Batch(oid, 100).upload_id, up.upload_id);
}

TEST_F(LfsMultipartTest, ResentPartReplacesTheEarlierOne) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto up = Batch(oid, 100);
  auto bad = Put(up, oid, 2, Part(Data('c'), 2));
  ASSERT_TRUE(bad.has_value());
  auto parts = PutAll(up, oid, data);  // part 2 again, with the right bytes
  EXPECT_NE(parts[1].etag, *bad);
  auto ok = Complete(up, oid, parts);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_TRUE(Linked(oid));
}

TEST_F(LfsMultipartTest, PartsNeedAnUploadTicketForTheObjectAndItsUpload) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto up = Batch(oid, 100);
  auto r = Put(up, Sha256::Of("other"), 1, Part(data, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Forbidden);
  auto forged = up;
  forged.ticket = "not-a-ticket";
  r = Put(forged, oid, 1, Part(data, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Forbidden);
  // A valid ticket of another object does not open this object's upload.
  std::string other = Data('d');
  auto theirs = Batch(Sha256::Of(other), 100);
  auto crossed = theirs;
  crossed.upload_id = up.upload_id;
  r = Put(crossed, Sha256::Of(other), 1, Part(other, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
  auto unknown = up;
  unknown.upload_id = std::string(32, '0');
  r = Put(unknown, oid, 1, Part(data, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
  EXPECT_EQ(StoredParts(up.upload_id), 0u);
}

TEST_F(LfsMultipartTest, AnotherUsersUploadReadsAsMissing) {
  // Alice and Bob both write to acme/shared, and send the same object: an upload each.
  Principal bob = testing::MakeUser(*accounts_, "bob");
  ASSERT_TRUE(accounts_->CreateOrg("acme", "alice").has_value());
  ASSERT_TRUE(accounts_->AddMember("acme", "bob", db::OrgRole::Write).has_value());
  repo_id_ = testing::MakeRepoRow(*stores_.repos, "acme", "shared");
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  auto batch_as = [&](const Principal& who) {
    LfsBatchRequest req;
    req.operation = LfsOperation::Upload;
    req.transfers = {"multipart"};
    req.objects.push_back({oid.Hex(), 100});
    auto b = lfs_->Batch(who, RepoId{RepoType::Model, "acme", "shared"}, req);
    EXPECT_TRUE(b.has_value()) << b.error().message;
    return b.has_value() ? b->objects.at(0) : LfsBatchObjectResult{};
  };
  auto alices = batch_as(alice_);
  auto bobs = batch_as(bob);
  ASSERT_TRUE(bobs.ticket.has_value());
  EXPECT_NE(bobs.upload_id, alices.upload_id);
  auto crossed = bobs;
  crossed.upload_id = alices.upload_id;  // Bob's ticket, Alice's upload
  auto r = Put(crossed, oid, 1, Part(data, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
  EXPECT_EQ(StoredParts(alices.upload_id), 0u);
}

TEST_F(LfsMultipartTest, ObjectsOverFiveTibAreRefusedPerObject) {
  auto r = Batch(Sha256::Of("huge"), int64_t{1} << 44);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->code, 422);
  EXPECT_FALSE(r.ticket.has_value());
  EXPECT_EQ(StagingAreas(), 0u);
}

TEST_F(LfsMultipartTest, OverTheOpenUploadLimitTheObjectGets429) {
  // max_open_per_user is 2 here.
  EXPECT_TRUE(Batch(Sha256::Of(Data('a')), 100).error == std::nullopt);
  EXPECT_TRUE(Batch(Sha256::Of(Data('b')), 100).error == std::nullopt);
  auto third = Batch(Sha256::Of(Data('c')), 100);
  ASSERT_TRUE(third.error.has_value());
  EXPECT_EQ(third.error->code, 429);
  EXPECT_FALSE(third.ticket.has_value());
  EXPECT_EQ(StagingAreas(), 2u);
}

}  // namespace
}  // namespace hangar::services
