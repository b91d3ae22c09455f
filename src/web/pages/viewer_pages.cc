// The dataset viewer's pages (issue 15 point 4): a dataset's rows as a table with its
// subsets and splits, pages, search and filter, rendered on the server from the same
// ViewerService answers the API gives (so the page works without JavaScript); hangar.js
// then pages, searches and filters in place through the API and draws each column's
// histogram from /statistics. The embed form is the same table without the site's frame,
// for other sites' iframes.

#include <boost/json.hpp>

#include <charconv>
#include <cmath>

#include "core/util.h"
#include "services/viewer/viewer_service.h"
#include "web/pages/pages.h"

namespace hangar::web {
namespace {

namespace json = boost::json;
using services::viewer::ViewerAnswer;

constexpr int64_t kPageRows = 100;
constexpr size_t kShownCellChars = 200;  // longer cells fold into a <details>

bool EndsWithAny(std::string_view s, std::initializer_list<std::string_view> suffixes) {
  std::string lower = AsciiLower(s);
  for (auto x : suffixes)
    if (lower.ends_with(x)) return true;
  return false;
}

// `text` cut to at most `n` bytes, not inside a UTF-8 sequence.
std::string_view CutUtf8(std::string_view text, size_t n) {
  if (text.size() <= n) return text;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

// A double as JavaScript's String(x) writes it (ECMA-262 Number::toString: the shortest
// digits that round-trip, in fixed notation for exponents -7 < e < 21), so a cell reads
// the same rendered here or by hangar.js; Boost.JSON would write 24 as 2.4E1.
std::string NumberText(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x < 0 ? "-Infinity" : "Infinity";
  if (x == 0) return "0";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view s(buf, end - buf);  // -d.ddde+XX
  std::string out = s.starts_with('-') ? "-" : "";
  if (!out.empty()) s.remove_prefix(1);
  const size_t e = s.find('e');
  std::string digits(s.substr(0, e));
  std::erase(digits, '.');
  int exp = 0;
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), exp);
  const int k = static_cast<int>(digits.size()), n = exp + 1;  // the point goes after n digits
  if (k <= n && n <= 21) return out + digits + std::string(n - k, '0');
  if (0 < n && n <= 21) return out + digits.substr(0, n) + "." + digits.substr(n);
  if (-6 < n && n <= 0) return out + "0." + std::string(-n, '0') + digits;
  out += digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "");
  return out + (exp < 0 ? "e-" : "e+") + std::to_string(std::abs(exp));
}

// One cell as HTML: null in grey, an image or audio URL as media, long text folded.
std::string CellHtml(const json::value& v) {
  if (v.is_null()) return "<span class=\"null\">null</span>";
  std::string text = v.is_string()   ? std::string(v.as_string())
                     : v.is_double() ? NumberText(v.as_double())
                                     : json::serialize(v);
  if (v.is_string() &&
      (text.starts_with("https://") || text.starts_with("http://") || text.starts_with("/"))) {
    std::string src = EscapeHtml(text);
    if (EndsWithAny(text, {".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg"}))
      return "<img class=\"cell-media\" loading=\"lazy\" alt=\"\" src=\"" + src + "\">";
    if (EndsWithAny(text, {".wav", ".mp3", ".ogg", ".flac", ".opus"}))
      return "<audio class=\"cell-media\" controls preload=\"none\" src=\"" + src + "\"></audio>";
  }
  if (text.size() <= kShownCellChars) return EscapeHtml(text);
  return "<details class=\"long\"><summary>" + EscapeHtml(CutUtf8(text, kShownCellChars)) +
         "…</summary>" + EscapeHtml(text) + "</details>";
}

// A short type label for a column header from its feature ("int64", "list<string>", "dict").
std::string TypeLabel(const json::value& feature) {
  const auto* o = feature.if_object();
  if (!o) return "list";
  auto t = o->find("_type");
  if (t == o->end()) return "dict";
  if (t->value() == "Value") return std::string(o->at("dtype").as_string());
  if (t->value() == "List") return "list<" + TypeLabel(o->at("feature")) + ">";
  return std::string(t->value().as_string());
}

std::string QueryValue(const http::Request& req, std::string_view key) {
  auto v = req.Query(key);
  return v ? std::string(TrimBlanks(*v)) : std::string();
}

// The page's own URL with `offset` (and the search or filter it shows).
std::string PageUrl(const std::string& base, const std::string& q, const std::string& where,
                    const std::string& orderby, int64_t offset) {
  std::string url = base + "?offset=" + std::to_string(offset);
  if (!q.empty()) url += "&q=" + PercentEncode(q);
  if (!where.empty()) url += "&where=" + PercentEncode(where);
  if (!orderby.empty()) url += "&orderby=" + PercentEncode(orderby);
  return url;
}

// The configs and their splits as switcher links; sets `config` and `split` to the first
// split when the URL named none.
List SplitLinks(const json::object& splits, const std::string& viewer_url, std::string& config,
                std::string& split) {
  List configs;
  Data current;
  std::string current_config;
  List links;
  auto flush = [&] {
    if (current_config.empty()) return;
    current.set("name", current_config);
    current.set("splits", links);
    configs.push_back(current);
    current = Data();
    links = List();
  };
  for (const auto& s : splits.at("splits").as_array()) {
    std::string c(s.at("config").as_string()), sp(s.at("split").as_string());
    if (config.empty()) config = c, split = sp;
    if (c != current_config) {
      flush();
      current_config = c;
    }
    Data link;
    link.set("split", sp);
    link.set("url", viewer_url + "/" + EncodeSegment(c) + "/" + EncodeSegment(sp));
    link.set("on", c == config && sp == split);
    links.push_back(link);
  }
  flush();
  return configs;
}

// The table of one page of rows (an answer of /rows, /search or /filter).
void SetTable(Data& d, const ViewerAnswer& answer, int64_t offset, const std::string& base,
              const std::string& q, const std::string& where, const std::string& orderby) {
  const auto& body = answer.body;
  List columns;
  std::vector<std::string> names;
  for (const auto& f : body.at("features").as_array()) {
    Data c;
    names.emplace_back(f.at("name").as_string());
    c.set("name", names.back());
    c.set("type", TypeLabel(f.at("type")));
    columns.push_back(c);
  }
  List rows;
  const auto& page = body.at("rows").as_array();
  for (const auto& r : page) {
    Data row;
    row.set("row_idx", std::to_string(r.at("row_idx").as_int64()));
    List cells;
    const auto& cellmap = r.at("row").as_object();
    for (const auto& n : names) {
      Data cell;
      auto it = cellmap.find(n);
      cell.set("html", CellHtml(it == cellmap.end() ? json::value() : it->value()));
      cells.push_back(cell);
    }
    row.set("cells", cells);
    rows.push_back(row);
  }
  int64_t total = body.at("num_rows_total").as_int64();
  Data table;
  table.set("columns", columns);
  table.set("rows", rows);
  table.set("first", std::to_string(page.empty() ? 0 : offset + 1));
  table.set("last", std::to_string(offset + static_cast<int64_t>(page.size())));
  table.set("total", std::to_string(total));
  table.set("partial", body.at("partial").as_bool());
  if (offset > 0)
    table.set("prev_url",
              PageUrl(base, q, where, orderby, std::max<int64_t>(0, offset - kPageRows)));
  if (offset + kPageRows < total)
    table.set("next_url", PageUrl(base, q, where, orderby, offset + kPageRows));
  d.set("table", table);
}

Result<http::Response> ViewerPage(WebDeps& deps, PageContext& ctx, http::Request& req, bool embed) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, RepoType::Dataset));
  auto* viewer = deps.viewer;
  if (!viewer)
    return MakeError(ErrorCode::NotFound, "the dataset viewer is turned off on this hub");
  const RepoId id = repo.record.Id();
  const std::string repo_url = RepoPath(id);
  const std::string viewer_url = repo_url + (embed ? "/embed/viewer" : "/viewer");
  std::string config, split;
  if (!req.Param("config").empty()) {
    HANGAR_ASSIGN_OR_RETURN(config, DecodedParam(req, "config"));
    HANGAR_ASSIGN_OR_RETURN(split, DecodedParam(req, "split"));
  }
  Data d = RepoHeader(repo, ctx, repo.record.default_branch, "viewer");
  d.set("embed", embed);
  d.set("dataset", id.Id());
  d.set("embed_url", req.base_url + repo_url + "/embed/viewer");
  auto splits = viewer->Splits(ctx.principal, id, "");
  if (!splits) {
    d.set("message", splits.error().code == ErrorCode::ResponseNotReady
                         ? std::string("The viewer is being prepared: the dataset's Parquet "
                                       "export is running. Reload in a moment.")
                         : "The viewer cannot show this dataset: " + splits.error().message);
  } else if (splits->body.at("splits").as_array().empty()) {
    d.set("message", std::string("No split of this dataset could be read."));
  } else {
    d.set("configs", SplitLinks(splits->body, viewer_url, config, split));
    d.set("has_splits", true);
  }
  const std::string base = viewer_url + "/" + EncodeSegment(config) + "/" + EncodeSegment(split);
  const std::string q = QueryValue(req, "q"), where = QueryValue(req, "where"),
                    orderby = QueryValue(req, "orderby");
  int64_t offset = 0;
  std::string raw = QueryValue(req, "offset");
  std::from_chars(raw.data(), raw.data() + raw.size(), offset);
  offset = std::max<int64_t>(0, offset);
  d.set("config", config);
  d.set("split", split);
  d.set("page_url", base);
  d.set("q", q);
  d.set("where", where);
  d.set("orderby", orderby);
  d.set("filtered", !q.empty() || !where.empty() || !orderby.empty());
  std::string api = "/rows?dataset=" + PercentEncode(id.Id()) + "&config=" + PercentEncode(config) +
                    "&split=" + PercentEncode(split);
  d.set("api_path", api);
  d.set("api_url", api);
  if (splits && !config.empty()) {
    auto page =
        !q.empty() ? viewer->Search(ctx.principal, id, config, split, q, offset, kPageRows)
        : !where.empty() || !orderby.empty()
            ? viewer->Filter(ctx.principal, id, config, split, where, orderby, offset, kPageRows)
            : viewer->Rows(ctx.principal, id, config, split, offset, kPageRows);
    if (page) {
      SetTable(d, *page, offset, base, q, where, orderby);
    } else {
      Data e;
      e.set("code", std::string(Describe(page.error().code).name));
      e.set("text", page.error().message);
      d.set("error", e);
    }
  }
  HANGAR_ASSIGN_OR_RETURN(auto res, Html(ctx, 200, id.Id() + " · Viewer", "viewer", d, {},
                                         embed ? "embed_layout" : "layout"));
  if (embed)  // other sites may frame the embed; it still runs only this site's scripts
    res.SetHeader("Content-Security-Policy",
                  "default-src 'self'; img-src 'self' https: data:; media-src 'self' https:; "
                  "script-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'; "
                  "form-action 'self'; frame-ancestors *");
  return res;
}

}  // namespace

void AddViewerPages(http::Router& router, WebDeps& deps) {
  const auto read = http::Requirement::Repo(RepoType::Dataset, Access::Read);
  for (bool embed : {false, true}) {
    const std::string base =
        std::string("/datasets/{ns}/{name}") + (embed ? "/embed/viewer" : "/viewer");
    auto page = [&deps, embed](PageContext& ctx, http::Request& req) {
      return ViewerPage(deps, ctx, req, embed);
    };
    AddPage(router, deps, http::Method::Get, base, read, page);
    AddPage(router, deps, http::Method::Get, base + "/{config}/{split}", read, page);
  }
}

}  // namespace hangar::web
