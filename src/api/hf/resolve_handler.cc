// GET|HEAD /{prefix}{ns}/{name}/resolve/{rev}/{path...} and /raw/ (hf-api.md §2).

#include <charconv>

#include "api/error_render.h"
#include "api/hf/hf_common.h"
#include "api/hf/hf_handlers.h"
#include "core/util.h"

namespace hangar::api {

namespace {

bool ParseU64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string ContentDisposition(std::string_view path) {
  std::string name = Basename(path);
  std::string ascii;
  for (unsigned char c : name) ascii += (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') ? '_' : c;
  return "inline; filename*=UTF-8''" + PercentEncode(name) + "; filename=\"" + ascii + "\";";
}

}  // namespace

RangeResult ParseRange(std::string_view h, uint64_t size, RangeSpec& out) {
  if (h.substr(0, 6) != "bytes=") return RangeResult::None;
  h.remove_prefix(6);
  if (h.find(',') != std::string_view::npos) return RangeResult::None;
  size_t dash = h.find('-');
  if (dash == std::string_view::npos) return RangeResult::None;
  std::string_view a = h.substr(0, dash), b = h.substr(dash + 1);
  uint64_t first = 0, last = 0;
  if (a.empty()) {  // suffix: last n bytes
    if (!ParseU64(b, last)) return RangeResult::None;
    if (last == 0 || size == 0) return RangeResult::Unsatisfiable;
    out.length = std::min(last, size);
    out.offset = size - out.length;
    return RangeResult::Ok;
  }
  if (!ParseU64(a, first)) return RangeResult::None;
  if (!b.empty()) {
    if (!ParseU64(b, last) || last < first) return RangeResult::None;
  } else {
    last = size ? size - 1 : 0;
  }
  if (first >= size) return RangeResult::Unsatisfiable;
  last = std::min(last, size - 1);
  out.offset = first;
  out.length = last - first + 1;
  return RangeResult::Ok;
}

Result<http::Response> HandleResolve(HfDeps& deps, http::Request& req, RepoType type, bool raw) {
  auto id = RepoFromParams(req, type);
  if (!id) return std::move(id).error();
  auto repo = deps.repos.Open(req.principal, *id, services::Access::Read);
  if (!repo) return std::move(repo).error();
  auto split = SplitRevisionAndPath(req.Param("rest"));
  if (!split) return std::move(split).error();
  if (split->path.empty()) {
    return MakeError(ErrorCode::EntryNotFound, "no file path given after the revision");
  }
  auto commit = deps.content.ResolveRevision(*repo, split->revision);
  if (!commit) return std::move(commit).error();
  std::string commit_hex = commit->Hex();

  auto file = deps.content.Stat(*repo, *commit, split->path);
  if (!file) {
    // Python caches the absence under this commit (hf-api.md §1.10).
    http::Response res = RenderError(http::ApiFamily::Hf, file.error(), req);
    res.SetHeader("X-Repo-Commit", commit_hex);
    return res;
  }
  bool serve_lfs = file->lfs && !raw;
  uint64_t size = serve_lfs ? file->lfs->size : file->git.size;

  http::Response res;
  res.SetHeader("X-Repo-Commit", commit_hex);
  res.SetHeader("Accept-Ranges", "bytes");
  res.SetHeader("Content-Disposition", ContentDisposition(split->path));
  if (file->lfs) {
    std::string sha = "\"" + file->lfs->oid.Hex() + "\"";
    res.SetHeader("X-Linked-Etag", sha);
    res.SetHeader("X-Linked-Size", std::to_string(file->lfs->size));
    res.SetHeader("ETag", serve_lfs ? sha : "\"" + file->git.oid.Hex() + "\"");
  } else {
    res.SetHeader("ETag", "\"" + file->git.oid.Hex() + "\"");
  }
  res.SetHeader("Content-Type", "application/octet-stream");
  // Repo files are untrusted: one opened from /resolve or /raw (an SVG, an HTML page) must
  // never run in the hub's origin, nor be sniffed into something a browser executes.
  res.SetHeader("Content-Security-Policy", "default-src 'none'; sandbox");
  res.SetHeader("X-Content-Type-Options", "nosniff");

  // A GET of /resolve from the start of a file is a download; HEAD, the JS client's
  // bytes=0-0 probe and the later chunks of a ranged or resumed transfer are not. Counted
  // in memory, written in batches.
  auto range_header = req.Header("range");
  if (req.method == http::Method::Get && !raw && deps.downloads &&
      (range_header.empty() ||
       (range_header.starts_with("bytes=0-") && range_header != "bytes=0-0"))) {
    deps.downloads->Count(repo->record.id);
  }

  // storage.download_mode = "redirect": LFS objects come from the object store itself, by
  // an absolute 302 carrying the metadata headers above (hf-api.md §2.5); the target
  // honours Range. A store without presigned URLs (local) gives "": serve as usual.
  if (serve_lfs && deps.config.storage.download_mode == config::DownloadMode::Redirect) {
    auto url = deps.content.RedirectUrl(
        *repo, *file, std::chrono::seconds(deps.config.storage.s3_url_ttl_s));
    if (!url) {
      http::Response err = RenderError(http::ApiFamily::Hf, url.error(), req);
      err.SetHeader("X-Repo-Commit", commit_hex);
      return err;
    }
    if (!url->empty()) {
      res.status = 302;
      res.SetHeader("Location", *url);
      res.content_length = 0;
      return res;
    }
  }

  RangeSpec range{0, size};
  res.status = 200;
  if (!range_header.empty()) {
    switch (ParseRange(range_header, size, range)) {
      case RangeResult::None:
        range = {0, size};
        break;
      case RangeResult::Ok:
        res.status = 206;
        res.SetHeader("Content-Range", "bytes " + std::to_string(range.offset) + "-" +
                                           std::to_string(range.offset + range.length - 1) +
                                           "/" + std::to_string(size));
        break;
      case RangeResult::Unsatisfiable:
        if (size == 0) {
          // The JS client's bytes=0-0 probe on an empty file (hf-api.md §2.6).
          res.SetHeader("Content-Range", "bytes */0");
          res.content_length = 0;
          return res;
        }
        http::Response err = RenderError(
            http::ApiFamily::Hf,
            MakeError(ErrorCode::RangeNotSatisfiable,
                      "range '" + std::string(range_header) + "' not satisfiable for " +
                          std::to_string(size) + " bytes"),
            req);
        err.SetHeader("Content-Range", "bytes */" + std::to_string(size));
        err.SetHeader("X-Repo-Commit", commit_hex);
        return err;
    }
  }
  // Errors from here on name a missing LFS object; they carry the commit too (§1.10).
  auto with_commit = [&](const Error& e) {
    http::Response err = RenderError(http::ApiFamily::Hf, e, req);
    err.SetHeader("X-Repo-Commit", commit_hex);
    return err;
  };
  if (req.method == http::Method::Head) {
    if (serve_lfs) {
      if (auto linked = deps.content.CheckLinked(*repo, *file); !linked) {
        return with_commit(linked.error());
      }
    }
    res.content_length = range.length;
    return res;
  }
  auto body = deps.content.Open(*repo, *file, raw, range.offset, range.length);
  if (!body) return with_commit(body.error());
  res.stream = std::move(*body);
  res.content_length = range.length;
  return res;
}

}  // namespace hangar::api
