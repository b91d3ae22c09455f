// Discussion and pull-request handlers (docs/discussions.md): parse, call
// DiscussionService, render in the public hub's shapes (huggingface_hub community.py).

#include "api/discussion/discussion_routes.h"

#include <boost/json.hpp>

#include "api/hf/hf_common.h"
#include "api/json_util.h"
#include "core/util.h"

namespace hangar::api {
namespace {

namespace json = boost::json;
using services::DiscussionService;

// The kind letter of event ids (ObjectId): comments are named by it in edit and hide.
constexpr char kEventKind = 'e';

json::object Author(std::string_view name) {
  return json::object{{"name", name},
                      {"fullname", name},
                      {"type", "user"},
                      {"avatarUrl", AvatarUrl(name)},
                      {"isPro", false}};
}

json::object RepoRef(const db::RepoRecord& r) {
  return json::object{{"name", r.ns + "/" + r.name}, {"type", RepoTypeName(r.type)}};
}

json::object Version(const db::CommentVersion& v) {
  return json::object{{"raw", v.body},
                      {"html", FormatHtml(v.body)},
                      {"updatedAt", Iso8601(v.created_at)},
                      {"author", Author(v.author_name)}};
}

// An event as the public hub sends it (community.py deserialize_event); `versions` are a
// comment's, newest first.
json::object Event(const db::DiscussionEventRecord& e,
                   const std::vector<db::CommentVersion>& versions) {
  json::object o{{"id", ObjectId(e.id, kEventKind)},
                 {"type", db::DiscussionEventKindName(e.kind)},
                 {"createdAt", Iso8601(e.created_at)}};
  // An author whose account is gone is left out: clients show "deleted".
  if (e.author_id != 0 || e.kind == db::DiscussionEventKind::Commit) {
    o["author"] = Author(e.author_name);
  }
  json::object data;
  switch (e.kind) {
    case db::DiscussionEventKind::Comment: {
      json::array history;
      for (const auto& v : versions) history.push_back(Version(v));
      data = json::object{
          {"edited", e.edited},
          {"hidden", e.hidden},
          {"numEdits", versions.empty() ? 0 : static_cast<int64_t>(versions.size()) - 1},
          {"latest", json::object{{"raw", e.body},
                                  {"html", FormatHtml(e.body)},
                                  {"updatedAt", Iso8601(e.updated_at)},
                                  {"author", Author(e.editor_name)}}},
          {"history", std::move(history)}};
      break;
    }
    case db::DiscussionEventKind::StatusChange:
      data = json::object{{"status", e.body}};
      break;
    case db::DiscussionEventKind::TitleChange:
      data = json::object{{"from", e.detail}, {"to", e.body}};
      break;
    case db::DiscussionEventKind::Commit:
      data = json::object{{"subject", e.body}, {"oid", e.detail}};
      break;
  }
  o["data"] = std::move(data);
  return o;
}

// An event just made: a comment has no earlier versions.
json::object NewEvent(const db::DiscussionEventRecord& e) { return Event(e, {}); }

// A listing's item (get_repo_discussions).
json::object Summary(const db::DiscussionRecord& d, const db::RepoRecord& repo) {
  json::object o{{"num", d.num},
                 {"title", d.title},
                 {"status", db::DiscussionStatusName(d.status)},
                 {"createdAt", Iso8601(d.created_at)},
                 {"isPullRequest", d.pull_request},
                 {"numComments", d.comments},
                 {"pinned", false},
                 {"repo", RepoRef(repo)}};
  if (d.author_id != 0) o["author"] = Author(d.author_name);
  return o;
}

// `diff` as one unified diff (what get_discussion_details' `diff` holds).
std::string UnifiedDiff(const git::CommitDetail& diff) {
  std::string out;
  for (const auto& f : diff.files) {
    const std::string& from = f.old_path.empty() ? f.path : f.old_path;
    out += "diff --git a/" + from + " b/" + f.path + "\n";
    if (f.binary) {
      out += "Binary files differ\n";
      continue;
    }
    // A patch the limits cut would not apply: left out, and the answer says so.
    if (f.patch.empty() || f.truncated) continue;
    out += f.change == git::FileDiff::Change::Added ? "--- /dev/null\n" : "--- a/" + from + "\n";
    out +=
        f.change == git::FileDiff::Change::Deleted ? "+++ /dev/null\n" : "+++ b/" + f.path + "\n";
    out += f.patch;
    if (!f.patch.ends_with('\n')) out += '\n';
  }
  return out;
}

// The {num} of the path. Errors: BadRequest.
Result<int> NumParam(const http::Request& req) {
  auto n = ParseRowId(req.Param("num"));
  if (!n || *n > services::kMaxDiscussionNumber || req.Param("num").front() == '0') {
    return MakeError(ErrorCode::BadRequest, "'" + std::string(req.Param("num")).substr(0, 40) +
                                                "' is not a discussion number");
  }
  return static_cast<int>(*n);
}

// The body as a JSON object; none is an empty one (merge and hide send none).
Result<json::object> BodyObject(http::Request& req) {
  return ReadJsonObject(req, kMaxDiscussionBody, ErrorCode::BadRequest, true);
}

// A required string member. Errors: BadRequest.
Result<std::string> Required(const json::object& o, std::string_view key) {
  HANGAR_ASSIGN_OR_RETURN(auto v, OptionalString(o, key));
  if (!v) return MakeError(ErrorCode::BadRequest, "'" + std::string(key) + "' is required");
  return std::move(*v);
}

// ?type=, ?status=, ?author= of a listing. Errors: BadRequest for unknown values.
Result<db::DiscussionFilter> ListFilter(const http::Request& req) {
  db::DiscussionFilter f;
  std::string type = req.Query("type").value_or("all");
  if (type == "discussion") {
    f.pull_request = false;
  } else if (type == "pull_request") {
    f.pull_request = true;
  } else if (type != "all") {
    return MakeError(ErrorCode::BadRequest, "'type' is one of: all, discussion, pull_request");
  }
  std::string status = req.Query("status").value_or("all");
  if (status == "open") {
    f.open = true;
  } else if (status == "closed") {
    f.open = false;
  } else if (status != "all") {
    return MakeError(ErrorCode::BadRequest, "'status' is one of: all, open, closed");
  }
  f.author = req.Query("author").value_or("");
  if (f.author.size() > 100 || ShownTextProblem(f.author)) {
    return MakeError(ErrorCode::BadRequest, "'author' is not a user name");
  }
  return f;
}

Result<http::Response> List(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto filter, ListFilter(req));
  int page = 0;
  if (auto p = req.Query("p")) {
    auto n = ParseRowId(*p);
    if (!n && *p != "0") return MakeError(ErrorCode::BadRequest, "'p' is a page number from 0");
    page = n ? static_cast<int>(std::min<int64_t>(*n, 1'000'001)) : 0;
  }
  HANGAR_ASSIGN_OR_RETURN(auto listed, s.List(req.principal, id, filter, page));
  json::array items;
  db::RepoRecord repo;
  repo.ns = id.ns, repo.name = id.name, repo.type = type;
  for (const auto& d : listed.items) items.push_back(Summary(d, repo));
  return JsonResponse(json::object{
      {"discussions", std::move(items)}, {"count", listed.count}, {"start", listed.start}});
}

Result<http::Response> Details(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  const bool diff = http::ParseBool(req.Query("diff").value_or("0")).value_or(false);
  HANGAR_ASSIGN_OR_RETURN(auto d, s.Details(req.principal, id, num, diff));
  json::object o = Summary(d.discussion, d.repo);
  json::array events;
  for (const auto& e : d.events) events.push_back(Event(e.record, e.versions));
  o["events"] = std::move(events);
  o["locked"] = false;
  if (d.discussion.pull_request) {
    json::object changes{{"base", d.discussion.base_ref}};
    if (!d.discussion.merge_oid.empty()) changes["mergeCommitId"] = d.discussion.merge_oid;
    o["changes"] = std::move(changes);
    json::array conflicts;
    for (const auto& path : d.conflicts) conflicts.push_back(json::string(path));
    // Unrelated histories conflict as a whole: `true` is the clients' "conflicts, no list".
    if (d.unrelated) {
      o["filesWithConflicts"] = true;
    } else {
      o["filesWithConflicts"] = std::move(conflicts);
    }
    if (d.diff) {
      o["diff"] = UnifiedDiff(*d.diff);
      o["diffTruncated"] = d.diff->truncated;
    }
  }
  return JsonResponse(o);
}

Result<http::Response> Create(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  services::NewDiscussion in;
  HANGAR_ASSIGN_OR_RETURN(in.title, Required(body, "title"));
  HANGAR_ASSIGN_OR_RETURN(in.description, StringField(body, "description"));
  HANGAR_ASSIGN_OR_RETURN(in.pull_request, BoolField(body, "pullRequest"));
  HANGAR_ASSIGN_OR_RETURN(int num, s.Create(req.principal, id, in));
  return JsonResponse(json::object{
      {"num", num},
      {"pullRequest", in.pull_request},
      {"url", req.base_url + "/" + id.UrlPath() + "/discussions/" + std::to_string(num)}});
}

Result<http::Response> Comment(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(std::string text, Required(body, "comment"));
  HANGAR_ASSIGN_OR_RETURN(auto e, s.Comment(req.principal, id, num, text));
  return JsonResponse(json::object{{"newMessage", NewEvent(e)}});
}

Result<http::Response> Status(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(std::string status, Required(body, "status"));
  HANGAR_ASSIGN_OR_RETURN(std::string comment, StringField(body, "comment"));
  HANGAR_ASSIGN_OR_RETURN(auto e, s.ChangeStatus(req.principal, id, num, status, comment));
  return JsonResponse(json::object{{"newStatus", NewEvent(e)}});
}

Result<http::Response> Title(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(std::string title, Required(body, "title"));
  HANGAR_ASSIGN_OR_RETURN(auto e, s.Rename(req.principal, id, num, title));
  return JsonResponse(json::object{{"newTitle", NewEvent(e)}});
}

Result<http::Response> Merge(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(std::string comment, StringField(body, "comment"));
  HANGAR_ASSIGN_OR_RETURN(auto e, s.Merge(req.principal, id, num, comment));
  return JsonResponse(json::object{{"newStatus", NewEvent(e)}});
}

// The {id} of a comment. Errors: NotFound (not an id this hub made).
Result<int64_t> CommentParam(const http::Request& req) {
  auto id = ParseObjectId(req.Param("id"), kEventKind);
  if (!id) return MakeError(ErrorCode::NotFound, "no comment with that id");
  return *id;
}

Result<http::Response> EditComment(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(int64_t event, CommentParam(req));
  HANGAR_ASSIGN_OR_RETURN(json::object body, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(std::string content, Required(body, "content"));
  HANGAR_ASSIGN_OR_RETURN(auto e, s.EditComment(req.principal, id, num, event, content));
  return JsonResponse(json::object{{"updatedComment", Event(e.record, e.versions)}});
}

Result<http::Response> HideComment(DiscussionService& s, http::Request& req, RepoType type) {
  HANGAR_ASSIGN_OR_RETURN(RepoId id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(int num, NumParam(req));
  HANGAR_ASSIGN_OR_RETURN(int64_t event, CommentParam(req));
  HANGAR_ASSIGN_OR_RETURN(json::object ignored, BodyObject(req));
  HANGAR_ASSIGN_OR_RETURN(auto e, s.HideComment(req.principal, id, num, event));
  return JsonResponse(json::object{{"updatedComment", Event(e, {})}});
}

}  // namespace

void AddDiscussionRoutes(http::Router& r, DiscussionService& discussions) {
  using http::ApiFamily;
  using http::Method;
  using http::Requirement;
  // Writes need a write credential and a repo the caller may read, both from the head,
  // and a declared body within bounds: a refused write's body is never read.
  auto write_head = [](http::Request& q) -> Result<void> {
    HANGAR_TRY(http::CheckWriteRole(q.principal));
    return CheckDeclaredLength(q, kMaxDiscussionBody);
  };
  using Handler = Result<http::Response> (*)(DiscussionService&, http::Request&, RepoType);
  for (RepoType t : {RepoType::Model, RepoType::Dataset, RepoType::Space}) {
    const std::string base = "/api/" + std::string(RepoCollection(t)) + "/{ns}/{name}/discussions";
    auto add_read = [&](const std::string& path, Handler h) {
      r.Add(Method::Get, path, ApiFamily::Hf, Requirement::Repo(t, Access::Read),
            [&discussions, t, h](http::Request& q) { return h(discussions, q, t); });
    };
    auto add_write = [&](const std::string& path, Handler h) {
      r.Add(Method::Post, path, ApiFamily::Hf, Requirement::Repo(t, Access::Read).Also(write_head),
            [&discussions, t, h](http::Request& q) { return h(discussions, q, t); });
    };
    add_read(base, List);
    add_read(base + "/{num}", Details);
    add_write(base, Create);
    add_write(base + "/{num}/comment", Comment);
    add_write(base + "/{num}/status", Status);
    add_write(base + "/{num}/title", Title);
    add_write(base + "/{num}/merge", Merge);
    add_write(base + "/{num}/comment/{id}/edit", EditComment);
    add_write(base + "/{num}/comment/{id}/hide", HideComment);
  }
}

}  // namespace hangar::api
