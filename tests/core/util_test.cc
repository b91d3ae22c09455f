#include "core/util.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/quote.h"

namespace hangar {
namespace {

TEST(Util, Iso8601HasZSuffix) { EXPECT_EQ(Iso8601(1708340265), "2024-02-19T10:57:45.000Z"); }

TEST(Util, Iso8601MillisKeepsTheMilliseconds) {
  EXPECT_EQ(Iso8601Millis(1708340265277), "2024-02-19T10:57:45.277Z");
  EXPECT_EQ(Iso8601Millis(1708340265000), "2024-02-19T10:57:45.000Z");
  EXPECT_EQ(Iso8601Millis(-1), "1969-12-31T23:59:59.999Z");
}

TEST(Util, PercentDecodeOnce) {
  EXPECT_EQ(PercentDecode("refs%2Fpr%2F1"), "refs/pr/1");
  EXPECT_EQ(PercentDecode("refs%252Fpr"), "refs%2Fpr");
  bool ok = true;
  EXPECT_EQ(PercentDecode("a%zz%4", &ok), "a%zz%4");
  EXPECT_FALSE(ok);
}

TEST(Util, TrimBlanksDropsSpacesAndTabsAtBothEnds) {
  EXPECT_EQ(TrimBlanks(" \t bytes=0-1\t "), "bytes=0-1");
  EXPECT_EQ(TrimBlanks("a b"), "a b");  // inner blanks stay
  EXPECT_EQ(TrimBlanks(" \t "), "");
  EXPECT_EQ(TrimBlanks("x\r\n"), "x\r\n");  // only blanks: line ends are the caller's
}

TEST(Util, NextLineSplitsOnNewlines) {
  std::string_view text = "a\r\n\nlast";
  size_t pos = 0;
  std::vector<std::string_view> lines;
  while (pos < text.size()) lines.push_back(NextLine(text, pos));
  EXPECT_EQ(lines, (std::vector<std::string_view>{"a\r", "", "last"}));
  pos = 0;
  EXPECT_EQ(NextLine("x\n", pos), "x");
  EXPECT_EQ(pos, 2u);  // past the end: the loop stops without an empty last line
}

TEST(Util, LooksBinaryWhenANulIsInTheFirst8000Bytes) {
  EXPECT_FALSE(LooksBinary(""));
  EXPECT_FALSE(LooksBinary("plain text\n\xc3\xa9\n"));
  EXPECT_TRUE(LooksBinary(std::string("a\0b", 3)));
  EXPECT_TRUE(LooksBinary(std::string(7999, 'x') + '\0'));
  EXPECT_FALSE(LooksBinary(std::string(8000, 'x') + '\0'));  // git looks no further
}

TEST(Util, IsUtf8RefusesMalformedSequences) {
  for (const char* good : {"", "plain", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                           "\xed\x9f\xbf", "\xf4\x8f\xbf\xbf", "\xef\xbf\xbf"}) {
    EXPECT_TRUE(IsUtf8(good)) << good;
  }
  EXPECT_TRUE(IsUtf8(std::string("a\0b", 3)));
  for (const char* bad : {"\x80", "\xbf", "\xc0\x80", "\xc1\xbf", "\xc3", "\xc3x", "\xe0\x80\x80",
                          "\xe0\x9f\xbf", "\xed\xa0\x80", "\xe2\x82", "\xf0\x8f\xbf\xbf",
                          "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "a\xfe"}) {
    EXPECT_FALSE(IsUtf8(bad)) << bad;
  }
}

TEST(Util, ShownTextProblemRefusesControlsAndBadUtf8) {
  EXPECT_FALSE(ShownTextProblem("Fix the tokenizer \xc3\xa9").has_value());
  EXPECT_EQ(ShownTextProblem("a\xc3"), "is not valid UTF-8");
  for (const char* bad : {"a\nb", "a\tb", "a\rb", "\x1b[31m", "a\x7f"}) {
    EXPECT_EQ(ShownTextProblem(bad), "holds a control character") << bad;
  }
  EXPECT_FALSE(ShownTextProblem("line one\r\nline\ttwo\n", true).has_value());
  EXPECT_EQ(ShownTextProblem("a\x1b[31m\n", true), "holds a control character");
  EXPECT_EQ(ShownTextProblem(std::string("a\0b", 3), true), "holds a control character");
}

TEST(Util, ShownTextMendsWhatShownTextProblemFinds) {
  EXPECT_EQ(ShownText("Jos\xe9 \x1b[2Jx\ty"), "Jos\xef\xbf\xbd  [2Jx y");
  for (const char* s : {"a\xc3", "\x1b[31m", "a\nb", "ok \xc3\xa9"}) {
    EXPECT_FALSE(ShownTextProblem(ShownText(s)).has_value()) << s;
  }
}

TEST(Util, ParseUint64TakesDigitsOnly) {
  EXPECT_EQ(ParseUint64("0"), 0u);
  EXPECT_EQ(ParseUint64("007"), 7u);
  EXPECT_EQ(ParseUint64("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "18446744073709551616", "-1", "+1", " 1", "1 ", "1e3", "0x10"}) {
    EXPECT_FALSE(ParseUint64(bad).has_value()) << bad;
  }
}

TEST(Util, KeysetCursorsRoundTripAndRefuseTheRest) {
  EXPECT_EQ(KeysetCursor(1700000000, 42), "1700000000_42");
  EXPECT_EQ(ParseKeysetCursor("1700000000_42"), std::make_pair(int64_t{1700000000}, int64_t{42}));
  EXPECT_EQ(ParseKeysetCursor("0_0"), std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(ParseKeysetCursor(KeysetCursor(INT64_MAX, 7))->first, INT64_MAX);
  for (const char* bad : {"", "_", "1_", "_1", "12", "1_2_3", "-1_2", "1_-2", " 1_2", "1_2 ",
                          "+1_2", "9223372036854775808_1", "1_99999999999999999999", "a_b"}) {
    EXPECT_FALSE(ParseKeysetCursor(bad).has_value()) << bad;
  }
}

TEST(Util, ParseRowIdTakesPositiveInt64Only) {
  EXPECT_EQ(ParseRowId("1"), 1);
  EXPECT_EQ(ParseRowId("0042"), 42);
  EXPECT_EQ(ParseRowId("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(ParseRowId("9223372036854775808").has_value());
  EXPECT_FALSE(ParseRowId("0").has_value());
  EXPECT_FALSE(ParseRowId("").has_value());
  EXPECT_FALSE(ParseRowId("-1").has_value());
  EXPECT_FALSE(ParseRowId("1x").has_value());
}

TEST(Util, PercentEncode) {
  EXPECT_EQ(PercentEncode("a b/c", true), "a%20b/c");
  EXPECT_EQ(PercentEncode("a b/c"), "a%20b%2Fc");
}

TEST(Util, RandomAlnum) {
  auto a = RandomAlnum(34), b = RandomAlnum(34);
  EXPECT_EQ(a.size(), 34u);
  EXPECT_NE(a, b);
  for (char c : a) EXPECT_TRUE(isalnum(static_cast<unsigned char>(c)));
}

TEST(Util, TitleProblemFindsWhatMakesATitleReadAsAnother) {
  EXPECT_FALSE(TitleProblem("Recent models", 60).has_value());
  EXPECT_FALSE(TitleProblem("caf\xc3\xa9 \xe6\xa8\xa1\xe5\x9e\x8b", 7).has_value())
      << "characters are counted, not bytes";
  EXPECT_EQ(TitleProblem("caf\xc3\xa9", 3), "is over 3 characters");
  EXPECT_EQ(TitleProblem(" \xe2\x80\x8b\xef\xbb\xbf", 60), "is empty") << "only invisible";
  EXPECT_EQ(TitleProblem("", 60), "is empty");
  EXPECT_EQ(TitleProblem("abc\xe2\x80\xaegpj.exe", 60),
            "holds a line separator or a direction override");
  EXPECT_EQ(TitleProblem("a\xe2\x80\xa8"
                         "b",
                         60),
            "holds a line separator or a direction override");
  EXPECT_EQ(TitleProblem("a\nb", 60), "holds a control character");
  EXPECT_EQ(TitleProblem("a\xff", 60), "is not valid UTF-8");
  EXPECT_EQ(CodePoints("caf\xc3\xa9"), 4u);
  EXPECT_EQ(FirstCodePoints("caf\xc3\xa9!", 4), "caf\xc3\xa9");
}

TEST(Util, ObjectIdsReadBackOnlyAsTheirKind) {
  EXPECT_EQ(ObjectId(255, 'c'), "c000000000000000000000ff");
  EXPECT_EQ(ParseObjectId("c000000000000000000000ff", 'c'), 255);
  EXPECT_FALSE(ParseObjectId("c000000000000000000000ff", 'b').has_value());
  EXPECT_FALSE(ParseObjectId("c000000000000000000000FF", 'c').has_value());
  EXPECT_FALSE(ParseObjectId("cfffffffffffffffffffffff", 'c').has_value()) << "over int64";
}

TEST(Quote, QuoteDoubledDoublesOnlyItsQuote) {
  EXPECT_EQ(QuoteDoubled("it's", '\''), "'it''s'");
  EXPECT_EQ(QuoteDoubled("a \"b\" 'c'", '"'), "\"a \"\"b\"\" 'c'\"");
  EXPECT_EQ(QuoteDoubled("", '"'), "\"\"");
}

}  // namespace
}  // namespace hangar
