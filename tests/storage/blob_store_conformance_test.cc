// One suite, run on every BlobStore implementation (STYLE.md §7).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "core/util.h"
#include "storage/blob_store.h"
#include "storage/local/local_blob_store.h"
#include "storage/memory/memory_blob_store.h"
#ifdef HANGAR_CONFORMANCE_S3
#include "s3_testing.h"
#endif
#include "test_util.h"

namespace hangar::storage {
namespace {

using testing_util::AsBytes;
using testing_util::ListFiles;
using testing_util::TempDir;

struct StoreFactory {
  std::string name;
  std::function<std::unique_ptr<BlobStore>(const std::filesystem::path& dir)> make;
  // Temporaries of unfinished writes still around: tmp/ files, pending memory writers.
  std::function<size_t(BlobStore& store, const std::filesystem::path& dir)> leftovers;
};

StoreFactory LocalFactory() {
  return {"Local",
          [](const std::filesystem::path& dir) { return std::make_unique<LocalBlobStore>(dir); },
          [](BlobStore&, const std::filesystem::path& dir) {
            size_t n = ListFiles(dir / "tmp" / "uploads").size();
            for (const auto& name : ListFiles(dir / "tmp")) n += name != "uploads";
            return n;
          }};
}

StoreFactory MemoryFactory() {
  return {"Memory",
          [](const std::filesystem::path&) { return std::make_unique<MemoryBlobStore>(); },
          [](BlobStore& store, const std::filesystem::path&) {
            return static_cast<MemoryBlobStore&>(store).PendingWriters() +
                   store.ListStaleParts(std::chrono::hours(-1)).value().size();
          }};
}

class BlobStoreConformance : public testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override { store_ = GetParam().make(dir_.path()); }
  size_t Leftovers() { return GetParam().leftovers(*store_, dir_.path()); }

  // Writes `content` as one blob in appends of `chunk` bytes; returns its Sha256.
  Sha256 Put(std::string_view content, size_t chunk = 4) {
    Sha256 id = Sha256::Of(content);
    auto w = store_->Create(id, content.size());
    EXPECT_TRUE(w.has_value());
    for (size_t i = 0; i < content.size(); i += chunk) {
      EXPECT_TRUE((*w)->Append(AsBytes(content.substr(i, chunk))).has_value());
    }
    auto r = (*w)->Commit();
    EXPECT_TRUE(r.has_value()) << r.error().message;
    return id;
  }

  // Everything `range` of `id` reads, or the error code.
  std::string Read(const Sha256& id, ByteRange range = {}) {
    auto src = store_->Open(id, range);
    if (!src) return "error:" + std::string(Describe(src.error().code).name);
    auto all = ReadAll(**src, 64 << 20);
    EXPECT_TRUE(all.has_value());
    return *all;
  }

  TempDir dir_;
  std::unique_ptr<BlobStore> store_;
};

TEST_P(BlobStoreConformance, WriteThenReadBack) {
  const std::string content = "hello world";
  Sha256 id = Sha256::Of(content);
  auto w = store_->Create(id, std::nullopt).value();
  ASSERT_TRUE(w->Append(AsBytes("hello ")).has_value());
  ASSERT_TRUE(w->Append(AsBytes("world")).has_value());
  EXPECT_EQ(w->BytesWritten(), 11u);
  ASSERT_TRUE(w->Commit().has_value());

  EXPECT_EQ(store_->Stat(id).value(), 11u);
  auto src = store_->Open(id, {}).value();
  EXPECT_EQ(src->Size(), 11u);
  EXPECT_EQ(ReadAll(*src, 100).value(), content);
  EXPECT_EQ(src->Size(), 0u);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, AdoptMakesALocalFileABlob) {
  auto write = [&](const std::string& name, std::string_view content) {
    std::string path = (dir_.path() / name).string();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
    return path;
  };
  std::string path = write("shard.parquet", "adopted bytes");
  auto sha = store_->Adopt(path, 13);
  ASSERT_TRUE(sha.has_value()) << sha.error().message;
  EXPECT_EQ(*sha, Sha256::Of("adopted bytes"));
  EXPECT_EQ(Read(*sha), "adopted bytes");
  EXPECT_FALSE(std::filesystem::exists(path));
  // Again, when the blob exists: the same blob, and the file is gone too.
  path = write("again.parquet", "adopted bytes");
  EXPECT_EQ(store_->Adopt(path, 13).value(), *sha);
  EXPECT_FALSE(std::filesystem::exists(path));
  // A size that does not match: refused, nothing published.
  path = write("short.parquet", "twelve bytes");
  EXPECT_EQ(store_->Adopt(path, 13).error().code, ErrorCode::SizeInvalid);
  EXPECT_EQ(Read(Sha256::Of("twelve bytes")), "error:BlobUnknown");
  EXPECT_EQ(store_->Adopt((dir_.path() / "none").string(), 1).error().code, ErrorCode::Internal);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, InvisibleUntilCommit) {
  Sha256 id = Sha256::Of("pending");
  auto w = store_->Create(id, 7).value();
  ASSERT_TRUE(w->Append(AsBytes("pending")).has_value());
  EXPECT_EQ(store_->Stat(id).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(store_->Open(id, {}).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(Leftovers(), 1u);
  ASSERT_TRUE(w->Commit().has_value());
  EXPECT_EQ(store_->Stat(id).value(), 7u);
}

TEST_P(BlobStoreConformance, RangeFromOffsetToEnd) {
  Sha256 id = Put("hello world");
  auto src = store_->Open(id, ByteRange::From(6)).value();
  EXPECT_EQ(src->Size(), 5u);
  EXPECT_EQ(ReadAll(*src, 100).value(), "world");
}

TEST_P(BlobStoreConformance, RangeWithOffsetAndLength) {
  Sha256 id = Put("hello world");
  EXPECT_EQ(Read(id, ByteRange::Window(2, 3)), "llo");
  EXPECT_EQ(Read(id, ByteRange::Window(0, 0)), "");
  EXPECT_EQ(Read(id, ByteRange::Window(10, 1)), "d");
}

TEST_P(BlobStoreConformance, RangeLengthIsClampedToTheEnd) {
  Sha256 id = Put("hello world");
  auto src = store_->Open(id, ByteRange::Window(6, 1000)).value();
  EXPECT_EQ(src->Size(), 5u);
  EXPECT_EQ(ReadAll(*src, 100).value(), "world");
}

TEST_P(BlobStoreConformance, RangePastTheEndIsNotSatisfiable) {
  Sha256 id = Put("hello world");
  EXPECT_EQ(Read(id, ByteRange::From(11)), "");  // at the end: empty, not an error
  auto r = store_->Open(id, ByteRange::From(12));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::RangeNotSatisfiable);
  EXPECT_NE(r.error().message.find("12"), std::string::npos) << r.error().message;
}

TEST_P(BlobStoreConformance, EmptyBlob) {
  Sha256 id = Sha256::Of("");
  auto w = store_->Create(id, 0).value();
  ASSERT_TRUE(w->Commit().has_value());
  EXPECT_EQ(store_->Stat(id).value(), 0u);
  auto src = store_->Open(id, {}).value();
  EXPECT_EQ(src->Size(), 0u);
  char buf[8];
  EXPECT_EQ(src->Read(buf).value(), 0u);
  EXPECT_EQ(store_->Open(id, ByteRange::From(1)).error().code, ErrorCode::RangeNotSatisfiable);
}

TEST_P(BlobStoreConformance, SmallReadBuffersSeeEveryByte) {
  Sha256 id = Put("0123456789abcdef");
  auto src = store_->Open(id, ByteRange::Window(1, 14)).value();
  std::string got;
  char buf[3];
  for (;;) {
    size_t n = src->Read(buf).value();
    if (n == 0) break;
    EXPECT_LE(n, sizeof buf);
    got.append(buf, n);
  }
  EXPECT_EQ(got, "123456789abcde");
}

TEST_P(BlobStoreConformance, WrongDigestIsRejectedAndLeavesNothing) {
  Sha256 expected = Sha256::Of("expected");
  auto w = store_->Create(expected, std::nullopt).value();
  ASSERT_TRUE(w->Append(AsBytes("other bytes")).has_value());
  auto r = w->Commit();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::DigestInvalid);
  EXPECT_NE(r.error().message.find(expected.Hex()), std::string::npos);
  EXPECT_NE(r.error().message.find(Sha256::Of("other bytes").Hex()), std::string::npos);
  EXPECT_EQ(store_->Stat(expected).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(store_->Stat(Sha256::Of("other bytes")).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(Leftovers(), 0u);
}

// CommitAs: the digest arrives only with the last byte (OCI uploads, oci.md §4).
TEST_P(BlobStoreConformance, CommitAsVerifiesTheDigestGivenAtTheEnd) {
  const std::string content = "pushed by an OCI client";
  Sha256 id = Sha256::Of(content);
  auto w = store_->Create(Sha256{}, std::nullopt).value();  // digest not known yet
  ASSERT_TRUE(w->Append(AsBytes(content)).has_value());
  auto r = w->CommitAs(id);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, id);
  EXPECT_EQ(Read(id), content);
  EXPECT_EQ(store_->Stat(Sha256{}).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(w->CommitAs(id).error().code, ErrorCode::Internal);  // a second call
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, CommitAsWrongDigestLeavesNothing) {
  Sha256 wrong = Sha256::Of("something else");
  auto w = store_->Create(Sha256{}, std::nullopt).value();
  ASSERT_TRUE(w->Append(AsBytes("actual bytes")).has_value());
  auto r = w->CommitAs(wrong);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::DigestInvalid);
  EXPECT_EQ(store_->Stat(wrong).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(store_->Stat(Sha256::Of("actual bytes")).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, CommitAsWithoutDigestPublishesUnderTheBytesSha256) {
  auto w = store_->Create(Sha256{}, std::nullopt).value();
  ASSERT_TRUE(w->Append(AsBytes("verified")).has_value());
  ASSERT_TRUE(w->Append(AsBytes(" elsewhere")).has_value());
  auto r = w->CommitAs(std::nullopt);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, Sha256::Of("verified elsewhere"));
  EXPECT_EQ(Read(*r), "verified elsewhere");
  // The empty blob too.
  auto e = store_->Create(Sha256{}, std::nullopt).value();
  EXPECT_EQ(e->CommitAs(std::nullopt).value(), Sha256::Of(""));
  EXPECT_EQ(store_->Stat(Sha256::Of("")).value(), 0u);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, ShortContentIsSizeInvalid) {
  Sha256 id = Sha256::Of("hello");
  auto w = store_->Create(id, 6).value();
  ASSERT_TRUE(w->Append(AsBytes("hello")).has_value());
  auto r = w->Commit();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::SizeInvalid);
  EXPECT_EQ(r.error().message, "received 5 bytes, expected 6");
  EXPECT_EQ(store_->Stat(id).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, AppendPastExpectedSizeFailsAtOnce) {
  Sha256 id = Sha256::Of("hello world");
  auto w = store_->Create(id, 5).value();
  ASSERT_TRUE(w->Append(AsBytes("hello")).has_value());
  auto r = w->Append(AsBytes(" world"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::SizeInvalid);
  EXPECT_EQ(Leftovers(), 0u);  // the failed writer already dropped its temporary
  EXPECT_EQ(w->Commit().error().code, ErrorCode::Internal);
  EXPECT_EQ(store_->Stat(id).error().code, ErrorCode::BlobUnknown);
}

TEST_P(BlobStoreConformance, AbortLeavesNothing) {
  Sha256 id = Sha256::Of("aborted");
  auto w = store_->Create(id, std::nullopt).value();
  ASSERT_TRUE(w->Append(AsBytes("aborted")).has_value());
  w->Abort();
  w->Abort();  // idempotent
  EXPECT_EQ(Leftovers(), 0u);
  EXPECT_EQ(w->Append(AsBytes("x")).error().code, ErrorCode::Internal);
  EXPECT_EQ(w->Commit().error().code, ErrorCode::Internal);
  EXPECT_EQ(store_->Stat(id).error().code, ErrorCode::BlobUnknown);
}

TEST_P(BlobStoreConformance, DestroyingAnUncommittedWriterLeavesNothing) {
  Sha256 id = Sha256::Of("dropped");
  {
    auto w = store_->Create(id, std::nullopt).value();
    ASSERT_TRUE(w->Append(AsBytes("dropped")).has_value());
    EXPECT_EQ(Leftovers(), 1u);
  }
  EXPECT_EQ(Leftovers(), 0u);
  EXPECT_EQ(store_->Stat(id).error().code, ErrorCode::BlobUnknown);
}

TEST_P(BlobStoreConformance, CommitAfterCommitFailsAndKeepsTheBlob) {
  Sha256 id = Put("once");
  auto w = store_->Create(id, 4).value();
  ASSERT_TRUE(w->Append(AsBytes("once")).has_value());
  ASSERT_TRUE(w->Commit().has_value());  // already there: still a success
  EXPECT_EQ(w->Commit().error().code, ErrorCode::Internal);
  EXPECT_EQ(w->Append(AsBytes("x")).error().code, ErrorCode::Internal);
  w.reset();  // destructor after a commit must not remove the blob
  EXPECT_EQ(Read(id), "once");
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, ConcurrentWritersOfTheSameBlobAllSucceed) {
  std::string content(300 * 1024, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 31 + i / 977);
  Sha256 id = Sha256::Of(content);

  // Two writers interleaved on one thread: both commit.
  auto a = store_->Create(id, content.size()).value();
  auto b = store_->Create(id, content.size()).value();
  for (size_t i = 0; i < content.size(); i += 10000) {
    ASSERT_TRUE(a->Append(AsBytes(std::string_view(content).substr(i, 10000))).has_value());
    ASSERT_TRUE(b->Append(AsBytes(std::string_view(content).substr(i, 10000))).has_value());
  }
  ASSERT_TRUE(b->Commit().has_value());
  ASSERT_TRUE(a->Commit().has_value());

  // Eight writers on eight threads, racing to publish another blob.
  std::string other = content + "!";
  Sha256 other_id = Sha256::Of(other);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto w = store_->Create(other_id, other.size());
      if (!w) return;
      size_t chunk = 1000 + 37 * t;
      for (size_t i = 0; i < other.size(); i += chunk) {
        if (!(*w)->Append(AsBytes(std::string_view(other).substr(i, chunk)))) return;
      }
      if ((*w)->Commit()) ++ok;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 8);
  EXPECT_EQ(Read(id), content);
  EXPECT_EQ(Read(other_id), other);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(BlobStoreConformance, UnknownBlob) {
  Sha256 id = Sha256::Of("never written");
  auto st = store_->Stat(id);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().code, ErrorCode::BlobUnknown);
  EXPECT_NE(st.error().message.find(id.Hex()), std::string::npos);
  EXPECT_EQ(store_->Open(id, {}).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(store_->Delete(id).error().code, ErrorCode::BlobUnknown);
}

TEST_P(BlobStoreConformance, DeleteRemovesButOpenReadersFinish) {
  Sha256 id = Put("to be deleted");
  auto src = store_->Open(id, {}).value();
  ASSERT_TRUE(store_->Delete(id).has_value());
  EXPECT_EQ(store_->Stat(id).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(store_->Delete(id).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(ReadAll(*src, 100).value(), "to be deleted");
  // And it can be written again.
  Put("to be deleted");
  EXPECT_EQ(Read(id), "to be deleted");
}

TEST_P(BlobStoreConformance, NoRedirectAndUsable) {
  Sha256 id = Put("x");
  // S3 presigns instead (s3_blob_store_test.cc fetches such a URL).
  if (GetParam().name != "S3") {
    EXPECT_EQ(store_->RedirectUrl(id, std::chrono::seconds(60)).value(), "");
  }
  EXPECT_TRUE(store_->CheckUsable().has_value());
}

// Content of the large test: byte i of a pattern whose period (a prime) is no power of 2,
// so misplaced chunks change the digest.
constexpr size_t kPatternPeriod = 1000003;
char PatternByte(uint64_t i) {
  uint64_t k = i % kPatternPeriod;
  return static_cast<char>((k * 2654435761u) >> 13);
}

TEST_P(BlobStoreConformance, SixtyFourMebibytesInSmallAppends) {
  constexpr uint64_t kSize = 64ull << 20;
  std::string pattern(kPatternPeriod + 9000, '\0');
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = PatternByte(i);
  Sha256Hasher hasher;
  for (uint64_t i = 0; i < kSize;) {
    size_t n = std::min<uint64_t>(kPatternPeriod - i % kPatternPeriod, kSize - i);
    hasher.Update(std::string_view(pattern).substr(i % kPatternPeriod, n));
    i += n;
  }
  Sha256 id = hasher.Finish();

  auto w = store_->Create(id, kSize).value();
  uint64_t written = 0;
  for (size_t step = 0; written < kSize; ++step) {
    size_t n = std::min<uint64_t>(1 + (step * 7919) % 8192, kSize - written);  // 1..8192
    ASSERT_TRUE(w->Append(AsBytes(std::string_view(pattern).substr(written % kPatternPeriod, n)))
                    .has_value());
    written += n;
  }
  EXPECT_EQ(w->BytesWritten(), kSize);
  auto r = w->Commit();
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(store_->Stat(id).value(), kSize);
  EXPECT_EQ(Leftovers(), 0u);

  // Read it all back through a 64 KiB buffer and hash it.
  auto src = store_->Open(id, {}).value();
  Sha256Hasher back;
  std::vector<char> buf(64 * 1024);
  uint64_t total = 0;
  for (;;) {
    size_t n = src->Read(buf).value();
    if (n == 0) break;
    back.Update(std::string_view(buf.data(), n));
    total += n;
  }
  EXPECT_EQ(total, kSize);
  EXPECT_EQ(back.Finish(), id);

  // A window in the middle holds the bytes that were written there.
  const uint64_t offset = kSize / 2 + 12345;
  auto mid = store_->Open(id, ByteRange::Window(offset, 5000)).value();
  std::string got = ReadAll(*mid, 10000).value();
  ASSERT_EQ(got.size(), 5000u);
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], PatternByte(offset + i)) << i;
}

// ---- Multipart writes (BlobStore::BeginParts .. CompleteParts) ----
// Parts are 5 MiB, S3's smallest allowed part (but the last).

constexpr uint64_t kPartSize = 5ull << 20;

class PartsConformance : public BlobStoreConformance {
 protected:
  using BlobStoreConformance::Put;
  // `size` bytes of the test pattern, and its digest.
  static std::string Content(uint64_t size) {
    std::string s(size, '\0');
    for (uint64_t i = 0; i < size; ++i) s[i] = PatternByte(i * 7 + 3);
    return s;
  }
  std::string Begin(uint64_t size) {
    key_ = RandomHex(16);
    auto h = store_->BeginParts(key_, size, kPartSize);
    EXPECT_TRUE(h.has_value()) << h.error().message;
    return h ? *h : std::string();
  }
  // Stores part `n` (1-based) of `content`; returns the store's answer.
  Result<PartInfo> Put(const std::string& handle, const std::string& content, uint64_t n,
                       std::optional<Sha256> sha = std::nullopt) {
    uint64_t offset = (n - 1) * kPartSize;
    std::string bytes = content.substr(offset, kPartSize);
    StringSource body(bytes);
    return store_->PutPart(handle, n, offset, bytes.size(), body, sha);
  }
  std::vector<uint64_t> Listed(const std::string& handle) {
    std::vector<uint64_t> out;
    auto parts = store_->ListParts(handle);
    for (const auto& p : parts.value()) out.push_back(p.number);
    return out;
  }
  std::string key_;
};

TEST_P(PartsConformance, PartsInAnyOrderMakeTheBlob) {
  const std::string content = Content(2 * kPartSize + 12345);
  const Sha256 id = Sha256::Of(content);
  std::string h = Begin(content.size());
  for (uint64_t n : {3, 1, 2}) {
    auto part = Put(h, content, n);
    ASSERT_TRUE(part.has_value()) << part.error().message;
    EXPECT_EQ(part->number, n);
    EXPECT_FALSE(part->etag.empty());
  }
  auto parts = store_->ListParts(h).value();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].number, 1u);
  EXPECT_EQ(parts[0].size, kPartSize);
  EXPECT_EQ(parts[2].size, 12345u);
  EXPECT_EQ(store_->Stat(id).error().code, ErrorCode::BlobUnknown);  // not before Complete

  auto done = store_->CompleteParts(h, id, content.size());
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_EQ(store_->Stat(id).value(), content.size());
  EXPECT_TRUE(Read(id) == content);
  EXPECT_EQ(store_->ListParts(h).error().code, ErrorCode::NotFound);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(PartsConformance, MissingPartsAreNamedAndTheRestKept) {
  const std::string content = Content(2 * kPartSize + 10);
  const Sha256 id = Sha256::Of(content);
  std::string h = Begin(content.size());
  ASSERT_TRUE(Put(h, content, 1).has_value());
  ASSERT_TRUE(Put(h, content, 3).has_value());
  auto early = store_->CompleteParts(h, id, content.size());
  ASSERT_FALSE(early.has_value());
  EXPECT_EQ(early.error().code, ErrorCode::Conflict);
  EXPECT_NE(early.error().message.find('2'), std::string::npos) << early.error().message;
  EXPECT_EQ(Listed(h), (std::vector<uint64_t>{1, 3}));
  ASSERT_TRUE(Put(h, content, 2).has_value());  // resume: only the missing part
  ASSERT_TRUE(store_->CompleteParts(h, id, content.size()).has_value());
  EXPECT_TRUE(Read(id) == content);
}

TEST_P(PartsConformance, WrongWholeDigestMakesNothingVisible) {
  const std::string content = Content(kPartSize + 100);
  const Sha256 claimed = Sha256::Of("something else");
  std::string h = Begin(content.size());
  ASSERT_TRUE(Put(h, content, 1).has_value());
  ASSERT_TRUE(Put(h, content, 2).has_value());
  auto r = store_->CompleteParts(h, claimed, content.size());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::DigestInvalid);
  EXPECT_EQ(store_->Stat(claimed).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(store_->Stat(Sha256::Of(content)).error().code, ErrorCode::BlobUnknown);
  EXPECT_EQ(Leftovers(), 0u);
}

TEST_P(PartsConformance, PartWithWrongDigestReadsAsMissing) {
  const std::string content = Content(kPartSize + 100);
  std::string h = Begin(content.size());
  auto bad = Put(h, content, 1, Sha256::Of("not this part"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, ErrorCode::DigestInvalid);
  EXPECT_TRUE(Listed(h).empty());
  auto good = Put(h, content, 1, Sha256::Of(content.substr(0, kPartSize)));
  ASSERT_TRUE(good.has_value()) << good.error().message;
  EXPECT_EQ(Listed(h), (std::vector<uint64_t>{1}));
  ASSERT_TRUE(store_->AbortParts(h).has_value());
}

TEST_P(PartsConformance, PartOfTheWrongLengthIsRefused) {
  const std::string content = Content(kPartSize + 100);
  std::string h = Begin(content.size());
  StringSource longer(std::string(101, 'x'));
  auto r = store_->PutPart(h, 2, kPartSize, 100, longer, std::nullopt);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::SizeInvalid);
  StringSource shorter(std::string(99, 'x'));
  r = store_->PutPart(h, 2, kPartSize, 100, shorter, std::nullopt);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::SizeInvalid);
  EXPECT_TRUE(Listed(h).empty());
  ASSERT_TRUE(store_->AbortParts(h).has_value());
}

TEST_P(PartsConformance, ResendingAPartReplacesIt) {
  const std::string content = Content(kPartSize + 100);
  const Sha256 id = Sha256::Of(content);
  std::string h = Begin(content.size());
  std::string garbage(kPartSize, 'g');
  StringSource wrong(garbage);
  ASSERT_TRUE(store_->PutPart(h, 1, 0, kPartSize, wrong, std::nullopt).has_value());
  ASSERT_TRUE(Put(h, content, 2).has_value());
  ASSERT_TRUE(Put(h, content, 1).has_value());
  auto r = store_->CompleteParts(h, id, content.size());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(Read(id) == content);
}

TEST_P(PartsConformance, ConcurrentPartsFromSeveralThreads) {
  const std::string content = Content(4 * kPartSize + 1);
  const Sha256 id = Sha256::Of(content);
  std::string h = Begin(content.size());
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (uint64_t n = 1; n <= 5; ++n) {
    workers.emplace_back([&, n] {
      if (!Put(h, content, n).has_value()) ++failures;
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_TRUE(store_->CompleteParts(h, id, content.size()).has_value());
  EXPECT_TRUE(Read(id) == content);
}

TEST_P(PartsConformance, AbortIsIdempotentAndStaleListingSeesOpenAreas) {
  const std::string content = Content(kPartSize);
  std::string h = Begin(content.size());
  ASSERT_TRUE(Put(h, content, 1).has_value());
  auto fresh = store_->ListStaleParts(std::chrono::hours(1)).value();
  EXPECT_TRUE(std::find(fresh.begin(), fresh.end(), h) == fresh.end());
  auto all = store_->ListStaleParts(std::chrono::seconds(-5)).value();
  EXPECT_TRUE(std::find(all.begin(), all.end(), h) != all.end());
  ASSERT_TRUE(store_->AbortParts(h).has_value());
  ASSERT_TRUE(store_->AbortParts(h).has_value());
  EXPECT_EQ(store_->ListParts(h).error().code, ErrorCode::NotFound);
  EXPECT_EQ(Leftovers(), 0u);
}

// GC's grace period counts from the last upload of the bytes: writing an existing blob
// again, or completing parts into it, refreshes its modified time.
TEST_P(PartsConformance, WritingAnExistingBlobAgainRefreshesItsModifiedTime) {
  const std::string content = "written twice";
  Sha256 id = Put(content);
  auto modified = [&] {
    int64_t m = 0;
    EXPECT_TRUE(store_
                    ->ForEachBlob([&](const BlobListing& b) -> Result<void> {
                      if (b.id == id) m = b.modified;
                      return {};
                    })
                    .has_value());
    return m;
  };
  int64_t first = modified();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // timestamps are in seconds
  Put(content);
  int64_t second = modified();
  EXPECT_GT(second, first);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::string h = Begin(content.size());
  StringSource body(content);
  ASSERT_TRUE(store_->PutPart(h, 1, 0, content.size(), body, std::nullopt).has_value());
  ASSERT_TRUE(store_->CompleteParts(h, id, content.size()).has_value());
  EXPECT_GT(modified(), second);
}

TEST_P(PartsConformance, ForEachBlobListsCommittedBlobsOnly) {
  Sha256 a = Put("first blob");
  Sha256 b = Put("second, longer blob");
  auto pending = store_->Create(Sha256::Of("never committed"), std::nullopt).value();
  ASSERT_TRUE(pending->Append(AsBytes("never committed")).has_value());
  std::map<Sha256, uint64_t> seen;
  int64_t now = NowUnix();
  ASSERT_TRUE(store_
                  ->ForEachBlob([&](const BlobListing& blob) -> Result<void> {
                    seen[blob.id] = blob.size;
                    EXPECT_LE(std::llabs(blob.modified - now), 600) << blob.modified;
                    return {};
                  })
                  .has_value());
  EXPECT_EQ(seen, (std::map<Sha256, uint64_t>{{a, 10}, {b, 19}}));
  auto stop = store_->ForEachBlob(
      [](const BlobListing&) -> Result<void> { return MakeError(ErrorCode::Conflict, "stop"); });
  ASSERT_FALSE(stop.has_value());
  EXPECT_EQ(stop.error().code, ErrorCode::Conflict);
  pending->Abort();
}

// A part body that sends its first half, then waits until Release() before the rest.
class HeldSource final : public ByteSource {
 public:
  explicit HeldSource(std::string bytes) : bytes_(std::move(bytes)) {}
  Result<size_t> Read(std::span<char> buf) override {
    if (pos_ == bytes_.size() / 2) {
      std::unique_lock lock(mu_);
      half_sent_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
    }
    size_t end = pos_ < bytes_.size() / 2 ? bytes_.size() / 2 : bytes_.size();
    size_t n = std::min(buf.size(), end - pos_);
    std::memcpy(buf.data(), bytes_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  std::optional<uint64_t> Size() const override { return bytes_.size(); }
  void WaitHalfSent() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return half_sent_; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::string bytes_;
  size_t pos_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool half_sent_ = false;
  bool released_ = false;
};

TEST_P(PartsConformance, TwoWritersOfOnePartNeverMixTheirBytes) {
  // The right bytes arrive slowly while other bytes of the same part are sent in full: the
  // part the store keeps is one writer's bytes whole, and its listed etag is that writer's.
  const std::string content = Content(kPartSize);
  const std::string other(kPartSize, 'B');
  std::string h = Begin(content.size());
  HeldSource slow(content);
  std::optional<Result<PartInfo>> slow_put, fast_put;
  std::atomic<int> order{0};
  int slow_done = 0, fast_done = 0;
  std::thread a([&] {
    slow_put = store_->PutPart(h, 1, 0, content.size(), slow, std::nullopt);
    slow_done = ++order;
  });
  slow.WaitHalfSent();
  std::thread b([&] {
    StringSource body(other);
    fast_put = store_->PutPart(h, 1, 0, other.size(), body, std::nullopt);
    fast_done = ++order;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // b runs (or waits)
  slow.Release();
  a.join();
  b.join();
  ASSERT_TRUE(slow_put->has_value()) << slow_put->error().message;
  ASSERT_TRUE(fast_put->has_value()) << fast_put->error().message;
  const bool slow_last = slow_done > fast_done;
  const std::string& kept = slow_last ? content : other;
  auto parts = store_->ListParts(h).value();
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].etag, slow_last ? (*slow_put)->etag : (*fast_put)->etag);
  auto done = store_->CompleteParts(h, Sha256::Of(kept), kept.size());
  ASSERT_TRUE(done.has_value()) << done.error().message;
  EXPECT_TRUE(Read(Sha256::Of(kept)) == kept);
}

TEST_P(PartsConformance, SweepTemporariesSparesLiveWritesAndStagingAreas) {
  Sha256 id = Sha256::Of("written while GC sweeps");
  auto live = store_->Create(id, std::nullopt).value();
  ASSERT_TRUE(live->Append(AsBytes("written while ")).has_value());
  std::string staging = Begin(10);
  auto dry = store_->SweepTemporaries(std::chrono::hours(1), true);
  ASSERT_TRUE(dry.has_value()) << dry.error().message;
  EXPECT_TRUE(dry->empty());
  auto swept = store_->SweepTemporaries(std::chrono::hours(1), false);
  ASSERT_TRUE(swept.has_value()) << swept.error().message;
  EXPECT_TRUE(swept->empty());
  ASSERT_TRUE(live->Append(AsBytes("GC sweeps")).has_value());
  ASSERT_TRUE(live->Commit().has_value());
  EXPECT_EQ(store_->Stat(id).value(), 23u);
  EXPECT_TRUE(store_->ListParts(staging).has_value());
  ASSERT_TRUE(store_->AbortParts(staging).has_value());
}

#ifdef HANGAR_CONFORMANCE_S3
// Built a second time as storage_s3_test: the same suites on S3BlobStore over the RADOS gateway
// (tests/testing/s3_server.h).
StoreFactory S3Factory() {
  return {
      "S3", [](const std::filesystem::path&) { return s3_testing::MakeStore(); },
      [](BlobStore& store, const std::filesystem::path&) { return s3_testing::Leftovers(store); }};
}
#endif

// Every store the suites run on.
std::vector<StoreFactory> Factories() {
#ifdef HANGAR_CONFORMANCE_S3
  return {S3Factory()};
#else
  return {LocalFactory(), MemoryFactory()};
#endif
}

INSTANTIATE_TEST_SUITE_P(All, BlobStoreConformance, testing::ValuesIn(Factories()),
                         [](const testing::TestParamInfo<StoreFactory>& info) {
                           return info.param.name;
                         });
INSTANTIATE_TEST_SUITE_P(All, PartsConformance, testing::ValuesIn(Factories()),
                         [](const testing::TestParamInfo<StoreFactory>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace hangar::storage
