#include "git/pointer.h"

#include <gtest/gtest.h>

namespace hangar::git {
namespace {

constexpr std::string_view kHex =
    "4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393";
const std::string kCanonical =
    "version https://git-lfs.github.com/spec/v1\noid sha256:" + std::string(kHex) +
    "\nsize 12345\n";

TEST(Pointer, ParsesTheCanonicalForm) {
  auto p = ParsePointer(kCanonical);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->oid.Hex(), kHex);
  EXPECT_EQ(p->size, 12345u);
}

TEST(Pointer, FormatRoundTrips) {
  Pointer p{Sha256::Of("hello"), 5};
  std::string text = FormatPointer(p);
  EXPECT_EQ(text,
            "version https://git-lfs.github.com/spec/v1\noid sha256:" + p.oid.Hex() + "\nsize 5\n");
  EXPECT_EQ(ParsePointer(text), p);
  EXPECT_EQ(FormatPointer(*ParsePointer(kCanonical)), kCanonical);
  // The usual pointer of a large file is 134 bytes (hf-api.md §4.1 pointerSize).
  EXPECT_EQ(FormatPointer({Sha256::Of("x"), 536063208}).size(), 134u);
  Pointer zero{Sha256::Of(""), 0};
  EXPECT_EQ(ParsePointer(FormatPointer(zero)), zero);
}

TEST(Pointer, AcceptsLegacyVersionUrls) {
  std::string body = "oid sha256:" + std::string(kHex) + "\nsize 1\n";
  EXPECT_TRUE(ParsePointer("version https://hawser.github.com/spec/v1\n" + body).has_value());
  EXPECT_TRUE(ParsePointer("version http://git-media.io/v/2\n" + body).has_value());
}

TEST(Pointer, RejectsAnythingElse) {
  std::string oid = "oid sha256:" + std::string(kHex) + "\n";
  std::string version = "version https://git-lfs.github.com/spec/v1\n";
  std::string upper(kHex);
  for (auto& c : upper) c = static_cast<char>(toupper(c));
  const std::string cases[] = {
      "",
      "hello world\n",
      version,
      version + oid,                                                          // no size
      version + "size 5\n" + oid,                                             // keys out of order
      oid + version + "size 5\n",                                             // version not first
      version + oid + "size 5",                                               // no final LF
      "version https://git-lfs.github.com/spec/v1\r\n" + oid + "size 5\r\n",  // CRLF
      version + "oid sha256:" + upper + "\nsize 5\n",                         // upper-case hex
      version + "oid sha256:" + std::string(kHex.substr(1)) + "\nsize 5\n",   // 63 hex
      version + "oid sha1:" + std::string(kHex) + "\nsize 5\n",               // other hash
      version + oid + "size 05\n",                                            // leading zero
      version + oid + "size -5\n",                                            // sign
      version + oid + "size 5x\n",                                            // junk
      version + oid + "size \n",                                              // empty size
      version + oid + "size 99999999999999999999\n",                          // overflow
      version + oid + "size 5\nzzz extra\n",                                  // unknown key
      version + "ext-0-foo sha256:" + std::string(kHex) + "\n" + oid + "size 5\n",
      "version https://git-lfs.github.com/spec/v2\n" + oid + "size 5\n",
      version + oid + "size 5\n" + std::string(1024, '\n'),  // >= 1024 bytes
      version + oid + "size  5\n",                           // double space
  };
  for (const auto& text : cases) EXPECT_FALSE(ParsePointer(text).has_value()) << text;
}

}  // namespace
}  // namespace hangar::git
