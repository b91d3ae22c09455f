// What only the local store promises: its disk layout, tmp/ handling, readiness.

#include "storage/local/local_blob_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <future>
#include <thread>

#include "test_util.h"

namespace hangar::storage {
namespace {

using testing_util::AsBytes;
using testing_util::ListFiles;
using testing_util::TempDir;

TEST(LocalBlobStore, CreatesItsDirectories) {
  TempDir dir;
  LocalBlobStore store(dir.path() / "data");
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "data" / "blobs" / "sha256"));
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "data" / "tmp"));
  EXPECT_TRUE(store.CheckUsable().has_value());
}

// The files of <root>/tmp/ other than the multipart staging directory uploads/.
std::vector<std::string> TmpFiles(const std::filesystem::path& root) {
  auto files = ListFiles(root / "tmp");
  std::erase(files, "uploads");
  return files;
}

TEST(LocalBlobStore, LayoutIsTwoLevelFanOut) {
  TempDir dir;
  LocalBlobStore store(dir.path());
  Sha256 id = Sha256::Of("layout");
  std::string hex = id.Hex();
  auto w = store.Create(id, 6).value();

  // In flight: one file in tmp/, named after the blob, nothing under blobs/.
  ASSERT_TRUE(w->Append(AsBytes("layout")).has_value());
  auto tmp = TmpFiles(dir.path());
  ASSERT_EQ(tmp.size(), 1u);
  EXPECT_EQ(tmp[0].substr(0, 65), hex + ".");
  EXPECT_TRUE(ListFiles(dir.path() / "blobs" / "sha256").empty());

  ASSERT_TRUE(w->Commit().has_value());
  auto expected = dir.path() / "blobs" / "sha256" / hex.substr(0, 2) / hex.substr(2, 2) / hex;
  EXPECT_EQ(store.BlobPath(id), expected);
  struct stat st;
  ASSERT_EQ(::stat(expected.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 6);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_NE(st.st_mode & S_IRUSR, 0u);
  EXPECT_EQ(st.st_mode & S_IWOTH, 0u);
  EXPECT_TRUE(TmpFiles(dir.path()).empty());
}

TEST(LocalBlobStore, FilesLeftInTmpAreNotBlobs) {
  TempDir dir;
  LocalBlobStore store(dir.path());
  Sha256 id = Sha256::Of("crashed");
  // What a crash mid-upload leaves: a complete-looking temporary.
  std::ofstream(dir.path() / "tmp" / (id.Hex() + ".0123456789abcdef")) << "crashed";
  EXPECT_EQ(store.Stat(id).error().code, ErrorCode::BlobUnknown);
}

TEST(LocalBlobStore, SweepTemporariesRemovesOnlyOldFiles) {
  TempDir dir;
  LocalBlobStore store(dir.path());
  auto stale = dir.path() / "tmp" / "stale.part";
  std::ofstream(stale) << "left by a crash";
  std::filesystem::last_write_time(
      stale, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));

  Sha256 id = Sha256::Of("live");
  auto live = store.Create(id, 4).value();
  ASSERT_TRUE(live->Append(AsBytes("li")).has_value());
  // A staging area is not a temporary, however old (ListStaleParts has those).
  std::string staging = store.BeginParts(std::string(32, 'a'), 10, 5).value();
  std::filesystem::last_write_time(
      dir.path() / "tmp" / "uploads" / staging,
      std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));

  auto dry = store.SweepTemporaries(std::chrono::hours(1), true).value();
  ASSERT_EQ(dry.size(), 1u);
  EXPECT_EQ(dry[0].name, "stale.part");
  EXPECT_EQ(dry[0].size, 15u);
  EXPECT_TRUE(std::filesystem::exists(stale));  // a dry run removes nothing

  auto swept = store.SweepTemporaries(std::chrono::hours(1), false).value();
  ASSERT_EQ(swept.size(), 1u);
  EXPECT_EQ(swept[0].name, "stale.part");
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_EQ(TmpFiles(dir.path()).size(), 1u);  // the live write's temporary
  EXPECT_TRUE(store.ListParts(staging).has_value());

  ASSERT_TRUE(live->Append(AsBytes("ve")).has_value());
  ASSERT_TRUE(live->Commit().has_value());
  EXPECT_EQ(store.Stat(id).value(), 4u);
  EXPECT_TRUE(store.SweepTemporaries(std::chrono::hours(1), false).value().empty());
}

TEST(LocalBlobStore, UnusableRootIsReported) {
  TempDir dir;
  auto not_a_dir = dir.path() / "file";
  std::ofstream(not_a_dir) << "x";
  LocalBlobStore store(not_a_dir);
  auto r = store.CheckUsable();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Unavailable);
  EXPECT_NE(r.error().message.find(not_a_dir.string()), std::string::npos);
  auto w = store.Create(Sha256::Of("x"), std::nullopt);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code, ErrorCode::Internal);
}

TEST(LocalBlobStore, ReopeningAStoreSeesItsBlobs) {
  TempDir dir;
  Sha256 id = Sha256::Of("durable");
  {
    LocalBlobStore store(dir.path());
    auto w = store.Create(id, std::nullopt).value();
    ASSERT_TRUE(w->Append(AsBytes("durable")).has_value());
    ASSERT_TRUE(w->Commit().has_value());
  }
  LocalBlobStore again(dir.path());
  EXPECT_EQ(again.Stat(id).value(), 7u);
}

// A part body that hands out its bytes only once `go` is set.
class GatedSource final : public ByteSource {
 public:
  GatedSource(std::string bytes, std::shared_future<void> go)
      : bytes_(std::move(bytes)), go_(std::move(go)) {}
  Result<size_t> Read(std::span<char> buf) override {
    go_.wait();
    size_t n = std::min(buf.size(), bytes_.size() - pos_);
    std::copy_n(bytes_.data() + pos_, n, buf.data());
    pos_ += n;
    return n;
  }

 private:
  std::string bytes_;
  size_t pos_ = 0;
  std::shared_future<void> go_;
};

// A part still being written when the upload is completed must never write into the
// published blob (adversarial finding): the completion waits for it, then checks the
// whole digest over what it wrote.
TEST(LocalBlobStore, CompletionWaitsForPartsInFlightAndVerifiesWhatTheyWrote) {
  TempDir dir;
  LocalBlobStore store(dir.path());
  const std::string good(1 << 20, 'g');
  const Sha256 id = Sha256::Of(good);
  std::string key = std::string(32, 'a');
  ASSERT_TRUE(store.BeginParts(key, good.size(), 1 << 20).has_value());
  StringSource first(good);
  ASSERT_TRUE(store.PutPart(key, 1, 0, good.size(), first, std::nullopt).has_value());

  std::promise<void> go;
  GatedSource late(std::string(1 << 20, 'z'), go.get_future().share());
  auto writer = std::async(std::launch::async, [&] {
    return store.PutPart(key, 1, 0, good.size(), late, std::nullopt);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the writer holds its lock
  auto completion =
      std::async(std::launch::async, [&] { return store.CompleteParts(key, id, good.size()); });
  EXPECT_EQ(completion.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "the completion must wait for the part being written";
  go.set_value();
  EXPECT_TRUE(writer.get().has_value());
  auto done = completion.get();
  ASSERT_FALSE(done.has_value());
  EXPECT_EQ(done.error().code, ErrorCode::DigestInvalid);
  EXPECT_EQ(store.Stat(id).error().code, ErrorCode::BlobUnknown);

  // And once published, a part for the finished upload is refused, the blob untouched.
  ASSERT_TRUE(store.BeginParts(key, good.size(), 1 << 20).has_value());
  StringSource again(good);
  ASSERT_TRUE(store.PutPart(key, 1, 0, good.size(), again, std::nullopt).has_value());
  ASSERT_TRUE(store.CompleteParts(key, id, good.size()).has_value());
  StringSource after(std::string(1 << 20, 'z'));
  EXPECT_EQ(store.PutPart(key, 1, 0, good.size(), after, std::nullopt).error().code,
            ErrorCode::NotFound);
  auto src = store.Open(id, {}).value();
  EXPECT_TRUE(ReadAll(*src, 2 << 20).value() == good);
}

}  // namespace
}  // namespace hangar::storage
