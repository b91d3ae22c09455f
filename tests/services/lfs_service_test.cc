#include "services/lfs/lfs_service.h"
#include "services/uploads/upload_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "services/auth/account_service.h"
#include "services/repo/repo_service.h"
#include "storage/memory/memory_blob_store.h"

namespace hangar::services {
namespace {

constexpr char kKey[] = "test-secret-key-of-reasonable-length";
constexpr char kData[] = "the real content of a large file";

// Yields `data`, then fails as a request body cut short by the client does.
class CutShortSource : public ByteSource {
 public:
  explicit CutShortSource(std::string data) : data_(std::move(data)) {}
  Result<size_t> Read(std::span<char> buf) override {
    if (done_) return MakeError(ErrorCode::BadRequest, "request body cut short");
    size_t n = std::min(buf.size(), data_.size());
    std::copy_n(data_.data(), n, buf.data());
    done_ = true;
    return n;
  }

 private:
  std::string data_;
  bool done_ = false;
};

class LfsServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::path(::testing::TempDir()) / "hangar-lfs-XXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = db::OpenSqliteStores(dir_ / "hangar.db");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
    access_ = std::make_unique<AccessPolicy>(*stores_.users);
    accounts_ = std::make_unique<AccountService>(*stores_.users, *access_);
    repos_ = std::make_unique<RepoService>(*stores_.repos, *access_, reader_, dir_ / "repos");
    LfsServiceOptions opts;
    opts.ticket_ttl = std::chrono::seconds(600);
    opts.max_objects = 3;
    opts.max_object_bytes = 1000;
    opts.now = [this] { return now_; };
    uploads_ = std::make_unique<UploadService>(*repos_, *stores_.repos, *stores_.uploads,
                                               *stores_.lfs, blobs_, UploadServiceOptions{});
    lfs_ = std::make_unique<LfsService>(*repos_, *stores_.lfs, blobs_, *uploads_, kKey, opts);

    alice_ = User("alice", TokenRole::Write);
    alice_read_ = alice_;
    alice_read_.role = TokenRole::Read;
    bob_ = User("bob", TokenRole::Write);
    private_id_ = Repo("alice", "private-model", true);
    public_id_ = Repo("alice", "public-model", false);
    bobs_id_ = Repo("bob", "bobs-model", true);
  }
  void TearDown() override {
    lfs_.reset();
    uploads_.reset();
    repos_.reset();
    accounts_.reset();
    access_.reset();
    stores_ = db::Stores{};
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  Principal User(const std::string& name, TokenRole role) {
    return testing::MakeUser(*accounts_, name, role);
  }
  int64_t Repo(const std::string& ns, const std::string& name, bool is_private) {
    return testing::MakeRepoRow(*stores_.repos, ns, name, is_private);
  }
  static RepoId Id(const std::string& ns, const std::string& name) {
    return RepoId{RepoType::Model, ns, name};
  }
  static LfsBatchRequest Req(LfsOperation op, std::vector<LfsBatchObject> objects) {
    LfsBatchRequest r;
    r.operation = op;
    r.objects = std::move(objects);
    return r;
  }
  static LfsBatchObject Obj(std::string_view data) {
    return LfsBatchObject{Sha256::Of(data).Hex(), static_cast<int64_t>(data.size())};
  }
  // Batch-uploads `data` to alice's private repo and returns the upload ticket.
  std::string UploadTicket(std::string_view data,
                           const RepoId& repo = Id("alice", "private-model")) {
    auto b = lfs_->Batch(alice_, repo, Req(LfsOperation::Upload, {Obj(data)}));
    EXPECT_TRUE(b.has_value()) << b.error().message;
    EXPECT_TRUE(b->objects.at(0).ticket.has_value());
    return b->objects.at(0).ticket.value_or("");
  }
  Result<void> Put(const std::string& ticket, std::string_view oid_of, std::string body,
                   std::optional<uint64_t> content_length = std::nullopt) {
    StringSource src(std::move(body));
    return lfs_->Upload(ticket, Sha256::Of(oid_of), src, content_length);
  }
  void ExpectNothingStored(const Sha256& oid) {
    EXPECT_EQ(blobs_.BlobCount(), 0u);
    EXPECT_EQ(blobs_.PendingWriters(), 0u);
    auto linked = stores_.lfs->IsLinked(private_id_, oid);
    ASSERT_TRUE(linked.has_value());
    EXPECT_FALSE(linked->has_value());
  }

  std::filesystem::path dir_;
  db::Stores stores_;
  git::RepoReader reader_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<RepoService> repos_;
  storage::MemoryBlobStore blobs_;
  std::unique_ptr<UploadService> uploads_;
  std::unique_ptr<LfsService> lfs_;
  int64_t now_ = 1'700'000'000;
  Principal alice_, alice_read_, bob_;
  int64_t private_id_ = 0, public_id_ = 0, bobs_id_ = 0;
};

TEST_F(LfsServiceTest, UploadBatchHandsOutTicketAndUploadLinksTheObject) {
  auto b =
      lfs_->Batch(alice_, Id("alice", "private-model"), Req(LfsOperation::Upload, {Obj(kData)}));
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->transfer, "basic");
  EXPECT_EQ(b->expires_in, 600);
  ASSERT_EQ(b->objects.size(), 1u);
  EXPECT_EQ(b->objects[0].oid, Sha256::Of(kData).Hex());
  EXPECT_EQ(b->objects[0].size, static_cast<int64_t>(strlen(kData)));
  EXPECT_FALSE(b->objects[0].error.has_value());
  ASSERT_TRUE(b->objects[0].ticket.has_value());

  // Verify before the upload: not there yet.
  auto early = lfs_->VerifyWithTicket(*b->objects[0].ticket, Sha256::Of(kData), strlen(kData));
  ASSERT_FALSE(early.has_value());
  EXPECT_EQ(early.error().code, ErrorCode::NotFound);

  auto up = Put(*b->objects[0].ticket, kData, kData, strlen(kData));
  ASSERT_TRUE(up.has_value()) << up.error().message;
  EXPECT_EQ(blobs_.BlobCount(), 1u);
  auto size = lfs_->LinkedSize(private_id_, Sha256::Of(kData));
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(size->value_or(0), strlen(kData));

  EXPECT_TRUE(
      lfs_->VerifyWithTicket(*b->objects[0].ticket, Sha256::Of(kData), strlen(kData)).has_value());
  EXPECT_TRUE(lfs_->Verify(alice_, Id("alice", "private-model"), Sha256::Of(kData), strlen(kData))
                  .has_value());
  auto wrong_size = lfs_->Verify(alice_, Id("alice", "private-model"), Sha256::Of(kData), 3);
  ASSERT_FALSE(wrong_size.has_value());
  EXPECT_EQ(wrong_size.error().code, ErrorCode::Unprocessable);

  // Asked again: already present, so no ticket (no actions) and no error.
  auto again =
      lfs_->Batch(alice_, Id("alice", "private-model"), Req(LfsOperation::Upload, {Obj(kData)}));
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->objects[0].ticket.has_value());
  EXPECT_FALSE(again->objects[0].error.has_value());
}

TEST_F(LfsServiceTest, WrongBytesAreDigestInvalidAndLeaveNothing) {
  std::string other(strlen(kData), 'x');
  auto up = Put(UploadTicket(kData), kData, other, other.size());
  ASSERT_FALSE(up.has_value());
  EXPECT_EQ(up.error().code, ErrorCode::DigestInvalid);
  ExpectNothingStored(Sha256::Of(kData));
}

TEST_F(LfsServiceTest, WrongSizeIsSizeInvalidAndLeavesNothing) {
  std::string ticket = UploadTicket(kData);
  // Announced by Content-Length: refused before reading.
  auto early = Put(ticket, kData, std::string(kData) + "!", strlen(kData) + 1);
  ASSERT_FALSE(early.has_value());
  EXPECT_EQ(early.error().code, ErrorCode::SizeInvalid);
  // Chunked (no Content-Length): too long, then too short.
  auto longer = Put(ticket, kData, std::string(kData) + "!");
  ASSERT_FALSE(longer.has_value());
  EXPECT_EQ(longer.error().code, ErrorCode::SizeInvalid);
  auto shorter = Put(ticket, kData, std::string(kData).substr(1));
  ASSERT_FALSE(shorter.has_value());
  EXPECT_EQ(shorter.error().code, ErrorCode::SizeInvalid);
  ExpectNothingStored(Sha256::Of(kData));
}

TEST_F(LfsServiceTest, CutShortBodyLeavesNothing) {
  std::string ticket = UploadTicket(kData);
  CutShortSource src(std::string(kData).substr(0, 10));
  auto up = lfs_->Upload(ticket, Sha256::Of(kData), src, strlen(kData));
  ASSERT_FALSE(up.has_value());
  EXPECT_EQ(up.error().code, ErrorCode::BadRequest);
  ExpectNothingStored(Sha256::Of(kData));
}

TEST_F(LfsServiceTest, TicketsAreBoundToOidOperationAndTime) {
  std::string ticket = UploadTicket(kData);
  auto other_oid = Put(ticket, "something else", "something else");
  ASSERT_FALSE(other_oid.has_value());
  EXPECT_EQ(other_oid.error().code, ErrorCode::Forbidden);

  auto tampered = ticket;
  tampered[5] = tampered[5] == 'A' ? 'B' : 'A';
  auto bad = Put(tampered, kData, kData);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::Forbidden);  // never 401 on transfer URLs

  // An upload ticket does not download.
  auto dl = lfs_->Download(ticket, Sha256::Of(kData), nullptr);
  ASSERT_FALSE(dl.has_value());
  EXPECT_EQ(dl.error().code, ErrorCode::Forbidden);

  now_ += 600;  // the TTL has passed
  auto expired = Put(ticket, kData, kData);
  ASSERT_FALSE(expired.has_value());
  EXPECT_EQ(expired.error().code, ErrorCode::Forbidden);
  ExpectNothingStored(Sha256::Of(kData));
}

TEST_F(LfsServiceTest, DownloadServesLinkedObjectsWithRanges) {
  ASSERT_TRUE(Put(UploadTicket(kData), kData, kData).has_value());
  auto b = lfs_->Batch(alice_, Id("alice", "private-model"),
                       Req(LfsOperation::Download, {Obj(kData), Obj("never uploaded")}));
  ASSERT_TRUE(b.has_value()) << b.error().message;
  ASSERT_EQ(b->objects.size(), 2u);
  ASSERT_TRUE(b->objects[0].ticket.has_value());
  ASSERT_TRUE(b->objects[1].error.has_value());
  EXPECT_EQ(b->objects[1].error->code, 404);
  EXPECT_EQ(b->objects[1].error->message, "Object does not exist");

  auto whole = lfs_->Download(*b->objects[0].ticket, Sha256::Of(kData), nullptr);
  ASSERT_TRUE(whole.has_value()) << whole.error().message;
  EXPECT_EQ(whole->object_size, strlen(kData));
  EXPECT_EQ(ReadAll(*whole->body, 1 << 20).value(), kData);

  auto part = lfs_->Download(*b->objects[0].ticket, Sha256::Of(kData), [](uint64_t size) {
    return Result<storage::ByteRange>(storage::ByteRange::Window(4, 4));
  });
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->offset, 4u);
  EXPECT_EQ(part->length, 4u);
  EXPECT_EQ(ReadAll(*part->body, 100).value(), "real");

  auto refused = lfs_->Download(*b->objects[0].ticket, Sha256::Of(kData), [](uint64_t) {
    return Result<storage::ByteRange>(MakeError(ErrorCode::RangeNotSatisfiable, "no"));
  });
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::RangeNotSatisfiable);

  // Unlinked after the batch (e.g. repo cleaned up): the ticket no longer serves it.
  ASSERT_TRUE(stores_.lfs->Unlink(private_id_, Sha256::Of(kData)).has_value());
  auto gone = lfs_->Download(*b->objects[0].ticket, Sha256::Of(kData), nullptr);
  ASSERT_FALSE(gone.has_value());
  EXPECT_EQ(gone.error().code, ErrorCode::NotFound);
}

TEST_F(LfsServiceTest, ObjectsOfOtherReposAreNeitherRevealedNorServed) {
  ASSERT_TRUE(Put(UploadTicket(kData), kData, kData).has_value());  // alice's repo only
  auto dl = lfs_->Batch(bob_, Id("bob", "bobs-model"), Req(LfsOperation::Download, {Obj(kData)}));
  ASSERT_TRUE(dl.has_value());
  ASSERT_TRUE(dl->objects[0].error.has_value());
  EXPECT_EQ(dl->objects[0].error->code, 404);
  // Upload asks for the bytes even though the store has them.
  auto up = lfs_->Batch(bob_, Id("bob", "bobs-model"), Req(LfsOperation::Upload, {Obj(kData)}));
  ASSERT_TRUE(up.has_value());
  ASSERT_TRUE(up->objects[0].ticket.has_value());
  // And the upload, identical bytes, links it to bob's repo too.
  ASSERT_TRUE(Put(*up->objects[0].ticket, kData, kData).has_value());
  EXPECT_EQ(blobs_.BlobCount(), 1u);
  EXPECT_EQ(lfs_->LinkedSize(bobs_id_, Sha256::Of(kData))->value_or(0), strlen(kData));
}

TEST_F(LfsServiceTest, PerObjectValidation) {
  auto b =
      lfs_->Batch(alice_, Id("alice", "private-model"),
                  Req(LfsOperation::Upload,
                      {{"ABCDEF", 1}, {Sha256::Of("a").Hex(), -1}, {Sha256::Of("b").Hex(), 1001}}));
  ASSERT_TRUE(b.has_value()) << b.error().message;
  ASSERT_EQ(b->objects.size(), 3u);
  for (const auto& o : b->objects) {
    ASSERT_TRUE(o.error.has_value()) << o.oid;
    EXPECT_EQ(o.error->code, 422);
    EXPECT_FALSE(o.ticket.has_value());
  }
  EXPECT_EQ(b->objects[0].oid, "ABCDEF");  // echoed as sent
  EXPECT_EQ(b->objects[1].size, -1);
}

TEST_F(LfsServiceTest, WholeRequestValidation) {
  auto repo = Id("alice", "private-model");
  auto empty = lfs_->Batch(alice_, repo, Req(LfsOperation::Upload, {}));
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code, ErrorCode::Unprocessable);

  auto many = lfs_->Batch(alice_, repo,
                          Req(LfsOperation::Upload, {Obj("1"), Obj("2"), Obj("3"), Obj("4")}));
  ASSERT_FALSE(many.has_value());
  EXPECT_EQ(many.error().code, ErrorCode::PayloadTooLarge);

  auto req = Req(LfsOperation::Upload, {Obj("1")});
  req.hash_algo = "sha512";
  auto algo = lfs_->Batch(alice_, repo, req);
  ASSERT_FALSE(algo.has_value());
  EXPECT_EQ(algo.error().code, ErrorCode::Unprocessable);
  for (const char* ok : {"sha256", "sha_256"}) {
    req.hash_algo = ok;
    EXPECT_TRUE(lfs_->Batch(alice_, repo, req).has_value()) << ok;
  }
}

TEST_F(LfsServiceTest, AccessRules) {
  auto code = [&](const Principal& who, const RepoId& repo, LfsOperation op) {
    auto r = lfs_->Batch(who, repo, Req(op, {Obj(kData)}));
    return r.has_value() ? std::optional<ErrorCode>() : r.error().code;
  };
  using Op = LfsOperation;
  Principal anon = Principal::Anonymous();
  auto priv = Id("alice", "private-model");
  auto pub = Id("alice", "public-model");
  auto missing = Id("alice", "no-such-model");
  EXPECT_EQ(code(anon, priv, Op::Download), ErrorCode::Unauthorized);  // git-lfs then logs in
  EXPECT_EQ(code(anon, missing, Op::Download), ErrorCode::Unauthorized);
  EXPECT_EQ(code(anon, pub, Op::Download), std::nullopt);
  EXPECT_EQ(code(anon, pub, Op::Upload), ErrorCode::Unauthorized);
  EXPECT_EQ(code(bob_, priv, Op::Download), ErrorCode::RepoNotFound);
  EXPECT_EQ(code(bob_, missing, Op::Upload), ErrorCode::RepoNotFound);
  EXPECT_EQ(code(bob_, pub, Op::Download), std::nullopt);
  EXPECT_EQ(code(bob_, pub, Op::Upload), ErrorCode::Forbidden);
  EXPECT_EQ(code(alice_read_, priv, Op::Download), std::nullopt);
  EXPECT_EQ(code(alice_read_, priv, Op::Upload), ErrorCode::Forbidden);
  EXPECT_EQ(code(alice_, priv, Op::Upload), std::nullopt);

  auto verify = lfs_->Verify(bob_, priv, Sha256::Of(kData), 1);
  ASSERT_FALSE(verify.has_value());
  EXPECT_EQ(verify.error().code, ErrorCode::RepoNotFound);
}

}  // namespace
}  // namespace hangar::services
