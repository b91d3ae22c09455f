#include "web/markdown.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace hangar::web {
namespace {

bool Has(const std::string& html, std::string_view needle) {
  return html.find(needle) != std::string::npos;
}

// Lower-cased, so case tricks cannot hide a match.
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t Count(const std::string& html, std::string_view needle) {
  size_t n = 0;
  for (size_t p = html.find(needle); p != std::string::npos; p = html.find(needle, p + 1)) ++n;
  return n;
}

// Markdown without raw HTML skips the HTML parser; a <b> anywhere forces it. Both paths
// must render the same features.
const char* const kRawHtmlSuffix = "\n<b>raw</b>\n";

TEST(Markdown, GfmTablesTaskListsAutolinksStrikethrough) {
  for (std::string suffix : {"", kRawHtmlSuffix}) {
    std::string html = RenderMarkdown(
        "| a | b |\n|:-:|---|\n| 1 | 2 |\n\n"
        "- [x] done\n- [ ] todo\n\n"
        "see https://example.com/x and ~~old~~ text\n" +
        suffix);
    EXPECT_TRUE(Has(html, "<table>")) << html;
    EXPECT_TRUE(Has(html, "<th align=\"center\">a</th>")) << html;
    EXPECT_TRUE(Has(html, "<td>2</td>")) << html;
    EXPECT_EQ(Count(html, "<input type=\"checkbox\""), 2u) << html;
    EXPECT_EQ(Count(html, "disabled=\"\""), 2u) << html;
    EXPECT_EQ(Count(html, "checked=\"\""), 1u) << html;
    EXPECT_TRUE(Has(html,
                    "<a href=\"https://example.com/x\" rel=\"nofollow noopener\">"
                    "https://example.com/x</a>"))
        << html;
    EXPECT_TRUE(Has(html, "<del>old</del>")) << html;
  }
}

TEST(Markdown, FrontMatterIsNotRendered) {
  std::string html = RenderMarkdown("---\nlicense: mit\ntags: [a]\n---\n# Title\n");
  EXPECT_FALSE(Has(html, "license")) << html;
  EXPECT_TRUE(Has(html, "<h1>Title</h1>")) << html;
}

TEST(Markdown, CodeBlocksKeepTheirLanguageClassAndText) {
  std::string html = RenderMarkdown("```python\nx = 1 < 2\n```\n\n`a<b>`\n");
  EXPECT_TRUE(Has(html, "<pre><code class=\"language-python\">x = 1 &lt; 2\n</code></pre>"))
      << html;
  EXPECT_TRUE(Has(html, "<code>a&lt;b&gt;</code>")) << html;
}

TEST(Markdown, ScriptElementGoesWithItsContent) {
  std::string html =
      RenderMarkdown("hello <script>alert(1)</script> world\n\n<script>\nalert(2)\n</script>\n");
  EXPECT_FALSE(Has(Lower(html), "<script")) << html;
  EXPECT_FALSE(Has(html, "alert")) << html;
  EXPECT_TRUE(Has(html, "hello")) << html;
  EXPECT_TRUE(Has(html, "world")) << html;
}

TEST(Markdown, EventHandlerAttributesAreDropped) {
  std::string html =
      RenderMarkdown("<img src=x onerror=alert(1)> <p onclick=\"steal()\">kept</p>\n");
  EXPECT_FALSE(Has(Lower(html), "onerror")) << html;
  EXPECT_FALSE(Has(html, "alert")) << html;
  EXPECT_FALSE(Has(Lower(html), "onclick")) << html;
  EXPECT_FALSE(Has(html, "steal")) << html;
  EXPECT_TRUE(Has(html, "<img src=\"x\">")) << html;
  EXPECT_TRUE(Has(html, ">kept</p>")) << html;
}

TEST(Markdown, JavascriptHrefIsDroppedTextKept) {
  std::string html = RenderMarkdown("<a href=\"javascript:alert(1)\">click me</a>\n");
  EXPECT_FALSE(Has(Lower(html), "javascript")) << html;
  EXPECT_TRUE(Has(html, "click me")) << html;
}

TEST(Markdown, EncodedAndMixedCaseSchemesAreCaught) {
  for (const char* href :
       {"JaVaScRiPt&#58;alert(1)", "&#106;avascript:alert(1)", "java&#x09;script:alert(1)",
        " \x01javascript:alert(1)", "vbscript:msgbox(1)", "data:text/html;base64,PHNjcmlwdD4="}) {
    std::string html = RenderMarkdown(std::string("<a href=\"") + href + "\">go</a>\n");
    EXPECT_FALSE(Has(Lower(html), "href")) << href << " -> " << html;
    EXPECT_FALSE(Has(html, "alert")) << html;
    EXPECT_FALSE(Has(html, "msgbox")) << html;
    EXPECT_FALSE(Has(html, "base64")) << html;
    EXPECT_TRUE(Has(html, "go")) << html;
  }
  std::string img = RenderMarkdown("<img src=\"data:image/svg+xml,<svg onload=alert(1)>\">\n");
  EXPECT_FALSE(Has(Lower(img), "<img")) << img;
  EXPECT_FALSE(Has(img, "alert")) << img;
}

TEST(Markdown, MarkdownLinkWithJavascriptIsDropped) {
  std::string html = RenderMarkdown("[x](javascript:alert(1)) and ![i](javascript:alert(2))\n");
  EXPECT_FALSE(Has(Lower(html), "javascript")) << html;
  EXPECT_FALSE(Has(html, "alert")) << html;
  EXPECT_TRUE(Has(html, "x and")) << html;
}

TEST(Markdown, SvgAndMathGoWithTheirContent) {
  std::string html = RenderMarkdown(
      "<svg onload=alert(1)><script>alert(2)</script><text>svgtext</text></svg>safe "
      "<math><mi>mathtext</mi></math>\n");
  EXPECT_FALSE(Has(Lower(html), "<svg")) << html;
  EXPECT_FALSE(Has(Lower(html), "onload")) << html;
  EXPECT_FALSE(Has(html, "alert")) << html;
  EXPECT_FALSE(Has(html, "svgtext")) << html;
  EXPECT_FALSE(Has(html, "mathtext")) << html;
  EXPECT_TRUE(Has(html, "safe")) << html;
}

TEST(Markdown, IframeStyleFormObjectEmbedAreDropped) {
  std::string html = RenderMarkdown(
      "before\n\n<iframe src=\"https://evil.example\">framed</iframe>\n\n"
      "<style>body{display:none}</style>\n\n"
      "<form action=\"https://evil.example\"><input name=p type=password>formtext</form>\n\n"
      "<object data=x>objtext</object><embed src=x>\n\nafter\n");
  std::string lower = Lower(html);
  // (libgumbo 0.10 puts a form's text after the form, so "formtext" is kept as text.)
  for (const char* bad : {"<iframe", "<style", "display:none", "<form", "<input", "password",
                          "<object", "objtext", "<embed", "evil.example", "framed"}) {
    EXPECT_FALSE(Has(lower, bad)) << bad << " in " << html;
  }
  EXPECT_TRUE(Has(html, "before")) << html;
  EXPECT_TRUE(Has(html, "after")) << html;
}

TEST(Markdown, AttributeBreakingQuotesStayInsideTheValue) {
  std::string html = RenderMarkdown(
      "<img src=\"a.png\" alt='x\" onerror=\"alert(1)'> "
      "<a href=\"https://e.example/?q=&quot;&gt;&lt;script&gt;\" title='t\"><b>'>l</a>\n");
  EXPECT_FALSE(Has(html, "\" onerror")) << html;
  EXPECT_FALSE(Has(Lower(html), "<script")) << html;
  EXPECT_TRUE(Has(html, "alt=\"x&quot; onerror=&quot;alert(1)\"")) << html;
  EXPECT_TRUE(Has(html, "href=\"https://e.example/?q=&quot;&gt;&lt;script&gt;\"")) << html;
  EXPECT_TRUE(Has(html, "title=\"t&quot;&gt;&lt;b&gt;\"")) << html;
}

TEST(Markdown, UnknownElementsAreUnwrappedAndStyleAttributesDropped) {
  std::string html = RenderMarkdown(
      "<p align=\"center\" style=\"position:fixed\" id=\"x\"><font color=red>hi</font></p>\n");
  EXPECT_TRUE(Has(html, "<p align=\"center\">hi</p>")) << html;
}

TEST(Markdown, DetailsSummaryAndHtmlTablesSurvive) {
  std::string html = RenderMarkdown(
      "<details open><summary>More</summary>\n\nhidden *text*\n\n</details>\n\n"
      "<table><tr><td colspan=\"2\" onclick=\"x()\">c</td></tr></table>\n");
  EXPECT_TRUE(Has(html, "<details open=\"\"><summary>More</summary>")) << html;
  EXPECT_TRUE(Has(html, "<em>text</em>")) << html;
  EXPECT_TRUE(Has(html, "<td colspan=\"2\">c</td>")) << html;
}

TEST(Markdown, RelativeUrlsGoThroughTheCallback) {
  MarkdownOptions options;
  options.rewrite_relative = [](std::string_view url, UrlUse use) {
    return (use == UrlUse::Image ? "/acme/bert/resolve/main/" : "/acme/bert/blob/main/") +
           std::string(url);
  };
  for (std::string suffix : {"", kRawHtmlSuffix}) {
    std::string html = RenderMarkdown(
        "![logo](images/x.png) [doc](docs/a.md) [abs](https://e.example/) [top](#usage) "
        "[root](/other) <img src=\"images/y.png\">\n" +
            suffix,
        options);
    EXPECT_TRUE(Has(html, "<img src=\"/acme/bert/resolve/main/images/x.png\" alt=\"logo\""))
        << html;
    EXPECT_TRUE(Has(html, "href=\"/acme/bert/blob/main/docs/a.md\"")) << html;
    EXPECT_TRUE(Has(html, "href=\"https://e.example/\"")) << html;
    EXPECT_TRUE(Has(html, "href=\"#usage\"")) << html;
    EXPECT_TRUE(Has(html, "href=\"/other\"")) << html;
    EXPECT_TRUE(Has(html, "<img src=\"/acme/bert/resolve/main/images/y.png\">")) << html;
  }
}

TEST(Markdown, RewrittenUrlIsCheckedAgain) {
  MarkdownOptions options;
  options.rewrite_relative = [](std::string_view, UrlUse) { return std::string("javascript:x()"); };
  for (std::string suffix : {"", kRawHtmlSuffix}) {
    std::string html = RenderMarkdown("[a](b) ![c](d)\n" + suffix, options);
    EXPECT_FALSE(Has(Lower(html), "javascript")) << html;
    EXPECT_FALSE(Has(Lower(html), "<img")) << html;
    EXPECT_TRUE(Has(html, "a ")) << html;
  }
}

TEST(Markdown, MarkdownLinksWithUnsafeSchemesWithoutRawHtml) {
  std::string html = RenderMarkdown(
      "[x](javascript:alert(1)) [y](JAVASCRIPT:alert(2)) [z](vbscript:msgbox) "
      "![i](data:image/png;base64,AAAA) [ok](mailto:a@b.example)\n");
  EXPECT_FALSE(Has(Lower(html), "script:")) << html;
  EXPECT_FALSE(Has(html, "alert")) << html;
  EXPECT_FALSE(Has(html, "base64")) << html;
  EXPECT_FALSE(Has(html, "<img")) << html;
  EXPECT_TRUE(
      Has(html, "<p>x y z  <a href=\"mailto:a@b.example\" rel=\"nofollow noopener\">ok</a>"))
      << html;
}

TEST(Markdown, DeepNestingDoesNotCrash) {
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "<div>";
  deep += "<script>x()</script>bottom";
  auto start = std::chrono::steady_clock::now();
  std::string html = RenderMarkdown("top\n\n" + deep + "\n");
  auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
  std::printf("50,000 nested <div>: %.1f ms\n", ms.count());
  EXPECT_TRUE(Has(html, "top")) << html.substr(0, 200);  // raw HTML left out, text kept
  EXPECT_FALSE(Has(html, "<script")) << html.substr(0, 200);
  EXPECT_FALSE(Has(html, "<div")) << html.substr(0, 200);
  std::string quotes(20000, '>');
  EXPECT_TRUE(Has(RenderMarkdown(quotes + " q\n"), "q"));
}

enum class Mix { Prose, Tables, RawHtml };

// 1 MiB of card markdown: prose with lists and code; Tables adds a small table to every
// section (~5,000 tables); RawHtml adds inline HTML too, which takes the HTML parser.
std::string BigReadme(Mix mix) {
  std::string readme = "---\nlicense: mit\n---\n";
  while (readme.size() < (1 << 20)) {
    readme +=
        "## Section\n\nSome *emphasis* and **strong** text with a [link](https://e.example/a) "
        "and `code`.\n\n- [x] task\n- item\n\n```python\nprint('hi')\n```\n\n";
    if (mix != Mix::Prose) readme += "| a | b |\n|---|---|\n| 1 | 2 |\n\n";
    if (mix == Mix::RawHtml) readme += "Some <b>raw html</b>.\n\n";
  }
  return readme;
}

TEST(Markdown, OneMegabyteReadmeRendersQuickly) {
  for (Mix mix : {Mix::Prose, Mix::Tables, Mix::RawHtml}) {
    std::string readme = BigReadme(mix);
    auto start = std::chrono::steady_clock::now();
    std::string html = RenderMarkdown(readme);
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start);
    const char* name = mix == Mix::Prose ? "prose" : mix == Mix::Tables ? "tables" : "raw HTML";
    std::printf("1 MiB README, %s (%zu bytes) -> %zu bytes of HTML in %.1f ms\n", name,
                readme.size(), html.size(), ms.count());
    EXPECT_EQ(Has(html, "<td>2</td>"), mix != Mix::Prose);
    EXPECT_EQ(Has(html, "<b>raw html</b>"), mix == Mix::RawHtml);
  }
}

}  // namespace
}  // namespace hangar::web
