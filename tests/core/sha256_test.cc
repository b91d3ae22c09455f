#include "core/sha256.h"

#include <gtest/gtest.h>

#include "core/oid.h"

namespace hangar {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256::Of("").Hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256Hasher h;
  h.Update("a");
  h.Update("bc");
  EXPECT_EQ(h.Finish().Hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, ParseHexIsStrict) {
  auto s = Sha256::Of("x");
  EXPECT_EQ(Sha256::ParseHex(s.Hex()), s);
  EXPECT_FALSE(Sha256::ParseHex("abc").has_value());
  std::string upper = s.Hex();
  for (auto& c : upper) c = static_cast<char>(toupper(c));
  EXPECT_FALSE(Sha256::ParseHex(upper).has_value());
}

TEST(Oid, RoundTrip) {
  auto o = Oid::ParseHex("dd4bc8b21efa05ec961e3efc4ee5e3832a3679c7");
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->Hex(), "dd4bc8b21efa05ec961e3efc4ee5e3832a3679c7");
  EXPECT_FALSE(Oid::ParseHex("zz4bc8b21efa05ec961e3efc4ee5e3832a3679c7").has_value());
  EXPECT_TRUE(Oid{}.IsZero());
}

}  // namespace
}  // namespace hangar
