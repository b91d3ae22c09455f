#pragma once
// Markdown (model and dataset cards, issue #4) to safe HTML: cmark-gfm with the GFM
// extensions renders it, raw HTML included, and an allow-list sanitizer over libgumbo's
// parse tree writes the HTML back out, so nothing a README contains can run script,
// load frames or style the page.

#include <functional>
#include <string>
#include <string_view>

namespace hangar::web {

// What a URL in the rendered card points at, for MarkdownOptions::rewrite_relative.
enum class UrlUse { Link, Image };

struct MarkdownOptions {
  // Called for every relative URL (no scheme, not starting with '/', '#' or '?') of a link
  // or image, already known to be safe; returns the URL to use instead (still checked
  // and escaped after). The repo home page maps "images/x.png" to the file's /resolve URL.
  // Empty: relative URLs are kept as written.
  std::function<std::string(std::string_view url, UrlUse use)> rewrite_relative;
};

// `markdown` (UTF-8, any size; a leading YAML front matter block between "---" lines is
// left out) as an HTML fragment. Tables, task lists, autolinks and strikethrough render as
// on GitHub. Raw HTML survives only through the allow-list of SanitizeHtml. Never fails:
// input that is not markdown renders as text.
std::string RenderMarkdown(std::string_view markdown, const MarkdownOptions& options = {});

// `html` (a fragment, any input) re-serialized keeping only allow-listed elements and
// attributes: text and formatting, headings, lists, tables, code, quotes, images, links,
// details/summary and disabled task-list checkboxes. Elements that can run or embed
// content (script, style, iframe, object, embed, svg, math, form, ...) are dropped with
// their content; other unknown elements are dropped but their text kept. href/src must be
// http, https, mailto or relative; links get rel="nofollow noopener". Every text and
// attribute value is escaped anew.
std::string SanitizeHtml(std::string_view html, const MarkdownOptions& options = {});

}  // namespace hangar::web
