#include "git/pkt_line.h"

#include <gtest/gtest.h>

namespace hangar::git {
namespace {

TEST(PktLine, WritesLengthPrefixedPackets) {
  EXPECT_EQ(PktLine("# service=git-upload-pack\n"), "001e# service=git-upload-pack\n");
  EXPECT_EQ(PktLine("version 2\n"), "000eversion 2\n");
  EXPECT_EQ(PktLine(""), "0004");
  EXPECT_EQ(PktFlush(), "0000");
  EXPECT_EQ(PktDelim(), "0001");
  EXPECT_EQ(PktError("access denied"), "0016ERR access denied\n");
  std::string big(kMaxPktPayload, 'x');
  EXPECT_EQ(PktLine(big).substr(0, 4), "fff0");
}

TEST(PktReader, ReadsASequence) {
  std::string buf = PktLine("want abc\n") + "0001" + PktLine("done") + "0000" + "PACK...";
  PktReader r(std::string_view(buf).substr(0, buf.size() - 7));
  auto p1 = r.Next();
  ASSERT_TRUE(p1.has_value() && p1->has_value());
  EXPECT_EQ((*p1)->type, PktType::Data);
  EXPECT_EQ((*p1)->payload, "want abc\n");
  EXPECT_EQ((*p1)->Text(), "want abc");
  auto p2 = r.Next();
  EXPECT_EQ((*p2)->type, PktType::Delim);
  auto p3 = r.Next();
  EXPECT_EQ((*p3)->Text(), "done");
  auto p4 = r.Next();
  EXPECT_EQ((*p4)->type, PktType::Flush);
  auto end = r.Next();
  ASSERT_TRUE(end.has_value());
  EXPECT_FALSE(end->has_value());

  PktReader with_rest(buf);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(with_rest.Next().has_value());
  EXPECT_EQ(with_rest.Rest(), "PACK...");
  EXPECT_EQ(with_rest.Offset(), buf.size() - 7);
}

TEST(PktReader, ReportsMalformedAndTruncatedInput) {
  for (const std::string& bad :
       std::vector<std::string>{"00zz", "0003", "fff5" + std::string(65521, 'x'), "-001"}) {
    PktReader r(bad);
    auto p = r.Next();
    ASSERT_FALSE(p.has_value()) << bad.substr(0, 8);
    EXPECT_EQ(p.error().code, ErrorCode::BadRequest);
    EXPECT_FALSE(r.Incomplete());
  }
  for (std::string part : {"00", "000ahel"}) {
    PktReader r(part);
    auto p = r.Next();
    ASSERT_FALSE(p.has_value());
    EXPECT_TRUE(r.Incomplete()) << part;
    EXPECT_EQ(r.Offset(), 0u);
  }
  PktReader special("0002");
  EXPECT_EQ(special.Next().value()->type, PktType::ResponseEnd);
}

}  // namespace
}  // namespace hangar::git
