// Markdown cards to safe HTML (src/web/markdown.h; web::RenderMarkdown, SanitizeHtml):
// any README bytes. Whatever comes in, no element that can run or embed content may
// come out, nor a javascript: link.

#include <algorithm>

#include "fuzz_check.h"
#include "web/markdown.h"

using namespace hangar;

namespace {

// Whether `html` (lower-cased) opens an element the sanitizer must never let through.
bool HasDangerousTag(std::string html) {
  std::transform(html.begin(), html.end(), html.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (std::string_view tag : {"<script", "<style", "<iframe", "<object", "<embed", "<svg", "<math",
                               "<form", "<frame", "<base", "<meta", "<link"}) {
    if (html.find(tag) != std::string::npos) return true;
  }
  return html.find("href=\"javascript:") != std::string::npos ||
         html.find("src=\"javascript:") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  web::MarkdownOptions options;
  options.rewrite_relative = [](std::string_view url, web::UrlUse use) {
    return (use == web::UrlUse::Image ? "/resolve/main/" : "/blob/main/") + std::string(url);
  };
  std::string card = web::RenderMarkdown(text, options);
  FUZZ_CHECK(!HasDangerousTag(card));

  std::string clean = web::SanitizeHtml(text);
  FUZZ_CHECK(!HasDangerousTag(clean));
  return 0;
}
