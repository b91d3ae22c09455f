#include "storage/file_source.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace hangar::storage {
namespace {

using testing_util::TempDir;

TEST(ResolveRange, Rules) {
  auto whole = ResolveRange({}, 10).value();
  EXPECT_EQ(whole.offset, 0u);
  EXPECT_EQ(whole.length, 10u);
  auto tail = ResolveRange(ByteRange::From(4), 10).value();
  EXPECT_EQ(tail.offset, 4u);
  EXPECT_EQ(tail.length, 6u);
  EXPECT_EQ(ResolveRange(ByteRange::Window(4, 100), 10).value().length, 6u);
  EXPECT_EQ(ResolveRange(ByteRange::From(10), 10).value().length, 0u);
  EXPECT_EQ(ResolveRange({}, 0).value().length, 0u);
  EXPECT_EQ(ResolveRange(ByteRange::From(11), 10).error().code, ErrorCode::RangeNotSatisfiable);
}

TEST(FileSource, StreamsAWindowOfAFile) {
  TempDir dir;
  auto path = dir.path() / "f";
  std::ofstream(path) << "0123456789";
  auto src = OpenFileRange(path, ByteRange::Window(3, 4)).value();
  EXPECT_EQ(src->Size(), 4u);
  EXPECT_EQ(src->position(), 3u);
  EXPECT_GE(src->fd(), 0);
  char buf[3];
  EXPECT_EQ(src->Read(buf).value(), 3u);
  EXPECT_EQ(std::string(buf, 3), "345");
  EXPECT_EQ(src->Size(), 1u);
  EXPECT_EQ(src->Read(buf).value(), 1u);
  EXPECT_EQ(buf[0], '6');
  EXPECT_EQ(src->Read(buf).value(), 0u);
}

TEST(FileSource, MissingFileIsNotFound) {
  TempDir dir;
  auto r = OpenFileRange(dir.path() / "missing", {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::NotFound);
}

TEST(FileSource, RangePastTheEnd) {
  TempDir dir;
  auto path = dir.path() / "f";
  std::ofstream(path) << "abc";
  EXPECT_EQ(OpenFileRange(path, ByteRange::From(4)).error().code, ErrorCode::RangeNotSatisfiable);
}

TEST(FileSource, TruncationUnderAReaderIsAnError) {
  TempDir dir;
  auto path = dir.path() / "f";
  std::ofstream(path) << "abcdef";
  auto src = OpenFileRange(path, {}).value();
  std::filesystem::resize_file(path, 2);
  char buf[16];
  EXPECT_EQ(src->Read(buf).value(), 2u);
  auto r = src->Read(buf);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::Internal);
}

}  // namespace
}  // namespace hangar::storage
