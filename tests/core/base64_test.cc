// core/base64.h against RFC 4648 §10's test vectors, the URL alphabet and strictness.

#include "core/base64.h"

#include <gtest/gtest.h>

namespace hangar {
namespace {

TEST(Base64, Rfc4648Vectors) {
  const char* plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char* coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(Base64Encode(plain[i]), coded[i]);
    EXPECT_EQ(Base64Decode(coded[i]).value(), plain[i]);
  }
  EXPECT_EQ(Base64Decode("Zm9vYg").value(), "foob");  // padding optional
  EXPECT_EQ(Base64UrlEncode("foob"), "Zm9vYg");
}

TEST(Base64, UrlAlphabetRoundTripsEveryByte) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  std::string url = Base64UrlEncode(all);
  EXPECT_EQ(
      url.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
      std::string::npos);
  EXPECT_EQ(Base64UrlDecode(url).value(), all);
  EXPECT_EQ(Base64Decode(Base64Encode(all)).value(), all);
}

TEST(Base64, RefusesForeignBytesAndImpossibleLengths) {
  EXPECT_FALSE(Base64Decode("Zm9v!").has_value());
  EXPECT_FALSE(Base64Decode("Zm9vY").has_value());        // 5 characters: no byte ends there
  EXPECT_FALSE(Base64UrlDecode("Zm9v+").has_value());     // standard alphabet in a URL token
  EXPECT_FALSE(Base64UrlDecode("Zm9vYg==").has_value());  // padding is not base64url here
  EXPECT_FALSE(Base64Decode("Zm 9v").has_value());
  EXPECT_FALSE(Base64Decode("Zg===").has_value());  // at most two '='
  EXPECT_FALSE(Base64Decode("Zg=a").has_value());   // '=' only at the end
}

}  // namespace
}  // namespace hangar
