// Repo info, tree, paths-info, refs, commits (hf-api.md §3, §4, §6.7, §6.8).

#include <algorithm>
#include <charconv>

#include "api/hf/hf_common.h"
#include "api/hf/hf_handlers.h"
#include "api/json_util.h"
#include "core/repo_path.h"
#include "core/util.h"
#include "services/repo/card_index.h"
#include "services/repo/model_card.h"

namespace hangar::api {

namespace json = boost::json;

namespace {

constexpr size_t kTreePage = 1000;         // entries per tree page without expand
constexpr size_t kTreePageExpanded = 100;  // with expand (one history query per entry)
constexpr size_t kMaxTreePage = 10000;
constexpr uint64_t kMaxReadme = 1 << 20;

// Numeric cursor (an offset into an immutable listing). Errors: BadRequest.
Result<size_t> OffsetCursor(const http::Request& req) {
  auto c = req.Query("cursor");
  if (!c || c->empty()) return size_t{0};
  size_t v = 0;
  auto [p, ec] = std::from_chars(c->data(), c->data() + c->size(), v);
  if (ec != std::errc() || p != c->data() + c->size()) {
    return MakeError(ErrorCode::BadRequest, "invalid cursor '" + *c + "'");
  }
  return v;
}

size_t PageSize(const http::Request& req, size_t def, size_t max) {
  auto lim = req.Query("limit");
  if (!lim) return def;
  size_t v = 0;
  auto [p, ec] = std::from_chars(lim->data(), lim->data() + lim->size(), v);
  if (ec != std::errc() || v == 0) return def;
  return std::min(v, max);
}

json::object CommitBrief(const git::CommitInfo& c) {
  return json::object{
      {"id", c.id.Hex()}, {"title", c.summary}, {"date", Iso8601(c.committer_time)}};
}

// A tree entry as §4.1 shapes it.
json::object EntryJson(const services::Entry& e) {
  json::object o;
  o["type"] = e.git.is_dir ? "directory" : "file";
  o["oid"] = e.git.oid.Hex();
  o["size"] = e.git.is_dir ? 0 : e.Size();
  if (e.lfs) {
    o["lfs"] =
        json::object{{"oid", e.lfs->oid.Hex()}, {"size", e.lfs->size}, {"pointerSize", e.git.size}};
  }
  o["path"] = e.git.path;
  return o;
}

Result<void> AddLastCommit(HfDeps& d, const services::RepoHandle& repo, const Oid& commit,
                           const services::Entry& e, json::object& o) {
  HANGAR_ASSIGN_OR_RETURN(auto last, d.content.LastCommit(repo, commit, e.git.path));
  if (last) o["lastCommit"] = CommitBrief(*last);
  return {};
}

struct Opened {
  services::RepoHandle repo;
  Oid commit;
  std::string path;
  std::string revision;
};

// Opens the repo for its metadata (info, file list, commit list: shown on a gated repo too)
// and resolves the revision in the `rest` param.
Result<Opened> OpenAt(HfDeps& d, http::Request& req, RepoType type, bool revision_in_path) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto repo, d.repos.OpenMetadata(req.principal, id));
  RevisionAndPath rp{"HEAD", ""};
  if (revision_in_path) {
    HANGAR_ASSIGN_OR_RETURN(auto split, SplitRevisionAndPath(req.Param("rest")));
    rp = std::move(split);
  }
  HANGAR_ASSIGN_OR_RETURN(auto commit, d.content.ResolveRevision(repo, rp.revision));
  return Opened{std::move(repo), commit, std::move(rp.path), std::move(rp.revision)};
}

// Adds cardData and the tags/pipeline/library fields derived from it, as the card index
// derives them for listings (services/repo/card_index.h).
void AddCard(const json::object& card, RepoType type, json::object& o) {
  o["cardData"] = card;
  services::CardMeta meta = services::ExtractCardMeta(card, type);
  if (!meta.library.empty()) o["library_name"] = meta.library;
  if (!meta.pipeline.empty()) o["pipeline_tag"] = meta.pipeline;
  json::array tags;
  for (auto& t : meta.tags) tags.emplace_back(std::move(t));
  o["tags"] = std::move(tags);
}

}  // namespace

Result<void> AddRepoContent(HfDeps& d, const services::RepoHandle& repo, const Oid& commit,
                            bool card, bool siblings, bool blobs, json::object& o) {
  if (card) {
    HANGAR_ASSIGN_OR_RETURN(auto readme, d.content.ReadText(repo, commit, "README.md", kMaxReadme));
    if (readme) {
      auto parsed = services::ParseCardData(*readme);
      if (parsed && *parsed) AddCard(**parsed, repo.record.type, o);
    }
  }
  if (!siblings) return {};
  HANGAR_ASSIGN_OR_RETURN(auto tree, d.content.ListTree(repo, commit, "", true));
  json::array files;
  uint64_t used = 0;
  for (const auto& e : *tree) {
    if (e.git.is_dir) continue;
    json::object s{{"rfilename", e.git.path}};
    if (blobs) {
      s["size"] = e.Size();
      s["blobId"] = e.git.oid.Hex();
      if (e.lfs) {
        s["lfs"] = json::object{
            {"sha256", e.lfs->oid.Hex()}, {"size", e.lfs->size}, {"pointerSize", e.git.size}};
      }
    }
    used += e.Size();
    files.push_back(std::move(s));
  }
  o["siblings"] = std::move(files);
  o["usedStorage"] = used;
  return {};
}

Result<http::Response> HandleRepoInfo(HfDeps& d, http::Request& req, RepoType type,
                                      bool with_revision) {
  HANGAR_ASSIGN_OR_RETURN(auto expand, ExpandKeys(req, type));
  // Downloads still counted in memory are written first, so info and a listing sorted by
  // downloads agree (a no-op when none are pending).
  if (d.downloads && d.downloads->Pending() > 0) (void)d.downloads->Flush();
  HANGAR_ASSIGN_OR_RETURN(auto at, OpenAt(d, req, type, with_revision));
  const auto& rec = at.repo.record;
  HANGAR_ASSIGN_OR_RETURN(auto commit, d.content.Commit(at.repo, at.commit));
  bool blobs = http::ParseBool(req.Query("blobs").value_or("false")).value_or(false);

  json::object o;
  o["_id"] = ObjectId(rec.id, '6');
  o["id"] = rec.ns + "/" + rec.name;
  o["author"] = rec.ns;
  o["sha"] = at.commit.Hex();
  o["lastModified"] = Iso8601(commit.committer_time);
  o["createdAt"] = Iso8601(rec.created_at);
  o["private"] = rec.is_private;
  o["gated"] = GatedJson(rec.gated);
  o["disabled"] = false;
  o["downloads"] = rec.downloads;
  o["downloadsAllTime"] = rec.downloads;
  o["likes"] = rec.likes;
  o["tags"] = json::array{};
  if (!rec.sdk.empty()) o["sdk"] = rec.sdk;
  HANGAR_TRY(AddRepoContent(d, at.repo, at.commit, /*card=*/true, /*siblings=*/true, blobs, o));
  KeepExpanded(o, expand);
  return JsonResponse(o);
}

Result<http::Response> HandleTree(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto at, OpenAt(d, req, type, true));
  bool recursive = http::ParseBool(req.Query("recursive").value_or("false")).value_or(false);
  bool expand = http::ParseBool(req.Query("expand").value_or("false")).value_or(false);
  HANGAR_ASSIGN_OR_RETURN(auto list, d.content.ListTree(at.repo, at.commit, at.path, recursive));
  HANGAR_ASSIGN_OR_RETURN(auto offset, OffsetCursor(req));
  size_t page = expand ? PageSize(req, kTreePageExpanded, kTreePageExpanded)
                       : PageSize(req, kTreePage, kMaxTreePage);
  const auto& entries = *list;
  size_t begin = std::min(offset, entries.size());
  size_t end = std::min(entries.size(), begin + page);
  std::string body = "[";
  for (size_t i = begin; i < end; ++i) {
    json::object o = EntryJson(entries[i]);
    if (expand) HANGAR_TRY(AddLastCommit(d, at.repo, at.commit, entries[i], o));
    if (i > begin) body += ',';
    body += json::serialize(o);
  }
  body += ']';
  http::Response res = http::Response::Json(200, std::move(body));
  if (end < entries.size()) SetNextLink(res, req, std::to_string(end));
  return res;
}

Result<http::Response> HandlePathsInfo(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto at, OpenAt(d, req, type, true));
  size_t max = static_cast<size_t>(d.config.limits.max_json_body_bytes);
  HANGAR_ASSIGN_OR_RETURN(auto text, req.ReadBody(max));
  std::vector<std::string> paths;
  bool expand = false;
  std::string_view ctype = req.Header("content-type");
  if (ctype.find("application/json") != std::string_view::npos) {
    boost::system::error_code ec;
    json::value v = json::parse(text, ec);
    if (ec || !v.is_object()) return MakeError(ErrorCode::BadRequest, "malformed JSON body");
    const auto* ps = v.as_object().if_contains("paths");
    if (!ps || !ps->is_array()) return MakeError(ErrorCode::BadRequest, "'paths' must be an array");
    for (const auto& p : ps->as_array()) {
      if (!p.is_string()) return MakeError(ErrorCode::BadRequest, "'paths' must hold strings");
      paths.emplace_back(p.as_string());
    }
    if (const auto* e = v.as_object().if_contains("expand"); e && e->is_bool())
      expand = e->as_bool();
  } else {
    // Python sends a form body: paths=a&paths=b&expand=false (hf-api.md §4.2).
    http::Request form;
    form.query = text;
    paths = form.QueryAll("paths");
    expand = http::ParseBool(form.Query("expand").value_or("false")).value_or(false);
  }
  if (paths.size() > 10000) return MakeError(ErrorCode::BadRequest, "too many paths (max 10000)");
  for (auto& p : paths) {
    while (!p.empty() && p.back() == '/') p.pop_back();
    HANGAR_TRY(ValidateReadPath(p));
  }
  HANGAR_ASSIGN_OR_RETURN(auto entries, d.content.PathsInfo(at.repo, at.commit, paths));
  json::array out;
  for (const auto& e : entries) {
    json::object o = EntryJson(e);
    if (expand) HANGAR_TRY(AddLastCommit(d, at.repo, at.commit, e, o));
    out.push_back(std::move(o));
  }
  return JsonResponse(out);
}

Result<http::Response> HandleRefs(HfDeps& d, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto repo, d.repos.OpenMetadata(req.principal, id));
  HANGAR_ASSIGN_OR_RETURN(auto refs, d.content.Refs(repo));
  bool prs = http::ParseBool(req.Query("include_prs").value_or("false")).value_or(false);
  json::array branches, tags, converts, pulls;
  for (const auto& r : refs) {
    auto item = [&](std::string_view prefix) {
      return json::object{{"name", r.name.substr(prefix.size())},
                          {"ref", r.name},
                          {"targetCommit", r.target.Hex()}};
    };
    std::string_view n = r.name;
    if (n.starts_with("refs/heads/"))
      branches.push_back(item("refs/heads/"));
    else if (n.starts_with("refs/tags/"))
      tags.push_back(item("refs/tags/"));
    else if (n.starts_with("refs/convert/"))
      converts.push_back(item("refs/convert/"));
    else if (n.starts_with("refs/pr/"))
      pulls.push_back(item(""));
  }
  json::object o{{"branches", std::move(branches)},
                 {"tags", std::move(tags)},
                 {"converts", std::move(converts)}};
  if (prs) o["pullRequests"] = std::move(pulls);
  return JsonResponse(o);
}

Result<http::Response> HandleCommits(HfDeps& d, http::Request& req, RepoType type) {
  // list_repo_commits(formatted=True) asks expand[]=formatted; nothing else is expandable.
  static constexpr std::string_view kCommitKeys[] = {"formatted"};
  HANGAR_ASSIGN_OR_RETURN(auto expand, ExpandValues(req, kCommitKeys, "commits"));
  const bool formatted = !expand.empty();
  HANGAR_ASSIGN_OR_RETURN(auto at, OpenAt(d, req, type, true));
  HANGAR_ASSIGN_OR_RETURN(auto offset, OffsetCursor(req));
  size_t page = PageSize(req, 100, 1000);
  HANGAR_ASSIGN_OR_RETURN(auto total, d.content.CountCommits(at.repo, at.commit));
  HANGAR_ASSIGN_OR_RETURN(auto log, d.content.Log(at.repo, at.commit, offset, page));
  json::array out;
  for (const auto& c : log) {
    // The body after the title; a one-line commit has none.
    std::string message =
        c.message.size() > c.summary.size() ? c.message.substr(c.summary.size()) : std::string();
    if (message.find_first_not_of(" \t\r\n") == std::string::npos) message.clear();
    out.push_back(json::object{
        {"id", c.id.Hex()},
        {"title", c.summary},
        {"message", message},
        {"authors",
         json::array{json::object{
             {"user", c.author_name},
             {"avatar", req.base_url + "/avatars/" + PercentEncode(c.author_name) + ".svg"}}}},
        {"date", Iso8601(c.author_time)}});
    if (formatted) {
      std::string title;
      AppendEscapedMarkup(title, c.summary);
      out.back().as_object()["formatted"] =
          json::object{{"title", std::move(title)}, {"message", FormatHtml(message)}};
    }
  }
  http::Response res = JsonResponse(out);
  res.SetHeader("X-Total-Count", std::to_string(total));
  if (offset + log.size() < total && !log.empty()) {
    SetNextLink(res, req, std::to_string(offset + log.size()));
  }
  return res;
}

}  // namespace hangar::api
