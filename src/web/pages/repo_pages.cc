// Repo home (card + files), tree and blob views, repo settings (issue #4: "repo home",
// "tree and blob views at any revision"). Content comes from ContentService (LFS
// pointers followed, trees cached per commit); cards from README.md via web/markdown.

#include <boost/json/serialize.hpp>

#include <algorithm>
#include <charconv>

#include "core/lru.h"
#include "core/util.h"
#include "services/mirror/mirror_service.h"
#include "services/repo/model_card.h"
#include "web/markdown.h"
#include "web/pages/pages.h"

namespace hangar::web {

// A text file as its lines table, with its line count (PageCaches::code).
struct RenderedCode {
  std::string html;
  size_t lines = 0;
};

// A rendered model card (PageCaches::cards).
struct RenderedCard {
  std::string html;
  std::vector<std::pair<std::string, std::string>> meta;
  std::string error;  // why the front matter could not be read, or ""
  // A gated repo's ask form, as the public hub reads it from the card: extra_gated_prompt,
  // and extra_gated_fields as (label, "checkbox" | "text") in card order.
  std::string gate_prompt;
  std::vector<std::pair<std::string, std::string>> gate_fields;
};

namespace {

constexpr uint64_t kMaxShownBytes = 1 << 20;  // larger text files are not rendered
constexpr uint64_t kMaxCardBytes = 1 << 20;   // README.md rendered as the card

std::string_view Extension(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto dot = base.rfind('.');
  return dot == std::string_view::npos || dot == 0 ? std::string_view() : base.substr(dot + 1);
}

bool IsImage(std::string_view path) {
  static const char* kExt[] = {"png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "ico"};
  std::string ext = AsciiLower(Extension(path));
  return std::find_if(std::begin(kExt), std::end(kExt), [&](const char* e) { return ext == e; }) !=
         std::end(kExt);
}

// highlight.js language names by file extension; "" = no highlighting.
std::string_view LanguageOf(std::string_view path) {
  static const std::pair<const char*, const char*> kLangs[] = {
      {"py", "python"},     {"js", "javascript"}, {"mjs", "javascript"},
      {"ts", "typescript"}, {"json", "json"},     {"md", "markdown"},
      {"yaml", "yaml"},     {"yml", "yaml"},      {"sh", "bash"},
      {"c", "c"},           {"h", "cpp"},         {"cc", "cpp"},
      {"cpp", "cpp"},       {"hpp", "cpp"},       {"rs", "rust"},
      {"go", "go"},         {"java", "java"},     {"toml", "ini"},
      {"cfg", "ini"},       {"ini", "ini"},       {"html", "xml"},
      {"xml", "xml"},       {"css", "css"},       {"sql", "sql"},
      {"rb", "ruby"},       {"ipynb", "json"},    {"r", "r"},
      {"jl", "julia"},      {"lua", "lua"},       {"dockerfile", "dockerfile"},
      {"txt", ""}};
  std::string ext = AsciiLower(Extension(path));
  for (const auto& [e, l] : kLangs) {
    if (ext == e) return l;
  }
  return {};
}

// The file as a table of lines with anchors #L1, #L2, ... (escaped here, highlighted in
// the browser by hangar.js when JavaScript runs).
std::string CodeTable(std::string_view text, std::string_view lang, size_t* lines) {
  const size_t rows = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  std::string out;
  // Escaping grows the text a little; each row adds ~80 bytes of markup.
  out.reserve(text.size() + text.size() / 8 + rows * 96 + 256);
  out += "<table class=\"code\" id=\"code\"";
  if (!lang.empty()) {
    out += " data-lang=\"";
    AppendEscapedMarkup(out, lang);
    out += '"';
  }
  out += ">\n";
  size_t n = 0;
  char num[24];
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    auto [end, ec] = std::to_chars(num, num + sizeof num, ++n);
    const std::string_view digits(num, static_cast<size_t>(end - num));
    out += "<tr id=\"L";
    out += digits;
    out += "\"><td class=\"ln\"><a href=\"#L";
    out += digits;
    out += "\">";
    out += digits;
    out += "</a></td><td class=\"src\">";
    AppendEscapedMarkup(out, line);
    out += "</td></tr>\n";
  }
  out += "</table>\n";
  *lines = n;
  return out;
}

// The lines table of text file `file`, or null for binary content. Kept by blob oid and
// language: a 7,000-line file is 7,000 rows to build.
Result<std::shared_ptr<const RenderedCode>> Code(WebDeps& deps, const services::RepoHandle& repo,
                                                 const Oid& commit, const services::Entry& file,
                                                 std::string_view path) {
  auto& cache = deps.caches.code;
  const std::string_view lang = LanguageOf(path);
  const std::string key = file.git.oid.Hex() + " " + std::string(lang);
  if (auto hit = cache.Get(key)) return *hit;
  HANGAR_ASSIGN_OR_RETURN(auto text, deps.content.ReadText(repo, commit, path, kMaxShownBytes));
  if (!text || LooksBinary(*text)) return std::shared_ptr<const RenderedCode>();
  auto code = std::make_shared<RenderedCode>();
  code->html = CodeTable(*text, lang, &code->lines);
  cache.Put(key, code, key.size() + code->html.size());
  return std::shared_ptr<const RenderedCode>(std::move(code));
}

std::string ParentDir(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

std::string BaseName(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The entries of `dir` for templates/_file_table.mustache.
Data FileTable(const services::RepoHandle& repo, std::string_view rev,
               const std::vector<services::Entry>& entries, std::string_view dir) {
  const std::string base = RepoPath(repo.record.Id());
  const std::string rev_url = EncodeSegment(rev);
  List list;
  // Directories first, as forges list them.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& e : entries) {
      if (e.git.is_dir != (pass == 0)) continue;
      Data o;
      o.set("label", BaseName(e.git.path));
      o.set("dir", e.git.is_dir);
      o.set("url",
            base + (e.git.is_dir ? "/tree/" : "/blob/") + rev_url + "/" + EncodePath(e.git.path));
      if (!e.git.is_dir) {
        o.set("size", HumanSize(e.Size()));
        o.set("download_url",
              base + "/resolve/" + rev_url + "/" + EncodePath(e.git.path) + "?download=true");
      }
      if (e.lfs) {
        o.set("lfs", true);
        o.set("sha256", e.lfs->oid.Hex());
      }
      list.push_back(o);
    }
  }
  Data d;
  d.set("entries", list);
  if (!dir.empty()) {
    std::string parent = ParentDir(dir);
    d.set("parent_url",
          base + "/tree/" + rev_url + (parent.empty() ? "" : "/" + EncodePath(parent)));
  }
  return d;
}

void Merge(Data& into, const Data& from, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (const Data* v = from.get(k)) into.set(k, *v);
  }
}

// The card's front-matter fields shown as badges, as (key, value) pairs.
std::vector<std::pair<std::string, std::string>> CardMeta(const boost::json::object& card) {
  std::vector<std::pair<std::string, std::string>> meta;
  auto add = [&](const char* key, const boost::json::value& v) {
    meta.emplace_back(key, v.is_string() ? std::string(v.as_string()) : boost::json::serialize(v));
  };
  for (const char* key : {"license", "library_name", "pipeline_tag", "base_model", "language"}) {
    if (auto* v = card.if_contains(key)) add(key, *v);
  }
  for (const char* key : {"tags", "datasets"}) {
    auto* v = card.if_contains(key);
    if (!v) continue;
    if (!v->is_array()) {
      add(key, *v);
      continue;
    }
    for (const auto& item : v->as_array())
      add(key == std::string_view("tags") ? "tag" : "dataset", item);
  }
  return meta;
}

// The gate form's prompt and fields of a card (extra_gated_prompt, extra_gated_fields: a
// map of label to a type name, or to {type: …}); a type other than checkbox is a text box.
void ReadGateForm(const boost::json::object& card, RenderedCard& out) {
  if (auto* prompt = card.if_contains("extra_gated_prompt"); prompt && prompt->is_string())
    out.gate_prompt = std::string(prompt->as_string());
  auto* fields = card.if_contains("extra_gated_fields");
  if (fields == nullptr || !fields->is_object()) return;
  for (const auto& f : fields->as_object()) {
    const boost::json::value* type = &f.value();
    if (type->is_object()) type = type->as_object().if_contains("type");
    const bool checkbox = type && type->is_string() && type->as_string() == "checkbox";
    out.gate_fields.emplace_back(std::string(f.key()), checkbox ? "checkbox" : "text");
    if (out.gate_fields.size() == 20) break;  // GateService takes no more
  }
}

// A README rendered for the repo home page.
// The card of `commit`'s README.md, or null when there is none. Rendering a large card
// takes long (cmark + the sanitizer), so cards are kept by README blob oid and the URL
// prefix its relative links were rewritten with.
Result<std::shared_ptr<const RenderedCard>> Card(WebDeps& deps, const services::RepoHandle& repo,
                                                 const Oid& commit, std::string_view rev) {
  auto& cache = deps.caches.cards;
  auto file = deps.content.Stat(repo, commit, "README.md");
  if (!file) {
    if (file.error().code == ErrorCode::EntryNotFound) return std::shared_ptr<const RenderedCard>();
    return std::move(file).error();
  }
  const std::string resolve = RepoPath(repo.record.Id()) + "/resolve/" + EncodeSegment(rev) + "/";
  const std::string key = file->git.oid.Hex() + " " + resolve;
  if (auto hit = cache.Get(key)) return *hit;
  HANGAR_ASSIGN_OR_RETURN(auto text,
                          deps.content.ReadText(repo, commit, "README.md", kMaxCardBytes));
  if (!text) return std::shared_ptr<const RenderedCard>();
  auto card = std::make_shared<RenderedCard>();
  if (auto front = services::ParseCardData(*text); !front) {
    card->error = front.error().message;
  } else if (*front) {
    card->meta = CardMeta(**front);
    ReadGateForm(**front, *card);
  }
  MarkdownOptions options;
  options.rewrite_relative = [&resolve](std::string_view url, UrlUse) {
    return resolve + std::string(url);
  };
  card->html = RenderMarkdown(*text, options);
  cache.Put(key, card, key.size() + card->html.size() + 256);
  return std::shared_ptr<const RenderedCard>(std::move(card));
}

// The SSH clone URL of `id` (docs/ssh.md), "" when [ssh] is off: scp-like
// ("git@hub:alice/m.git") on port 22, else "ssh://git@hub:2222/alice/m.git". The host is
// [ssh] host, else that of `base_url` ("https://hub.example.com:8443" -> "hub.example.com").
std::string SshCloneUrl(const config::SshConfig& ssh, std::string_view base_url, const RepoId& id) {
  if (!ssh.enabled) return "";
  std::string host = ssh.host;
  if (host.empty()) {
    std::string_view h = base_url.substr(
        base_url.find("://") == std::string_view::npos ? 0 : base_url.find("://") + 3);
    h = h.substr(0, h.find('/'));
    // "[::1]:8080" keeps its brackets; "host:8080" loses its port.
    size_t end = h.starts_with('[') ? h.find(']') + 1 : h.find(':');
    host = std::string(h.substr(0, end));
  }
  const std::string path = RepoPath(id).substr(1) + ".git";
  if (ssh.port == 22) return ssh.user + "@" + host + ":" + path;
  return "ssh://" + ssh.user + "@" + host + ":" + std::to_string(ssh.port) + "/" + path;
}

// A pull mirror's banner: its upstream (password as ***), its last sync and its error.
Data MirrorState(const db::MirrorRecord& m, Access access) {
  Data d;
  d.set("url", services::MirrorService::ShownUrl(m, access));
  if (m.last_success_at) d.set("synced", Ago(*m.last_success_at));
  if (!m.last_error.empty()) {
    d.set("error", m.last_error);
    if (m.last_sync_at) d.set("when", Ago(*m.last_sync_at));
  }
  return d;
}

Result<http::Response> RepoHome(WebDeps& deps, PageContext& ctx, http::Request& req,
                                RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  const std::string rev = repo.record.default_branch;
  Data data = RepoHeader(repo, ctx, rev, "card");
  data.set("clone_url", req.base_url + RepoPath(repo.record.Id()));
  // Set only when [ssh] is on: the template's section shows any string, "" included.
  if (std::string ssh = SshCloneUrl(deps.config.ssh, req.base_url, repo.record.Id());
      !ssh.empty()) {
    data.set("ssh_clone_url", ssh);
  }
  HANGAR_TRY(SetLikes(deps, ctx, repo, data));
  if (repo.record.is_mirror && deps.mirrors != nullptr) {
    HANGAR_ASSIGN_OR_RETURN(auto pull, deps.mirrors->PullOf(repo.record.id));
    if (pull) data.set("mirror", MirrorState(*pull, repo.access));
  }
  auto commit = deps.content.ResolveRevision(repo, rev);
  if (!commit) {
    if (commit.error().code != ErrorCode::RevisionNotFound) return std::move(commit).error();
    data.set("entries", List());  // an empty repo: nothing pushed yet
    return Html(ctx, 200, repo.record.ns + "/" + repo.record.name, "repo_home", data);
  }
  HANGAR_ASSIGN_OR_RETURN(auto info, deps.content.Commit(repo, *commit));
  Data last;
  last.set("id", info.id.Hex());
  last.set("short", ShortOid(info.id));
  last.set("summary", info.summary);
  last.set("author", info.author_name);
  last.set("when", Ago(info.author_time));
  data.set("last_commit", last);
  HANGAR_ASSIGN_OR_RETURN(auto entries, deps.content.ListTree(repo, *commit, "", false));
  Merge(data, FileTable(repo, rev, *entries, ""), {"entries"});
  HANGAR_ASSIGN_OR_RETURN(auto card, Card(deps, repo, *commit, rev));
  static const std::vector<std::pair<std::string, std::string>> kNoFields;
  HANGAR_TRY(SetGate(deps, ctx, repo, card ? card->gate_prompt : std::string(),
                     card ? card->gate_fields : kNoFields, data));
  if (card) {
    data.set("card", card->html);
    if (!card->error.empty()) data.set("card_error", card->error);
    List meta;
    for (const auto& [k, v] : card->meta) {
      Data o;
      o.set("key", k);
      o.set("value", v);
      meta.push_back(o);
    }
    data.set("has_meta", !card->meta.empty());
    data.set("meta", meta);
  }
  return Html(ctx, 200, repo.record.ns + "/" + repo.record.name, "repo_home", data);
}

Result<http::Response> Tree(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepoMetadata(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string rev, DecodedParam(req, "rev"));
  HANGAR_ASSIGN_OR_RETURN(std::string path, DecodedParam(req, "path"));
  while (path.ends_with('/')) path.pop_back();
  HANGAR_ASSIGN_OR_RETURN(Oid commit, deps.content.ResolveRevision(repo, rev));
  HANGAR_ASSIGN_OR_RETURN(auto entries, deps.content.ListTree(repo, commit, path, false));
  Data data = RepoHeader(repo, ctx, rev, "files");
  data.set("crumbs", Crumbs(repo, rev, path));
  Merge(data, FileTable(repo, rev, *entries, path), {"entries", "parent_url"});
  data.set("history_url", RepoPath(repo.record.Id()) + "/commits/" + EncodeSegment(rev) +
                              (path.empty() ? "" : "/" + EncodePath(path)));
  return Html(ctx, 200, (path.empty() ? repo.record.name : path) + " at " + rev, "tree", data);
}

Result<http::Response> Blob(WebDeps& deps, PageContext& ctx, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type));
  HANGAR_ASSIGN_OR_RETURN(std::string rev, DecodedParam(req, "rev"));
  HANGAR_ASSIGN_OR_RETURN(std::string path, DecodedParam(req, "path"));
  HANGAR_ASSIGN_OR_RETURN(Oid commit, deps.content.ResolveRevision(repo, rev));
  HANGAR_ASSIGN_OR_RETURN(auto file, deps.content.Stat(repo, commit, path));
  const std::string base = RepoPath(repo.record.Id());
  const std::string at = EncodeSegment(rev) + "/" + EncodePath(path);
  Data data = RepoHeader(repo, ctx, rev, "files");
  std::vector<std::string_view> fragments;
  data.set("crumbs", Crumbs(repo, rev, path));
  data.set("filename", BaseName(path));
  data.set("size", HumanSize(file.Size()));
  data.set("raw_url", base + "/raw/" + at);
  data.set("download_url", base + "/resolve/" + at + "?download=true");
  data.set("history_url", base + "/commits/" + at);
  if (file.lfs) {
    data.set("lfs", true);
    data.set("sha256", file.lfs->oid.Hex());
  }
  if (IsImage(path)) {
    // <img> never runs scripts, not even an SVG's; /resolve serves it sandboxed anyway.
    data.set("image_url", base + "/resolve/" + at);
  } else if (file.lfs) {
    data.set("note", "This file is stored with Git LFS (" + HumanSize(file.Size()) +
                         "). Download it to view it.");
  } else if (file.Size() > kMaxShownBytes) {
    data.set("note", "This file is too large to display (" + HumanSize(file.Size()) + ").");
  } else {
    HANGAR_ASSIGN_OR_RETURN(auto code, Code(deps, repo, commit, file, path));
    if (!code) {
      data.set("note", "Binary file not shown.");
    } else {
      fragments.push_back(code->html);
      data.set("code", FragmentMarker(0));
      data.set("lines", std::to_string(code->lines));
      data.set("blame_url", base + "/blame/" + at);
    }
  }
  return Html(ctx, 200, path + " at " + rev, "blob", data, std::move(fragments));
}

Result<http::Response> Settings(WebDeps& deps, PageContext& ctx, http::Request& req,
                                RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto repo, OpenRepo(deps, ctx, req, type, services::Access::Admin));
  if (req.method == http::Method::Post) {
    HANGAR_ASSIGN_OR_RETURN(Form form, ReadForm(req, ctx));
    HANGAR_TRY(form.OnlyFields({"private", "gated"}));  // the page offers nothing else
    services::RepoSettings settings;
    if (form.Has("private")) {
      std::string v = form.Get("private");
      if (v != "0" && v != "1") return MakeError(ErrorCode::BadRequest, "private must be 0 or 1");
      settings.is_private = v == "1";
    }
    if (form.Has("gated")) settings.gated = form.Get("gated");
    HANGAR_TRY(deps.repos.UpdateSettings(ctx.principal, repo.record.Id(), settings));
    return SeeOther(ctx, RepoPath(repo.record.Id()) + "/settings");
  }
  return RepoSettingsPage(deps, ctx, repo);
}

}  // namespace

Result<http::Response> RepoSettingsPage(WebDeps& deps, PageContext& ctx,
                                        const services::RepoHandle& repo, const Form* form,
                                        std::string error) {
  Data data = RepoHeader(repo, ctx, repo.record.default_branch, "settings");
  data.set("csrf", ctx.csrf);
  HANGAR_TRY(SetDeployKeys(deps, ctx, repo, data));
  HANGAR_TRY(SetAccessRequests(deps, ctx, repo, data));
  if (form) {
    data.set("key", form->Get("key"));
    data.set("title", form->Get("title"));
  }
  if (!error.empty()) data.set("error", error);
  return Html(ctx, error.empty() ? 200 : 400, "Settings · " + repo.record.name, "repo_settings",
              data);
}

Result<services::RepoHandle> OpenRepo(WebDeps& deps, const PageContext& ctx,
                                      const http::Request& req, RepoType type,
                                      services::Access needed) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoId::Parse(type, req.Param("ns"), req.Param("name")));
  return deps.repos.Open(ctx.principal, id, needed);
}

Result<services::RepoHandle> OpenRepoMetadata(WebDeps& deps, const PageContext& ctx,
                                              const http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoId::Parse(type, req.Param("ns"), req.Param("name")));
  return deps.repos.OpenMetadata(ctx.principal, id);
}

std::string ShortOid(const Oid& oid) { return oid.Hex().substr(0, 12); }

Data RepoHeader(const services::RepoHandle& repo, const PageContext& ctx, std::string_view rev,
                std::string_view tab) {
  Data d;
  const auto& r = repo.record;
  d.set("ns", r.ns);
  d.set("name", r.name);
  d.set("kind", r.type == RepoType::Model     ? "Model"
                : r.type == RepoType::Dataset ? "Dataset"
                                              : "Space");
  d.set("card_label", r.type == RepoType::Model     ? "Model card"
                      : r.type == RepoType::Dataset ? "Dataset card"
                                                    : "App");
  d.set("private", r.is_private);
  d.set("is_dataset", r.type == RepoType::Dataset);
  d.set("repo_url", RepoPath(r.Id()));
  d.set("rev", std::string(rev));
  d.set("rev_url", EncodeSegment(rev));
  d.set("can_admin", repo.access == services::Access::Admin);
  d.set("csrf", ctx.csrf);
  d.set("tab_" + std::string(tab), true);
  return d;
}

List Crumbs(const services::RepoHandle& repo, std::string_view rev, std::string_view path) {
  List crumbs;
  const std::string base = RepoPath(repo.record.Id()) + "/tree/" + EncodeSegment(rev) + "/";
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    bool last = slash == std::string_view::npos;
    std::string_view upto = path.substr(0, last ? path.size() : slash);
    Data c;
    c.set("label", std::string(path.substr(start, upto.size() - start)));
    if (!last) c.set("url", base + EncodePath(upto));
    crumbs.push_back(c);
    if (last) break;
    start = slash + 1;
  }
  return crumbs;
}

void AddRepoPages(http::Router& router, WebDeps& deps, RepoType type) {
  const std::string prefix = type == RepoType::Dataset ? "/datasets"
                             : type == RepoType::Space ? "/spaces"
                                                       : "";
  const std::string repo = prefix + "/{ns}/{name}";
  using M = http::Method;
  auto page = [&deps, type](auto fn) {
    return [&deps, type, fn](PageContext& ctx, http::Request& req) {
      return fn(deps, ctx, req, type);
    };
  };
  const auto read = http::Requirement::Repo(type, Access::Read);
  const auto admin = http::Requirement::Repo(type, Access::Admin);
  AddPage(router, deps, M::Get, repo, read, page(RepoHome));
  AddPage(router, deps, M::Get, repo + "/tree/{rev}", read, page(Tree));
  AddPage(router, deps, M::Get, repo + "/tree/{rev}/{path*}", read, page(Tree));
  AddPage(router, deps, M::Get, repo + "/blob/{rev}/{path*}", read, page(Blob));
  AddPage(router, deps, M::Get, repo + "/settings", admin, page(Settings));
  AddPage(router, deps, M::Post, repo + "/settings", admin, page(Settings));
  AddDeployKeyPages(router, deps, type);
  AddGatePages(router, deps, type);
  AddDiscussionPages(router, deps, type);
  AddLikePages(router, deps, type);
}

}  // namespace hangar::web
