// Unit tests of the client library's pure parts: sizes, repo refs, digests, part ranges,
// the parallel runner. The HTTP side is covered end to end by
// tests/integration/client_cli.sh.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "client/file_io.h"
#include "client/hub_client.h"
#include "client/parallel.h"
#include "client/progress.h"

namespace hangar::client {
namespace {

TEST(ParseByteSize, AcceptsSuffixes) {
  EXPECT_EQ(ParseByteSize("1048576"), 1048576u);
  EXPECT_EQ(ParseByteSize("64M"), 64u << 20);
  EXPECT_EQ(ParseByteSize("64MiB"), 64u << 20);
  EXPECT_EQ(ParseByteSize("64mb"), 64u << 20);
  EXPECT_EQ(ParseByteSize("512k"), 512u << 10);
  EXPECT_EQ(ParseByteSize("1G"), uint64_t{1} << 30);
  EXPECT_EQ(ParseByteSize("2T"), uint64_t{2} << 40);
  EXPECT_EQ(ParseByteSize("10B"), 10u);
}

TEST(ParseByteSize, RejectsNonsense) {
  for (const char* s :
       {"", "M", "0", "12Q", "1.5G", "-1", "64MM", "64 M", "99999999999999999999"}) {
    EXPECT_FALSE(ParseByteSize(s).has_value()) << s;
  }
  EXPECT_FALSE(ParseByteSize("17179869184G").has_value());  // overflows 64 bits
}

TEST(FormatBytes, Units) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(64.0 * 1024 * 1024), "64.0 MiB");
  EXPECT_EQ(FormatBytes(1.5 * 1024 * 1024 * 1024), "1.5 GiB");
}

TEST(RepoRef, ParsesAndBuildsPaths) {
  auto m = RepoRef::Parse("model", "acme/bert");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->ApiPath(), "/api/models/acme/bert");
  EXPECT_EQ(m->UrlPath(), "acme/bert");
  auto d = RepoRef::Parse("dataset", "acme/squad");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->ApiPath(), "/api/datasets/acme/squad");
  EXPECT_EQ(d->UrlPath(), "datasets/acme/squad");
  EXPECT_EQ(RepoRef::Parse("model", "bert").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(RepoRef::Parse("model", "a/b/c").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(RepoRef::Parse("model", "/b").error().code, ErrorCode::BadRequest);
  EXPECT_EQ(RepoRef::Parse("thing", "a/b").error().code, ErrorCode::BadRequest);
}

TEST(UploadSession, PartBytes) {
  UploadSession s;
  s.size = 100;
  s.part_size = 30;
  s.part_count = 4;
  EXPECT_EQ(s.PartBytes(1), 30u);
  EXPECT_EQ(s.PartBytes(3), 30u);
  EXPECT_EQ(s.PartBytes(4), 10u);
  EXPECT_EQ(s.PartBytes(0), 0u);
  EXPECT_EQ(s.PartBytes(5), 0u);
}

TEST(ContentHasher, GitBlobOidAndSha256) {
  ContentHasher blob(ContentHasher::Kind::GitBlob, 6);
  blob.Update("hello\n", 6);
  EXPECT_EQ(blob.FinishHex(), "ce013625030ba8dba906f756967f9e9ca394464a");  // git hash-object
  ContentHasher sha(ContentHasher::Kind::Sha256, 3);
  sha.Update("abc", 3);
  EXPECT_EQ(sha.FinishHex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(FileIo, RangeSourceAndHashRange) {
  auto path =
      std::filesystem::temp_directory_path() / ("client_test_" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary);
    out << "0123456789abcdef";
  }
  auto f = File::Open(path, O_RDONLY);
  ASSERT_TRUE(f.has_value());
  size_t seen = 0;
  FileRangeSource src(f->fd(), 4, 6, [&](size_t n) { seen += n; });
  EXPECT_EQ(src.Size(), 6u);
  char buf[4];
  std::string got;
  for (;;) {
    auto n = src.Read(buf);
    ASSERT_TRUE(n.has_value());
    if (*n == 0) break;
    got.append(buf, *n);
  }
  EXPECT_EQ(got, "456789");
  EXPECT_EQ(seen, 6u);
  ContentHasher h(ContentHasher::Kind::Sha256, 6);
  ASSERT_TRUE(HashRange(f->fd(), 4, 6, h).has_value());
  ContentHasher want(ContentHasher::Kind::Sha256, 6);
  want.Update("456789", 6);
  EXPECT_EQ(h.FinishHex(), want.FinishHex());
  ContentHasher past(ContentHasher::Kind::Sha256, 100);
  EXPECT_FALSE(HashRange(f->fd(), 10, 100, past).has_value());  // file too short
  EXPECT_EQ(File::Open(path.string() + ".missing", O_RDONLY).error().code, ErrorCode::NotFound);
  std::filesystem::remove(path);
}

TEST(RunParallel, RunsEveryTaskOnceAndStopsAtTheFirstError) {
  std::atomic<int> sum{0};
  ASSERT_TRUE(RunParallel(100, 4, [&](size_t i) -> Result<void> {
                sum += static_cast<int>(i);
                return {};
              }).has_value());
  EXPECT_EQ(sum.load(), 4950);
  std::atomic<int> ran{0};
  auto r = RunParallel(1000, 1, [&](size_t i) -> Result<void> {
    ++ran;
    if (i == 3) return MakeError(ErrorCode::Conflict, "task 3");
    return {};
  });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, "task 3");
  EXPECT_EQ(ran.load(), 4);
}

TEST(WithRetries, RetriesOnlyRetryableErrors) {
  int tries = 0;
  auto r = WithRetries(3, Retryable, [&]() -> Result<void> {
    ++tries;
    return MakeError(ErrorCode::NotFound, "no");
  });
  EXPECT_FALSE(r.has_value());
  EXPECT_EQ(tries, 1);
  tries = 0;
  r = WithRetries(3, Retryable, [&]() -> Result<void> {
    if (++tries < 2) return MakeError(ErrorCode::Unavailable, "reset");
    return {};
  });
  EXPECT_TRUE(r.has_value());
  EXPECT_EQ(tries, 2);
}

TEST(HttpError, UsesTheServersCodeAndMessage) {
  net::HttpResponse res;
  res.status = 404;
  res.headers = {{"x-error-code", "RepoNotFound"},
                 {"x-error-message", "Repository not found: a/b"}};
  Error e = HttpError(res, "revision 'main' of a/b");
  EXPECT_EQ(e.code, ErrorCode::RepoNotFound);
  EXPECT_EQ(e.message, "revision 'main' of a/b: HTTP 404 RepoNotFound: Repository not found: a/b");
  net::HttpResponse plain;
  plain.status = 502;
  plain.body = "{\"error\": \"bad gateway\"}";
  Error g = HttpError(plain, "x");
  EXPECT_TRUE(Retryable(g));
  EXPECT_EQ(g.message, "x: HTTP 502: bad gateway");
}

}  // namespace
}  // namespace hangar::client
