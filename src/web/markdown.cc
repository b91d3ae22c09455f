#include "web/markdown.h"

#include "core/util.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <gumbo.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "services/repo/model_card.h"

namespace hangar::web {

namespace {

// ---- markdown → HTML (cmark-gfm) ----------------------------------------------------

// GFM's "tagfilter" extension is not attached: it would show <script>, <style>, <iframe>
// ... as literal text, while the sanitizer below removes them with their content.
constexpr const char* kExtensions[] = {"table", "tasklist", "autolink", "strikethrough"};

struct ParserDeleter {
  void operator()(cmark_parser* p) const { cmark_parser_free(p); }
};
struct NodeDeleter {
  void operator()(cmark_node* n) const { cmark_node_free(n); }
};

// A parsed document; the parser owns the extensions the renderer needs.
struct Document {
  std::unique_ptr<cmark_parser, ParserDeleter> parser;
  std::unique_ptr<cmark_node, NodeDeleter> root;
};

Document Parse(std::string_view markdown) {
  static std::once_flag registered;
  std::call_once(registered, [] { cmark_gfm_core_extensions_ensure_registered(); });
  Document doc;
  doc.parser.reset(cmark_parser_new(CMARK_OPT_DEFAULT));
  for (const char* name : kExtensions) {
    if (cmark_syntax_extension* ext = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(doc.parser.get(), ext);
    }
  }
  cmark_parser_feed(doc.parser.get(), markdown.data(), markdown.size());
  doc.root.reset(cmark_parser_finish(doc.parser.get()));
  return doc;
}

// CMARK_OPT_UNSAFE keeps raw HTML and every URL as written; without it cmark writes
// "<!-- raw HTML omitted -->" instead of raw HTML.
std::string Render(const Document& doc, int options) {
  char* html = cmark_render_html(doc.root.get(), options,
                                 cmark_parser_get_syntax_extensions(doc.parser.get()));
  std::string out(html ? html : "");
  std::free(html);
  return out;
}

bool HasRawHtml(cmark_node* root) {
  cmark_iter* it = cmark_iter_new(root);
  bool found = false;
  for (cmark_event_type ev; !found && (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
    cmark_node_type t = cmark_node_get_type(cmark_iter_get_node(it));
    found = ev == CMARK_EVENT_ENTER && (t == CMARK_NODE_HTML_BLOCK || t == CMARK_NODE_HTML_INLINE);
  }
  cmark_iter_free(it);
  return found;
}

// How deep raw HTML may nest before it is left out: the HTML parser's cost grows with
// tags × depth, and a README must not buy seconds of CPU with 100,000 open <div>s.
constexpr int kMaxHtmlDepth = 512;

bool IsVoidName(std::string_view name) {
  static constexpr std::string_view kVoid[] = {"area",   "base",  "br",    "col",  "embed",
                                               "hr",     "img",   "input", "link", "meta",
                                               "source", "track", "wbr"};
  for (auto v : kVoid) {
    if (name.size() == v.size() && std::equal(name.begin(), name.end(), v.begin(),
                                              [](char a, char b) { return (a | 0x20) == b; })) {
      return true;
    }
  }
  return false;
}

// An upper bound on the element nesting of `html`: start tags of non-void elements open,
// end tags close, unclosed ones count as open.
int NestingBound(std::string_view html) {
  int depth = 0, max_depth = 0;
  for (size_t i = html.find('<'); i != std::string_view::npos; i = html.find('<', i + 1)) {
    if (i + 1 >= html.size()) break;
    if (html[i + 1] == '/') {
      depth = depth > 0 ? depth - 1 : 0;
      continue;
    }
    size_t end = i + 1;
    while (end < html.size() && ((html[end] | 0x20) >= 'a' && (html[end] | 0x20) <= 'z')) ++end;
    if (end == i + 1 || IsVoidName(html.substr(i + 1, end - i - 1))) continue;
    size_t close = html.find('>', end);
    if (close != std::string_view::npos && html[close - 1] == '/') continue;  // <x ... />
    max_depth = std::max(max_depth, ++depth);
  }
  return max_depth;
}

// ---- HTML → allow-listed HTML (gumbo) -------------------------------------------------

// Dropped together with everything inside them.
bool DropsContent(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_FRAME:
    case GUMBO_TAG_FRAMESET:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_APPLET:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_FORM:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_TEMPLATE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_NOEMBED:
    case GUMBO_TAG_NOFRAMES:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_PLAINTEXT:
    case GUMBO_TAG_TITLE:
    case GUMBO_TAG_HEAD:
    case GUMBO_TAG_AUDIO:
    case GUMBO_TAG_VIDEO:
    case GUMBO_TAG_CANVAS:
    case GUMBO_TAG_BASE:
    case GUMBO_TAG_LINK:
    case GUMBO_TAG_META:
    case GUMBO_TAG_UNKNOWN:
      return true;
    default:
      return false;
  }
}

// Written out (with allowed attributes only); everything else is unwrapped.
bool Allowed(GumboTag t) {
  switch (t) {
    case GUMBO_TAG_P:
    case GUMBO_TAG_H1:
    case GUMBO_TAG_H2:
    case GUMBO_TAG_H3:
    case GUMBO_TAG_H4:
    case GUMBO_TAG_H5:
    case GUMBO_TAG_H6:
    case GUMBO_TAG_A:
    case GUMBO_TAG_IMG:
    case GUMBO_TAG_UL:
    case GUMBO_TAG_OL:
    case GUMBO_TAG_LI:
    case GUMBO_TAG_DL:
    case GUMBO_TAG_DT:
    case GUMBO_TAG_DD:
    case GUMBO_TAG_TABLE:
    case GUMBO_TAG_THEAD:
    case GUMBO_TAG_TBODY:
    case GUMBO_TAG_TFOOT:
    case GUMBO_TAG_TR:
    case GUMBO_TAG_TH:
    case GUMBO_TAG_TD:
    case GUMBO_TAG_CAPTION:
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_KBD:
    case GUMBO_TAG_SAMP:
    case GUMBO_TAG_EM:
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_B:
    case GUMBO_TAG_I:
    case GUMBO_TAG_U:
    case GUMBO_TAG_DEL:
    case GUMBO_TAG_S:
    case GUMBO_TAG_STRIKE:
    case GUMBO_TAG_INS:
    case GUMBO_TAG_MARK:
    case GUMBO_TAG_SMALL:
    case GUMBO_TAG_ABBR:
    case GUMBO_TAG_BLOCKQUOTE:
    case GUMBO_TAG_HR:
    case GUMBO_TAG_BR:
    case GUMBO_TAG_DIV:
    case GUMBO_TAG_SPAN:
    case GUMBO_TAG_DETAILS:
    case GUMBO_TAG_SUMMARY:
    case GUMBO_TAG_SUP:
    case GUMBO_TAG_SUB:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_CENTER:
      return true;
    default:
      return false;
  }
}

bool IsVoid(GumboTag t) {
  return t == GUMBO_TAG_IMG || t == GUMBO_TAG_BR || t == GUMBO_TAG_HR || t == GUMBO_TAG_INPUT;
}

void AppendEscaped(std::string& out, std::string_view s) { AppendEscapedMarkup(out, s); }

bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// `url` (entities already decoded by the parser) as it may be written, or "" when it must
// go. Browsers ignore tabs and newlines anywhere and C0 controls and spaces at the ends,
// so the scheme is judged with all of those removed.
std::string SafeUrl(std::string_view url, UrlUse use, const MarkdownOptions& options) {
  std::string kept;      // control characters removed, ends trimmed
  std::string squeezed;  // also without any whitespace: what the scheme is judged on
  for (char c : url) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;
    kept += c;
    if (u != ' ') squeezed += c;
  }
  size_t b = kept.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  kept = kept.substr(b, kept.find_last_not_of(' ') - b + 1);
  size_t colon = squeezed.find(':');
  size_t stop = squeezed.find_first_of("/?#");
  if (colon != std::string::npos && (stop == std::string::npos || colon < stop)) {
    std::string scheme;
    for (char c : squeezed.substr(0, colon)) {
      scheme += static_cast<char>(IsAsciiAlpha(c) ? (c | 0x20) : c);
    }
    bool ok = scheme == "http" || scheme == "https" || (scheme == "mailto" && use == UrlUse::Link);
    return ok ? kept : "";
  }
  char first = kept[0];
  if (first == '/' || first == '#' || first == '?' || !options.rewrite_relative) return kept;
  std::string rewritten = options.rewrite_relative(kept, use);
  // The rewritten URL is checked again, without a second rewrite.
  return rewritten.empty() ? "" : SafeUrl(rewritten, use, MarkdownOptions{});
}

// A class value kept only when it names code languages ("language-python"), the form
// cmark-gfm writes and highlighters read.
std::string SafeClass(std::string_view v) {
  std::string out;
  size_t i = 0;
  while (i < v.size()) {
    size_t j = v.find(' ', i);
    std::string_view token = v.substr(i, j == std::string_view::npos ? j : j - i);
    bool ok = token.substr(0, 9) == "language-" && token.size() > 9 && token.size() <= 64;
    for (char c : token) {
      ok = ok && (IsAsciiAlpha(c) || IsDigit(c) || c == '-' || c == '_' || c == '+' || c == '.');
    }
    if (ok) out += (out.empty() ? "" : " ") + std::string(token);
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

bool IsNumber(std::string_view v) {
  if (v.empty() || v.size() > 6) return false;
  for (char c : v) {
    if (!IsDigit(c) && c != '%') return false;
  }
  return true;
}

bool IsAlign(std::string_view v) {
  return v == "left" || v == "right" || v == "center" || v == "justify";
}

class Sanitizer {
 public:
  Sanitizer(const MarkdownOptions& options, size_t size_hint) : options_(options) {
    out_.reserve(size_hint + size_hint / 8);
  }

  // Iterative walk: deeply nested input must not exhaust the stack.
  std::string Run(const GumboNode* root) {
    struct Frame {
      const GumboNode* node;
      unsigned next_child;
      std::string close;  // what ends this element ("" when unwrapped)
    };
    std::vector<Frame> stack;
    stack.push_back({root, 0, ""});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const GumboVector& children = top.node->v.element.children;
      if (top.next_child >= children.length) {
        out_ += top.close;
        stack.pop_back();
        continue;
      }
      const auto* child = static_cast<const GumboNode*>(children.data[top.next_child++]);
      switch (child->type) {
        case GUMBO_NODE_TEXT:
        case GUMBO_NODE_WHITESPACE:
        case GUMBO_NODE_CDATA:
          AppendEscaped(out_, child->v.text.text);
          break;
        case GUMBO_NODE_ELEMENT:
        case GUMBO_NODE_TEMPLATE: {
          std::string close;
          if (!Open(child, close)) break;  // dropped with its content
          stack.push_back({child, 0, std::move(close)});
          break;
        }
        default:  // comments, the document
          break;
      }
    }
    return std::move(out_);
  }

 private:
  // Writes the start tag of `el` if it is kept; false when `el` and its content go.
  bool Open(const GumboNode* el, std::string& close) {
    const GumboElement& e = el->v.element;
    if (e.tag_namespace != GUMBO_NAMESPACE_HTML || DropsContent(e.tag)) return false;
    if (!Allowed(e.tag)) return true;  // unwrapped: children still visited
    std::string attrs;
    switch (e.tag) {
      case GUMBO_TAG_A: {
        const GumboAttribute* href = gumbo_get_attribute(&e.attributes, "href");
        std::string url = href ? SafeUrl(href->value, UrlUse::Link, options_) : "";
        if (url.empty()) return true;  // no safe target: just its text
        AddAttr(attrs, "href", url);
        attrs += " rel=\"nofollow noopener\"";
        break;
      }
      case GUMBO_TAG_IMG: {
        const GumboAttribute* src = gumbo_get_attribute(&e.attributes, "src");
        std::string url = src ? SafeUrl(src->value, UrlUse::Image, options_) : "";
        if (url.empty()) return false;
        AddAttr(attrs, "src", url);
        break;
      }
      case GUMBO_TAG_INPUT: {  // task-list checkboxes only, never editable
        const GumboAttribute* type = gumbo_get_attribute(&e.attributes, "type");
        if (!type || std::string_view(type->value) != "checkbox") return false;
        attrs += " type=\"checkbox\" disabled=\"\"";
        if (gumbo_get_attribute(&e.attributes, "checked")) attrs += " checked=\"\"";
        break;
      }
      default:
        break;
    }
    for (unsigned i = 0; i < e.attributes.length; ++i) {
      const auto* a = static_cast<const GumboAttribute*>(e.attributes.data[i]);
      AddAllowedAttr(e.tag, a->name, a->value, attrs);
    }
    std::string_view name = gumbo_normalized_tagname(e.tag);
    out_ += '<';
    out_ += name;
    out_ += attrs;
    out_ += '>';
    if (IsVoid(e.tag)) return false;  // no content, no end tag
    // A parser drops one newline right after <pre>; keep the content's own.
    if (e.tag == GUMBO_TAG_PRE && e.children.length > 0) {
      const auto* first = static_cast<const GumboNode*>(e.children.data[0]);
      if ((first->type == GUMBO_NODE_TEXT || first->type == GUMBO_NODE_WHITESPACE) &&
          first->v.text.text[0] == '\n') {
        out_ += '\n';
      }
    }
    close = "</" + std::string(name) + ">";
    return true;
  }

  // The generic attributes (URLs and task-list inputs are handled by Open).
  static void AddAllowedAttr(GumboTag tag, std::string_view name, std::string_view value,
                             std::string& attrs) {
    if (name == "title" || (name == "alt" && tag == GUMBO_TAG_IMG)) {
      AddAttr(attrs, name, value);
    } else if ((name == "width" || name == "height") &&
               (tag == GUMBO_TAG_IMG || tag == GUMBO_TAG_TD || tag == GUMBO_TAG_TH ||
                tag == GUMBO_TAG_TABLE) &&
               IsNumber(value)) {
      AddAttr(attrs, name, value);
    } else if (name == "align" && tag != GUMBO_TAG_A && tag != GUMBO_TAG_INPUT && IsAlign(value)) {
      AddAttr(attrs, name, value);
    } else if ((name == "colspan" || name == "rowspan") &&
               (tag == GUMBO_TAG_TD || tag == GUMBO_TAG_TH) && IsNumber(value)) {
      AddAttr(attrs, name, value);
    } else if (name == "start" && tag == GUMBO_TAG_OL && IsNumber(value)) {
      AddAttr(attrs, name, value);
    } else if (name == "open" && tag == GUMBO_TAG_DETAILS) {
      attrs += " open=\"\"";
    } else if (name == "class" && (tag == GUMBO_TAG_CODE || tag == GUMBO_TAG_PRE)) {
      std::string cls = SafeClass(value);
      if (!cls.empty()) AddAttr(attrs, name, cls);
    }
  }

  static void AddAttr(std::string& attrs, std::string_view name, std::string_view value) {
    attrs += ' ';
    attrs += name;
    attrs += "=\"";
    AppendEscaped(attrs, value);
    attrs += '"';
  }

  const MarkdownOptions& options_;
  std::string out_;
};

// Checks (and rewrites) every link and image URL of the tree with SafeUrl: a link with an
// unsafe target becomes its text, an image with an unsafe source goes.
void SanitizeUrls(cmark_node* root, const MarkdownOptions& options) {
  std::vector<cmark_node*> nodes;
  cmark_iter* it = cmark_iter_new(root);
  for (cmark_event_type ev; (ev = cmark_iter_next(it)) != CMARK_EVENT_DONE;) {
    cmark_node* n = cmark_iter_get_node(it);
    cmark_node_type t = cmark_node_get_type(n);
    if (ev == CMARK_EVENT_ENTER && (t == CMARK_NODE_LINK || t == CMARK_NODE_IMAGE)) {
      nodes.push_back(n);
    }
  }
  cmark_iter_free(it);
  // Innermost first, so a node is changed before any ancestor is freed.
  for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) {
    bool link = cmark_node_get_type(*n) == CMARK_NODE_LINK;
    const char* url = cmark_node_get_url(*n);
    std::string safe = SafeUrl(url ? url : "", link ? UrlUse::Link : UrlUse::Image, options);
    if (!safe.empty()) {
      cmark_node_set_url(*n, safe.c_str());
      continue;
    }
    if (link) {
      while (cmark_node* child = cmark_node_first_child(*n)) cmark_node_insert_before(*n, child);
    }
    cmark_node_free(*n);
  }
}

// cmark's links with rel="nofollow noopener" added. Only for HTML without raw HTML, where
// '<a href="' can only start a link cmark wrote (text is escaped, hrefs have no '"').
std::string AddLinkRel(std::string html) {
  constexpr std::string_view kOpen = "<a href=\"";
  constexpr std::string_view kRel = " rel=\"nofollow noopener\"";
  std::string out;
  out.reserve(html.size() + html.size() / 16);
  size_t pos = 0;
  for (size_t a = html.find(kOpen); a != std::string::npos; a = html.find(kOpen, pos)) {
    size_t quote = html.find('"', a + kOpen.size());
    if (quote == std::string::npos) break;
    out.append(html, pos, quote + 1 - pos);
    out += kRel;
    pos = quote + 1;
  }
  out.append(html, pos, std::string::npos);
  return out;
}

}  // namespace

std::string SanitizeHtml(std::string_view html, const MarkdownOptions& options) {
  GumboOptions gopts = kGumboDefaultOptions;
  gopts.fragment_context = GUMBO_TAG_DIV;
  gopts.fragment_namespace = GUMBO_NAMESPACE_HTML;
  gopts.max_errors = 0;  // errors are not kept: only the tree is used
  GumboOutput* parsed = gumbo_parse_with_options(&gopts, html.data(), html.size());
  std::string out = Sanitizer(options, html.size()).Run(parsed->root);
  gumbo_destroy_output(&gopts, parsed);
  return out;
}

std::string RenderMarkdown(std::string_view markdown, const MarkdownOptions& options) {
  Document doc = Parse(services::SplitFrontMatter(markdown).body);
  if (HasRawHtml(doc.root.get())) {
    std::string html = Render(doc, CMARK_OPT_UNSAFE);
    if (NestingBound(html) <= kMaxHtmlDepth) return SanitizeHtml(html, options);
    // Nested too deeply to parse cheaply: rendered below with the raw HTML left out.
  }
  // No raw HTML: cmark writes only its own elements and escapes all text, so checking
  // URLs in the tree is enough, and the HTML parser (most of the cost) is skipped.
  SanitizeUrls(doc.root.get(), options);
  return AddLinkRel(Render(doc, CMARK_OPT_DEFAULT));
}

}  // namespace hangar::web
