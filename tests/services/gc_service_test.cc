// GcService (issue #3 point 8): referenced, unreferenced and in-flight blobs, uploads and
// temporaries; only what is unreferenced and older than the grace goes. Ages are made
// with utimensat, never by sleeping.

#include "services/maintenance/gc_service.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/util.h"
#include "db/sql/sql_stores.h"
#include "fixtures.h"
#include "git/repo_reader.h"
#include "services/auth/account_service.h"
#include "services/repo/repo_service.h"
#include "services/uploads/upload_service.h"
#include "storage/local/local_blob_store.h"

namespace hangar::services {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kDay = 86400;
constexpr int64_t kGrace = kDay;

// Sets the mtime (and atime) of `path` and everything below it to `when` (unix seconds).
void Age(const fs::path& path, int64_t when) {
  timespec times[2] = {{when, 0}, {when, 0}};
  std::error_code ec;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
      ASSERT_EQ(::utimensat(AT_FDCWD, e.path().c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
    }
  }
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0) << path;
}

void WriteFile(const fs::path& path, const std::string& data) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << data;
}

class GcServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = fs::path(::testing::TempDir()) / "hangar-gc-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    auto s = db::OpenSqliteStores(dir_ / "hangar.db");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    stores_ = std::move(*s);
    blobs_ = std::make_unique<storage::LocalBlobStore>(dir_);
    access_ = std::make_unique<AccessPolicy>(*stores_.users);
    accounts_ = std::make_unique<AccountService>(*stores_.users, *access_);
    repos_ = std::make_unique<RepoService>(*stores_.repos, *access_, reader_, dir_ / "repos");
    now_ = NowUnix();
    UploadServiceOptions uo;
    uo.expiry = std::chrono::seconds(kDay);
    uo.now = [this] { return upload_clock_; };
    uploads_ = std::make_unique<UploadService>(*repos_, *stores_.repos, *stores_.uploads,
                                               *stores_.lfs, *blobs_, uo);
    GcOptions go;
    go.grace = std::chrono::seconds(kGrace);
    go.now = [this] { return now_; };
    gc_ = std::make_unique<GcService>(*blobs_, *stores_.lfs, *uploads_, go);

    alice_ = testing::MakeUser(*accounts_, "alice");
    repo_id_ = testing::MakeRepoRow(*stores_.repos, "alice", "model");
    repo_ = *RepoId::Parse(RepoType::Model, "alice", "model");
  }
  void TearDown() override {
    gc_.reset();
    uploads_.reset();
    repos_.reset();
    accounts_.reset();
    access_.reset();
    blobs_.reset();
    stores_ = db::Stores{};
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Stores `data` as a blob last written at `when`; returns its id.
  Sha256 PutBlob(const std::string& data, int64_t when) {
    Sha256 id = Sha256::Of(data);
    auto w = blobs_->Create(id, data.size());
    EXPECT_TRUE(w.has_value());
    EXPECT_TRUE((*w)->Append(std::span<const char>(data.data(), data.size())).has_value());
    EXPECT_TRUE((*w)->Commit().has_value());
    Age(blobs_->BlobPath(id), when);
    return id;
  }
  bool HasBlob(const Sha256& id) { return blobs_->Stat(id).has_value(); }
  bool HasStaging(const std::string& handle) { return blobs_->ListParts(handle).has_value(); }
  fs::path StagingDir(const std::string& handle) { return dir_ / "tmp" / "uploads" / handle; }

  // Starts an upload of `data` at upload-clock time `when` and stores its only part.
  db::UploadRecord StartUpload(const std::string& data, int64_t when) {
    upload_clock_ = when;
    auto start = uploads_->Create(alice_, repo_, Sha256::Of(data),
                                  static_cast<int64_t>(data.size()), std::nullopt);
    EXPECT_TRUE(start.has_value()) << start.error().message;
    StringSource body(data);
    auto part =
        uploads_->PutPart(alice_, start->upload.record.id, 1, body, data.size(), std::nullopt);
    EXPECT_TRUE(part.has_value()) << part.error().message;
    upload_clock_ = now_;
    return start->upload.record;
  }

  fs::path dir_;
  db::Stores stores_;
  git::RepoReader reader_;
  std::unique_ptr<storage::LocalBlobStore> blobs_;
  std::unique_ptr<AccessPolicy> access_;
  std::unique_ptr<AccountService> accounts_;
  std::unique_ptr<RepoService> repos_;
  std::unique_ptr<UploadService> uploads_;
  std::unique_ptr<GcService> gc_;
  Principal alice_;
  RepoId repo_;
  int64_t repo_id_ = 0;
  int64_t now_ = 0;
  int64_t upload_clock_ = 0;
};

TEST_F(GcServiceTest, RemovesOnlyWhatIsUnreferencedAndPastTheGrace) {
  const int64_t old = now_ - 3 * kDay;
  // Blobs: linked and old; unlinked and old; unlinked but fresh (an upload that has not
  // linked it yet); unlinked, just inside the grace.
  Sha256 referenced = PutBlob("referenced bytes", old);
  ASSERT_TRUE(stores_.lfs->Link(repo_id_, referenced, 16).has_value());
  Sha256 garbage = PutBlob("garbage bytes", old);
  Sha256 in_flight = PutBlob("in-flight bytes", now_);
  Sha256 almost = PutBlob("almost old enough", now_ - kGrace + 60);

  // Uploads: one open, its staging area old (only its row protects it); one expired.
  db::UploadRecord open = StartUpload("open upload", now_);
  Age(StagingDir(open.store_handle), old);
  db::UploadRecord expired = StartUpload("expired upload", now_ - 2 * kDay);
  // Staging areas without an upload row: abandoned long ago, and just begun.
  std::string orphan = *blobs_->BeginParts(RandomHex(16), 10, 5 << 20);
  Age(StagingDir(orphan), old);
  std::string starting = *blobs_->BeginParts(RandomHex(16), 10, 5 << 20);

  // Temporaries: a stray write and a live one.
  fs::path stray = dir_ / "tmp" / (Sha256::Of("x").Hex() + ".0123456789abcdef");
  fs::path live = dir_ / "tmp" / (Sha256::Of("y").Hex() + ".fedcba9876543210");
  WriteFile(stray, "half a blob");
  WriteFile(live, "a blob being written");
  Age(stray, old);

  // Dry run: the report names everything that would go, and nothing goes.
  auto dry = gc_->Run(true);
  ASSERT_TRUE(dry.has_value()) << dry.error().message;
  EXPECT_TRUE(dry->dry_run);
  EXPECT_EQ(dry->blobs.count, 1u);
  EXPECT_EQ(dry->blobs.bytes, 13u);
  EXPECT_EQ(dry->blobs_referenced, 1u);
  EXPECT_EQ(dry->blobs_in_grace, 2u);
  EXPECT_EQ(dry->expired_uploads.count, 1u);
  EXPECT_EQ(dry->orphan_staging.count, 1u);
  EXPECT_EQ(dry->tmp_files.count, 1u);
  EXPECT_EQ(dry->tmp_files.bytes, 11u);
  auto listed = [&](const std::string& item) {
    return std::find(dry->items.begin(), dry->items.end(), item) != dry->items.end();
  };
  EXPECT_TRUE(listed("blob " + garbage.Hex() + " (13 bytes)"));
  EXPECT_TRUE(listed("staging " + orphan + " (0 bytes)"));
  EXPECT_TRUE(listed("tmp " + stray.filename().string() + " (11 bytes)"));
  EXPECT_TRUE(listed("uploads 1 expired"));
  EXPECT_EQ(dry->items.size(), 4u);
  EXPECT_TRUE(HasBlob(garbage));
  EXPECT_TRUE(HasStaging(orphan));
  EXPECT_TRUE(HasStaging(expired.store_handle));
  EXPECT_TRUE(stores_.uploads->Get(expired.id)->has_value());
  EXPECT_TRUE(fs::exists(stray));

  // The real run removes exactly those.
  auto run = gc_->Run(false);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_FALSE(run->dry_run);
  EXPECT_TRUE(run->items.empty());
  EXPECT_EQ(run->blobs.count, 1u);
  EXPECT_EQ(run->expired_uploads.count, 1u);
  EXPECT_EQ(run->orphan_staging.count, 1u);
  EXPECT_EQ(run->tmp_files.count, 1u);
  EXPECT_FALSE(HasBlob(garbage));
  EXPECT_TRUE(HasBlob(referenced));
  EXPECT_TRUE(HasBlob(in_flight));
  EXPECT_TRUE(HasBlob(almost));
  EXPECT_FALSE(stores_.uploads->Get(expired.id)->has_value());
  EXPECT_FALSE(HasStaging(expired.store_handle));
  EXPECT_FALSE(HasStaging(orphan));
  EXPECT_TRUE(HasStaging(starting));
  auto still_open = uploads_->Get(alice_, open.id);
  ASSERT_TRUE(still_open.has_value()) << still_open.error().message;
  EXPECT_EQ(still_open->parts.size(), 1u);
  EXPECT_FALSE(fs::exists(stray));
  EXPECT_TRUE(fs::exists(live));

  // A second run finds nothing more.
  auto again = gc_->Run(false);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->blobs.count + again->expired_uploads.count + again->orphan_staging.count +
                again->tmp_files.count,
            0u);
  EXPECT_EQ(again->blobs_referenced, 1u);
}

TEST_F(GcServiceTest, UnlinkingMakesABlobCollectableAndGraceCanBeOverridden) {
  Sha256 id = PutBlob("was in a deleted repo", now_);
  ASSERT_TRUE(stores_.lfs->Link(repo_id_, id, 21).has_value());
  auto kept = gc_->Run(false, std::chrono::seconds(0));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->blobs_referenced, 1u);
  EXPECT_TRUE(HasBlob(id));

  ASSERT_TRUE(stores_.lfs->Unlink(repo_id_, id).has_value());
  auto inside = gc_->Run(false);  // default grace: the fresh blob stays
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->blobs_in_grace, 1u);
  EXPECT_TRUE(HasBlob(id));

  auto zero = gc_->Run(false, std::chrono::seconds(0));
  ASSERT_TRUE(zero.has_value());
  EXPECT_EQ(zero->grace.count(), 0);
  EXPECT_EQ(zero->blobs.count, 1u);
  EXPECT_FALSE(HasBlob(id));
}

TEST_F(GcServiceTest, DryRunListIsCapped) {
  GcOptions go;
  go.grace = std::chrono::seconds(kGrace);
  go.max_listed = 2;
  go.now = [this] { return now_; };
  GcService gc(*blobs_, *stores_.lfs, *uploads_, go);
  for (int i = 0; i < 5; ++i) PutBlob("blob " + std::to_string(i), now_ - 2 * kDay);
  auto dry = gc.Run(true);
  ASSERT_TRUE(dry.has_value());
  EXPECT_EQ(dry->blobs.count, 5u);
  EXPECT_EQ(dry->items.size(), 2u);
  EXPECT_EQ(dry->unlisted, 3u);
  EXPECT_NE(dry->Summary().find("would remove 5 unreferenced blobs"), std::string::npos)
      << dry->Summary();
}

TEST_F(GcServiceTest, StopTokenEndsARunEarly) {
  for (int i = 0; i < 3; ++i) PutBlob("blob " + std::to_string(i), now_ - 2 * kDay);
  std::stop_source stop;
  stop.request_stop();
  auto r = gc_->Run(false, std::nullopt, stop.get_token());
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(r->blobs.count, 0u);
}

}  // namespace
}  // namespace hangar::services
