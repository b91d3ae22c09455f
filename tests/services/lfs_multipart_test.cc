// LfsService's HF multipart transfer (hf-api.md §7.4): part uploads and completion.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "db/sqlite/sqlite_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "services/auth/auth_service.h"
#include "services/lfs/lfs_service.h"
#include "services/repo/repo_service.h"
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
    auth_ = std::make_unique<AuthService>(*stores_.users);
    repos_ = std::make_unique<RepoService>(*stores_.repos, *auth_, reader_, dir_ / "repos");
    LfsServiceOptions opts;
    opts.multipart_threshold = 50;
    opts.multipart_chunk_bytes = kChunk;
    opts.multipart_dir = dir_ / "tmp" / "multipart";
    lfs_ = std::make_unique<LfsService>(*repos_, *stores_.lfs, blobs_, kKey, opts);

    alice_ = testing::MakeUser(*auth_, "alice");
    repo_id_ = testing::MakeRepoRow(*stores_.repos, "alice", "model");
  }
  void TearDown() override {
    lfs_.reset();
    repos_.reset();
    auth_.reset();
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
  Result<std::string> Put(const std::string& ticket, const Sha256& oid, uint64_t n,
                          std::string body) {
    StringSource src(std::move(body));
    uint64_t len = src.Size().value_or(0);
    return lfs_->UploadPart(ticket, oid, n, src, len);
  }
  // Uploads every part of `data` (last first) and returns the completion list.
  std::vector<LfsPartRef> PutAll(const std::string& ticket, const Sha256& oid,
                                 const std::string& data) {
    std::vector<LfsPartRef> parts;
    for (uint64_t n = 3; n >= 1; --n) {
      auto etag = Put(ticket, oid, n, Part(data, n));
      EXPECT_TRUE(etag.has_value()) << etag.error().message;
      parts.insert(parts.begin(), LfsPartRef{n, etag ? *etag : ""});
    }
    return parts;
  }
  bool Linked(const Sha256& oid) {
    auto l = stores_.lfs->IsLinked(repo_id_, oid);
    return l.has_value() && l->has_value();
  }
  size_t FilesUnder(const fs::path& p) {
    size_t n = 0;
    std::error_code ec;
    if (!fs::exists(p, ec)) return 0;
    for (const auto& e : fs::recursive_directory_iterator(p)) n += e.is_regular_file() ? 1 : 0;
    return n;
  }

  fs::path dir_;
  db::Stores stores_;
  git::RepoReader reader_;
  std::unique_ptr<AuthService> auth_;
  std::unique_ptr<RepoService> repos_;
  storage::MemoryBlobStore blobs_;
  std::unique_ptr<LfsService> lfs_;
  Principal alice_;
  int64_t repo_id_ = 0;
};

TEST_F(LfsMultipartTest, BatchOffersMultipartOnlyWhenListedAndLargeEnough) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  EXPECT_EQ(Batch(oid, 100).chunk_size, kChunk);
  EXPECT_EQ(Batch(oid, 100, {"basic"}).chunk_size, 0u);  // git-lfs
  EXPECT_EQ(Batch(oid, 49).chunk_size, 0u);              // under the threshold
}

TEST_F(LfsMultipartTest, PartsOutOfOrderAndConcurrentlyThenComplete) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  std::string ticket = Batch(oid, 100).ticket.value_or("");
  std::vector<LfsPartRef> parts(3);
  std::vector<std::thread> threads;
  for (uint64_t n = 3; n >= 1; --n) {
    threads.emplace_back([&, n] {
      auto etag = Put(ticket, oid, n, Part(data, n));
      ASSERT_TRUE(etag.has_value()) << etag.error().message;
      EXPECT_FALSE(etag->empty());
      parts[n - 1] = LfsPartRef{n, *etag};
    });
  }
  for (auto& t : threads) t.join();
  std::reverse(parts.begin(), parts.end());  // any order in the completion list too
  auto ok = lfs_->CompleteMultipart(ticket, oid, parts);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_TRUE(Linked(oid));
  auto size = blobs_.Stat(oid);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(*size, 100u);
  EXPECT_EQ(FilesUnder(dir_ / "tmp" / "multipart"), 0u);  // parts deleted
}

TEST_F(LfsMultipartTest, WrongPartLengthIsSizeInvalid) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  std::string ticket = Batch(oid, 100).ticket.value_or("");
  auto r = Put(ticket, oid, 1, data.substr(0, 39));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::SizeInvalid);
  r = Put(ticket, oid, 3, data.substr(0, 21));  // last part is 20 bytes
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::SizeInvalid);
  r = Put(ticket, oid, 4, "x");  // no such part
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
  EXPECT_EQ(FilesUnder(dir_ / "tmp" / "multipart"), 0u);  // no temporaries left
}

TEST_F(LfsMultipartTest, MissingPartKeepsTheOthersForAResend) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  std::string ticket = Batch(oid, 100).ticket.value_or("");
  auto e1 = Put(ticket, oid, 1, Part(data, 1));
  auto e3 = Put(ticket, oid, 3, Part(data, 3));
  ASSERT_TRUE(e1.has_value() && e3.has_value());
  std::vector<LfsPartRef> parts = {{1, *e1}, {2, "\"whatever\""}, {3, *e3}};
  auto r = lfs_->CompleteMultipart(ticket, oid, parts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  EXPECT_FALSE(Linked(oid));
  EXPECT_EQ(blobs_.BlobCount(), 0u);
  EXPECT_EQ(FilesUnder(dir_ / "tmp" / "multipart"), 2u);
  // Not listing a part is refused too.
  r = lfs_->CompleteMultipart(ticket, oid, {{1, *e1}, {3, *e3}});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  // The client sends the missing part and completes.
  auto e2 = Put(ticket, oid, 2, Part(data, 2));
  ASSERT_TRUE(e2.has_value());
  parts[1].etag = *e2;
  auto ok = lfs_->CompleteMultipart(ticket, oid, parts);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_TRUE(Linked(oid));
}

TEST_F(LfsMultipartTest, WrongEtagIsRefusedAndStoresNothing) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  std::string ticket = Batch(oid, 100).ticket.value_or("");
  auto parts = PutAll(ticket, oid, data);
  parts[1].etag = "\"" + Sha256::Of("other").Hex() + "\"";
  auto r = lfs_->CompleteMultipart(ticket, oid, parts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::BadRequest);
  EXPECT_FALSE(Linked(oid));
  EXPECT_EQ(blobs_.BlobCount(), 0u);
  EXPECT_EQ(blobs_.PendingWriters(), 0u);
}

TEST_F(LfsMultipartTest, WrongTotalDigestLeavesNothingAndDeletesParts) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  std::string ticket = Batch(oid, 100).ticket.value_or("");
  auto parts = PutAll(ticket, oid, Data('b'));  // same size, other bytes
  auto r = lfs_->CompleteMultipart(ticket, oid, parts);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::DigestInvalid);
  EXPECT_FALSE(Linked(oid));
  EXPECT_EQ(blobs_.BlobCount(), 0u);
  EXPECT_EQ(blobs_.PendingWriters(), 0u);
  EXPECT_EQ(FilesUnder(dir_ / "tmp" / "multipart"), 0u);
}

TEST_F(LfsMultipartTest, ResentPartReplacesTheEarlierOne) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  std::string ticket = Batch(oid, 100).ticket.value_or("");
  auto bad = Put(ticket, oid, 2, Part(Data('c'), 2));
  ASSERT_TRUE(bad.has_value());
  auto parts = PutAll(ticket, oid, data);  // part 2 again, with the right bytes
  EXPECT_NE(parts[1].etag, *bad);
  auto ok = lfs_->CompleteMultipart(ticket, oid, parts);
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_TRUE(Linked(oid));
}

TEST_F(LfsMultipartTest, PartsNeedAnUploadTicketForTheObject) {
  std::string data = Data();
  Sha256 oid = Sha256::Of(data);
  std::string ticket = Batch(oid, 100).ticket.value_or("");
  auto r = Put(ticket, Sha256::Of("other"), 1, Part(data, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Forbidden);
  r = Put("not-a-ticket", oid, 1, Part(data, 1));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Forbidden);
}

}  // namespace
}  // namespace hangar::services
