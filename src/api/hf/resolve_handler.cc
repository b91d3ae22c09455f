// GET|HEAD /{prefix}{ns}/{name}/resolve/{rev}/{path...} and /raw/ (hf-api.md §2).

#include "api/error_render.h"
#include "api/hf/hf_common.h"
#include "api/hf/hf_handlers.h"
#include "core/util.h"
#include "http/preconditions.h"
#include "http/range.h"

namespace hangar::api {

namespace {

// The headers of a /resolve answer for `file` at `commit_hex` (hf-api.md §2.2): its size
// and ETag (the LFS object's when `serve_lfs`, else the git blob's), the linked object's,
// and the safety headers of untrusted content.
http::Response FileHead(const services::Entry& file, bool serve_lfs, const std::string& commit_hex,
                        std::string_view path) {
  http::Response res;
  res.SetHeader("X-Repo-Commit", commit_hex);
  res.SetHeader("Accept-Ranges", "bytes");
  size_t slash = path.rfind('/');
  res.SetHeader(
      "Content-Disposition",
      http::ContentDisposition(slash == std::string_view::npos ? path : path.substr(slash + 1)));
  std::string blob_etag = "\"" + file.git.oid.Hex() + "\"";
  if (file.lfs) {
    std::string sha = "\"" + file.lfs->oid.Hex() + "\"";
    res.SetHeader("X-Linked-Etag", sha);
    res.SetHeader("X-Linked-Size", std::to_string(file.lfs->size));
    res.SetHeader("ETag", serve_lfs ? sha : blob_etag);
  } else {
    res.SetHeader("ETag", blob_etag);
  }
  res.SetHeader("Content-Type", "application/octet-stream");
  // Repo files are untrusted: one opened from /resolve or /raw (an SVG, an HTML page) must
  // never run in the hub's origin, nor be sniffed into something a browser executes.
  res.SetHeader("Content-Security-Policy", "default-src 'none'; sandbox");
  res.SetHeader("X-Content-Type-Options", "nosniff");
  return res;
}

// A GET of /resolve from the start of a file is a download; HEAD, the JS client's
// bytes=0-0 probe and the later chunks of a ranged or resumed transfer are not. Counted in
// memory, written in batches.
void CountDownload(HfDeps& deps, const http::Request& req, const services::RepoHandle& repo,
                   bool raw) {
  std::string_view range = req.Header("range");
  if (req.method == http::Method::Get && !raw && deps.downloads &&
      (range.empty() || (range.starts_with("bytes=0-") && range != "bytes=0-0"))) {
    deps.downloads->Count(repo.record.id);
  }
}

// The part of a file of `size` bytes a request gets (§2.4), after its preconditions:
// sets `res` to 200 or 206 (with Content-Range) and `range` to the window; or returns the
// answer that ends the request (304, 412, 416, an empty file's bytes=0-0 probe).
template <typename WithCommit>
std::optional<http::Response> ChooseRange(const http::Request& req, http::Response& res,
                                          uint64_t size, const WithCommit& with_commit,
                                          http::RangeAnswer& range) {
  if (auto status = http::EvaluatePreconditions(req, res.GetHeader("ETag"))) {
    if (*status == 412) {
      return with_commit(
          MakeError(ErrorCode::PreconditionFailed, "the file's ETag is not one If-Match names"));
    }
    res.status = 304;
    res.content_length = 0;
    return std::move(res);
  }
  std::string_view range_header = req.Header("range");
  range = http::RangeAnswer{http::RangeAnswer::Kind::Whole, 0, size};
  if (http::RangeApplies(req, res.GetHeader("ETag"))) range = http::ParseRange(range_header, size);
  res.status = 200;
  switch (range.kind) {
    case http::RangeAnswer::Kind::Whole:
      range = {http::RangeAnswer::Kind::Whole, 0, size};
      return std::nullopt;
    case http::RangeAnswer::Kind::Partial:
      res.status = 206;
      res.SetHeader("Content-Range", http::ContentRange(range, size));
      return std::nullopt;
    case http::RangeAnswer::Kind::Unsatisfiable:
      break;
  }
  if (size == 0) {
    // The JS client's bytes=0-0 probe on an empty file (hf-api.md §2.6).
    res.SetHeader("Content-Range", "bytes */0");
    res.content_length = 0;
    return std::move(res);
  }
  http::Response err =
      with_commit(MakeError(ErrorCode::RangeNotSatisfiable, "range '" + std::string(range_header) +
                                                                "' not satisfiable for " +
                                                                std::to_string(size) + " bytes"));
  err.SetHeader("Content-Range", http::ContentRange(range, size));
  return err;
}

}  // namespace

Result<http::Response> HandleResolve(HfDeps& deps, http::Request& req, RepoType type, bool raw) {
  HANGAR_ASSIGN_OR_RETURN(auto id, RepoFromParams(req, type));
  HANGAR_ASSIGN_OR_RETURN(auto repo, deps.repos.Open(req.principal, id, services::Access::Read));
  HANGAR_ASSIGN_OR_RETURN(auto split, SplitRevisionAndPath(req.Param("rest")));
  if (split.path.empty()) {
    return MakeError(ErrorCode::EntryNotFound, "no file path given after the revision");
  }
  HANGAR_ASSIGN_OR_RETURN(auto commit, deps.content.ResolveRevision(repo, split.revision));
  std::string commit_hex = commit.Hex();

  auto file = deps.content.Stat(repo, commit, split.path);
  if (!file) {
    // Python caches the absence under this commit (hf-api.md §1.10).
    http::Response res = RenderError(http::ApiFamily::Hf, file.error(), req);
    res.SetHeader("X-Repo-Commit", commit_hex);
    return res;
  }
  bool serve_lfs = file->lfs && !raw;
  uint64_t size = serve_lfs ? file->lfs->size : file->git.size;

  http::Response res = FileHead(*file, serve_lfs, commit_hex, split.path);
  CountDownload(deps, req, repo, raw);
  // The answer to an error carries the commit too (§1.10): clients cache it under it.
  auto with_commit = [&](const Error& e) {
    http::Response err = RenderError(http::ApiFamily::Hf, e, req);
    err.SetHeader("X-Repo-Commit", commit_hex);
    return err;
  };

  // storage.download_mode = "redirect": LFS objects come from the object store itself, by
  // an absolute 302 carrying the metadata headers above (hf-api.md §2.5); the target
  // honours Range. A store without presigned URLs (local) gives "": serve as usual.
  if (serve_lfs && deps.config.storage.download_mode == config::DownloadMode::Redirect) {
    auto url = deps.content.RedirectUrl(repo, *file,
                                        std::chrono::seconds(deps.config.storage.s3_url_ttl_s));
    if (!url) return with_commit(url.error());
    if (!url->empty()) {
      res.status = 302;
      res.SetHeader("Location", *url);
      res.content_length = 0;
      return res;
    }
  }
  http::RangeAnswer range;
  if (auto early = ChooseRange(req, res, size, with_commit, range)) return std::move(*early);
  res.content_length = range.length;
  if (req.method == http::Method::Head) {
    // A missing LFS object fails the HEAD too, so clients never start a download of it.
    if (serve_lfs) {
      if (auto linked = deps.content.CheckLinked(repo, *file); !linked) {
        return with_commit(linked.error());
      }
    }
    return res;
  }
  auto body = deps.content.Open(repo, *file, raw, range.offset, range.length);
  if (!body) return with_commit(body.error());
  res.stream = std::move(*body);
  return res;
}

}  // namespace hangar::api
