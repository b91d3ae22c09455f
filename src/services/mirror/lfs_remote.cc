#include "services/mirror/lfs_remote.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <cerrno>

#include "core/file_source.h"
#include "core/util.h"
#include "net/address.h"
#include "net/http_client.h"
#include "services/git/git_source.h"

namespace hangar::services {

namespace fs = std::filesystem;
namespace json = boost::json;
using Clock = std::chrono::steady_clock;

namespace {

// Objects per batch request: git-lfs's own default.
constexpr size_t kBatchSize = 100;
constexpr size_t kMaxBatchResponse = 16 << 20;
constexpr size_t kChunk = 1 << 20;
constexpr std::string_view kLfsJson = "application/vnd.git-lfs+json";
// A download or upload slower than this (bytes/s) for a minute is aborted.
constexpr long kMinBytesPerS = 1024;

Error Malformed(std::string what) {
  return MakeError(ErrorCode::BadRequest, "malformed LFS batch response: " + std::move(what));
}

Result<std::optional<LfsAction>> ParseAction(const json::object& actions, std::string_view name) {
  const json::value* v = actions.if_contains(name);
  if (v == nullptr) return std::optional<LfsAction>{};
  if (!v->is_object()) return Malformed(std::string(name) + " is not an object");
  const json::object& a = v->get_object();
  const json::value* href = a.if_contains("href");
  if (href == nullptr || !href->is_string()) return Malformed(std::string(name) + " has no href");
  LfsAction out;
  out.href = std::string(href->get_string());
  if (!out.href.starts_with("https://") && !out.href.starts_with("http://"))
    return Malformed(std::string(name) + " href is not an http(s) URL");
  if (const json::value* h = a.if_contains("header")) {
    if (!h->is_object()) return Malformed(std::string(name) + " header is not an object");
    for (const auto& kv : h->get_object()) {
      if (!kv.value().is_string()) return Malformed("a header value is not a string");
      std::string key(kv.key()), value(kv.value().get_string());
      // A header must not smuggle another one into the request.
      for (char c : key + value) {
        if (c == '\r' || c == '\n' || c == '\0') return Malformed("a header has a line break");
      }
      out.headers.emplace_back(std::move(key), std::move(value));
    }
  }
  return std::optional<LfsAction>(std::move(out));
}

// Unavailable once `deadline` passed or `stop` was requested.
Result<void> Check(Clock::time_point deadline, const std::stop_token& stop) {
  if (stop.stop_requested()) return MakeError(ErrorCode::Unavailable, "the sync was stopped");
  if (Clock::now() >= deadline) return MakeError(ErrorCode::Unavailable, "the sync timed out");
  return {};
}

// The error of a remote's answer with `status`: its message (LFS's {"message"}) if any.
Error RemoteError(std::string_view what, long status, std::string_view body) {
  std::string message;
  boost::system::error_code ec;
  json::value v = json::parse(body.substr(0, 4096), ec);
  if (!ec && v.is_object()) {
    if (const json::value* m = v.get_object().if_contains("message"); m && m->is_string())
      message = std::string(m->get_string());
  }
  // The remote's refusal is no verdict on our caller's credentials: always 502.
  return MakeError(ErrorCode::BadGateway,
                   std::string(what) + " answered " + std::to_string(status) +
                       (message.empty() ? "" : ": " + message.substr(0, 300)));
}

// Writes the bytes of `source` into `blobs` as `p`, verified by sha256 and size, checking
// `deadline` and `stop` between chunks (a peer that trickles bytes holds nothing forever).
// Errors name the object.
Result<void> Store(ByteSource& source, const git::Pointer& p, storage::BlobStore& blobs,
                   Clock::time_point deadline, const std::stop_token& stop) {
  auto stored = [&]() -> Result<void> {
    HANGAR_ASSIGN_OR_RETURN(auto writer, blobs.Create(p.oid, p.size));
    std::string buf(kChunk, '\0');
    for (;;) {
      HANGAR_TRY(Check(deadline, stop));
      HANGAR_ASSIGN_OR_RETURN(size_t n, source.Read(buf));
      if (n == 0) break;
      HANGAR_TRY(writer->Append(std::span<const char>(buf.data(), n)));
    }
    return writer->Commit();
  }();
  if (!stored) {
    // Bytes that do not match the pointer are the remote's fault.
    const ErrorCode code = stored.error().code == ErrorCode::DigestInvalid ||
                                   stored.error().code == ErrorCode::SizeInvalid
                               ? ErrorCode::BadGateway
                               : stored.error().code;
    return MakeError(code, "LFS object " + p.oid.Hex() + ": " + stored.error().message);
  }
  return {};
}

// Opens `rel` (plain components) under directory `root` without following a symbolic link
// at any step, so a link planted in a repository under the mirror roots cannot lead
// outside them. With `create`, missing directories are made and the last component is
// created (it must not exist) for writing. Returns the fd. Errors: NotFound (a missing
// step, reading), Forbidden (a step is a link or not a directory), Internal.
Result<int> OpenNoFollow(const fs::path& root, const fs::path& rel, bool create) {
  int dir = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return MakeError(ErrorCode::NotFound, root.string() + " cannot be opened");
  std::vector<std::string> parts;
  for (const auto& c : rel) parts.push_back(c.string());
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int next = ::openat(dir, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create) {
      if (::mkdirat(dir, parts[i].c_str(), 0755) != 0 && errno != EEXIST) {
        ::close(dir);
        return MakeError(ErrorCode::Internal, "creating " + parts[i] + " in " + root.string());
      }
      next = ::openat(dir, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    const int err = errno;
    ::close(dir);
    if (next < 0) {
      if (err == ENOENT)
        return MakeError(ErrorCode::NotFound, (root / rel).string() + " is missing");
      return MakeError(ErrorCode::Forbidden, "'" + parts[i] + "' in " + root.string() +
                                                 " is a symbolic link or not a directory");
    }
    dir = next;
  }
  const int flags = create ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
                           : O_RDONLY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(dir, parts.back().c_str(), flags, 0644);
  const int err = errno;
  ::close(dir);
  if (fd < 0) {
    if (err == ENOENT) return MakeError(ErrorCode::NotFound, (root / rel).string() + " is missing");
    return MakeError(ErrorCode::Forbidden, (root / rel).string() + " cannot be opened (a link?)");
  }
  return fd;
}

// Writes all of `source` as `rel` under `root` (OpenNoFollow): into a new temporary beside
// it, renamed into place, so a reader never sees half an object. Errors: the source's;
// Forbidden (a link on the way); Internal.
Result<void> WriteNoFollow(ByteSource& source, const fs::path& root, const fs::path& rel) {
  static std::atomic<uint64_t> counter{0};
  fs::path tmp_rel = rel;
  tmp_rel.replace_filename(rel.filename().string() + ".tmp-hangar-" + std::to_string(::getpid()) +
                           "-" + std::to_string(counter++));
  HANGAR_ASSIGN_OR_RETURN(int fd, OpenNoFollow(root, tmp_rel, /*create=*/true));
  Result<void> copied;
  std::string buf(kChunk, '\0');
  for (;;) {
    auto n = source.Read(buf);
    if (!n) {
      copied = std::move(n).error();
      break;
    }
    if (*n == 0) break;
    if (::write(fd, buf.data(), *n) != static_cast<ssize_t>(*n)) {
      copied = MakeError(ErrorCode::Internal, "writing " + (root / tmp_rel).string());
      break;
    }
  }
  if (::close(fd) != 0 && copied) copied = MakeError(ErrorCode::Internal, "closing a temporary");
  // The directories on the way were checked as the temporary was made; rename(2) replaces a
  // link at the target itself, never what it points to.
  if (copied && ::rename((root / tmp_rel).c_str(), (root / rel).c_str()) != 0) {
    copied = MakeError(ErrorCode::Internal, "renaming into " + (root / rel).string());
  }
  if (!copied) ::unlink((root / tmp_rel).c_str());
  return copied;
}

}  // namespace

Result<std::vector<LfsBatchObject>> ParseLfsBatchResponse(std::string_view body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return Malformed("not a JSON object");
  const json::value* objects = v.get_object().if_contains("objects");
  if (objects == nullptr || !objects->is_array()) return Malformed("no objects array");
  std::vector<LfsBatchObject> out;
  for (const json::value& item : objects->get_array()) {
    if (!item.is_object()) return Malformed("an object is not an object");
    const json::object& o = item.get_object();
    LfsBatchObject obj;
    const json::value* oid = o.if_contains("oid");
    std::optional<Sha256> parsed;
    if (oid != nullptr && oid->is_string()) parsed = Sha256::ParseHex(oid->get_string());
    if (!parsed) return Malformed("an object has no valid oid");
    obj.oid = *parsed;
    const json::value* size = o.if_contains("size");
    if (size == nullptr || !(size->is_int64() || size->is_uint64()) ||
        (size->is_int64() && size->get_int64() < 0))
      return Malformed("an object has no valid size");
    obj.size = size->is_uint64() ? size->get_uint64() : static_cast<uint64_t>(size->get_int64());
    if (const json::value* err = o.if_contains("error")) {
      const json::value* m = err->is_object() ? err->get_object().if_contains("message") : nullptr;
      obj.error = m != nullptr && m->is_string() ? std::string(m->get_string()) : "error";
    }
    if (const json::value* actions = o.if_contains("actions")) {
      if (!actions->is_object()) return Malformed("actions is not an object");
      const json::object& a = actions->get_object();
      HANGAR_ASSIGN_OR_RETURN(obj.download, ParseAction(a, "download"));
      HANGAR_ASSIGN_OR_RETURN(obj.upload, ParseAction(a, "upload"));
      HANGAR_ASSIGN_OR_RETURN(obj.verify, ParseAction(a, "verify"));
    }
    out.push_back(std::move(obj));
  }
  return out;
}

Result<std::string> LfsEndpointOf(std::string_view git_url) {
  std::string url(git_url);
  while (!url.empty() && url.back() == '/') url.pop_back();
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return MakeError(ErrorCode::BadRequest, "not a URL: " + url);
  std::string scheme = AsciiLower(url.substr(0, scheme_end));
  std::string rest = url.substr(scheme_end + 3);
  if (scheme == "git" || scheme == "ssh") {
    // git-lfs: the same host (without user and port) and path, over https.
    size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    std::string path = slash == std::string::npos ? "" : rest.substr(slash);
    if (size_t at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
    if (!authority.empty() && authority.front() != '[') {
      if (size_t colon = authority.find(':'); colon != std::string::npos) authority.resize(colon);
    }
    rest = authority + path;
    scheme = "https";
  } else if (scheme != "http" && scheme != "https") {
    return MakeError(ErrorCode::BadRequest, "no LFS endpoint for a " + scheme + ":// URL");
  }
  std::string out = scheme + "://" + rest;
  return out + (out.ends_with(".git") ? "/info/lfs" : ".git/info/lfs");
}

Result<void> LfsRemote::CheckTime() const { return Check(options_.deadline, options_.stop); }

std::chrono::milliseconds LfsRemote::Remaining() const {
  return std::max(
      std::chrono::milliseconds(1),
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.deadline - Clock::now()));
}

fs::path LfsRemote::LocalPath(const Sha256& oid) {
  const std::string hex = oid.Hex();
  return fs::path("lfs") / "objects" / hex.substr(0, 2) / hex.substr(2, 2) / hex;
}

Result<std::vector<LfsBatchObject>> LfsRemote::Batch(std::string_view operation,
                                                     const std::vector<git::Pointer>& pointers) {
  json::array objects;
  for (const auto& p : pointers) objects.push_back({{"oid", p.oid.Hex()}, {"size", p.size}});
  json::object body{
      {"operation", operation}, {"transfers", json::array{"basic"}}, {"objects", objects}};
  net::HttpRequest req;
  req.method = "POST";
  req.url = options_.endpoint + "/objects/batch";
  req.body_bytes = json::serialize(body);
  req.headers = {{"Accept", std::string(kLfsJson)}, {"Content-Type", std::string(kLfsJson)}};
  if (!options_.credential.empty())
    req.headers.emplace_back("Authorization", "Bearer " + options_.credential);
  HANGAR_TRY(PinRequest(options_.private_hosts, req));
  req.timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.deadline - Clock::now());
  if (req.timeout.count() <= 0) return MakeError(ErrorCode::Unavailable, "the sync timed out");
  net::HttpClient client;
  std::string received;
  net::BodySink sink = [&received](std::span<const char> data) -> Result<void> {
    if (received.size() + data.size() > kMaxBatchResponse)
      return MakeError(ErrorCode::BadGateway, "the LFS batch response is too large");
    received.append(data.data(), data.size());
    return {};
  };
  HANGAR_ASSIGN_OR_RETURN(net::HttpResponse res, client.Perform(req, &sink));
  if (res.status != 200) return RemoteError("the LFS batch API", res.status, received);
  auto parsed = ParseLfsBatchResponse(received);
  if (!parsed) return MakeError(ErrorCode::BadGateway, parsed.error().message);
  return parsed;
}

Result<void> LfsRemote::Fetch(const std::vector<git::Pointer>& pointers,
                              storage::BlobStore& blobs) {
  // Every object comes from the remote even when the store holds it already: linking one
  // on its hash alone would hand out another repo's data (the remote must prove it has
  // the bytes by sending them).
  const auto deadline = options_.deadline;
  const std::stop_token& stop = options_.stop;
  if (options_.endpoint.empty()) {
    for (const auto& p : pointers) {
      HANGAR_TRY(CheckTime());
      auto fd = OpenNoFollow(options_.local_git_dir, LocalPath(p.oid), /*create=*/false);
      if (!fd) {
        return MakeError(ErrorCode::BadGateway, "the upstream lacks LFS object " + p.oid.Hex() +
                                                    " (" + std::to_string(p.size) +
                                                    " bytes): " + fd.error().message);
      }
      FileSource file(*fd, 0, p.size);  // a shorter file fails, and so do other bytes
      HANGAR_TRY(Store(file, p, blobs, deadline, stop));
    }
    return {};
  }
  for (size_t at = 0; at < pointers.size(); at += kBatchSize) {
    HANGAR_TRY(CheckTime());
    std::vector<git::Pointer> chunk(pointers.begin() + at,
                                    pointers.begin() + std::min(pointers.size(), at + kBatchSize));
    HANGAR_ASSIGN_OR_RETURN(auto answered, Batch("download", chunk));
    for (const auto& p : chunk) {
      auto it = std::find_if(answered.begin(), answered.end(),
                             [&](const LfsBatchObject& o) { return o.oid == p.oid; });
      if (it == answered.end() || !it->error.empty() || !it->download) {
        std::string why = it == answered.end() ? "it was not in the answer"
                          : !it->error.empty() ? it->error
                                               : "no download action";
        return MakeError(ErrorCode::BadGateway,
                         "the upstream cannot give LFS object " + p.oid.Hex() + ": " + why);
      }
      HANGAR_TRY(CheckTime());
      net::HttpRequest get;
      get.url = it->download->href;
      get.headers = it->download->headers;
      HANGAR_TRY(PinRequest(options_.private_hosts, get));
      get.timeout = Remaining();
      get.stall_timeout =
          std::min<std::chrono::milliseconds>(std::chrono::seconds(60), get.timeout);
      get.buffer_bytes = kChunk;
      get.low_speed_bytes = kMinBytesPerS;
      HANGAR_ASSIGN_OR_RETURN(auto stream, net::HttpStream::Open(get));
      if (stream->Status() != 200) {
        return RemoteError("the download of LFS object " + p.oid.Hex(), stream->Status(), "");
      }
      HANGAR_TRY(Store(*stream, p, blobs, deadline, stop));
    }
  }
  return {};
}

Result<void> LfsRemote::Send(const std::vector<git::Pointer>& pointers, storage::BlobStore& blobs) {
  if (options_.endpoint.empty()) {
    for (const auto& p : pointers) {
      HANGAR_TRY(CheckTime());
      auto present = OpenNoFollow(options_.local_git_dir, LocalPath(p.oid), /*create=*/false);
      if (present) {
        struct stat st {};
        const bool same =
            ::fstat(*present, &st) == 0 && static_cast<uint64_t>(st.st_size) == p.size;
        ::close(*present);
        if (same) continue;
      }
      HANGAR_ASSIGN_OR_RETURN(auto source, blobs.Open(p.oid, storage::ByteRange::From(0)));
      HANGAR_TRY(WriteNoFollow(*source, options_.local_git_dir, LocalPath(p.oid)));
    }
    return {};
  }
  for (size_t at = 0; at < pointers.size(); at += kBatchSize) {
    HANGAR_TRY(CheckTime());
    std::vector<git::Pointer> chunk(pointers.begin() + at,
                                    pointers.begin() + std::min(pointers.size(), at + kBatchSize));
    HANGAR_ASSIGN_OR_RETURN(auto answered, Batch("upload", chunk));
    for (const auto& o : answered) {
      if (!o.error.empty()) {
        return MakeError(ErrorCode::BadRequest,
                         "the remote refuses LFS object " + o.oid.Hex() + ": " + o.error);
      }
      if (!o.upload) continue;  // the remote has it
      auto p = std::find_if(chunk.begin(), chunk.end(),
                            [&](const git::Pointer& c) { return c.oid == o.oid; });
      if (p == chunk.end() || p->size != o.size) {
        return MakeError(ErrorCode::BadGateway, "the remote answered for an object not asked for");
      }
      HANGAR_TRY(CheckTime());
      HANGAR_ASSIGN_OR_RETURN(auto source, blobs.Open(p->oid, storage::ByteRange::From(0)));
      net::HttpRequest put;
      put.method = "PUT";
      put.url = o.upload->href;
      put.headers = o.upload->headers;
      put.headers.emplace_back("Content-Type", "application/octet-stream");
      put.body = source.get();
      put.buffer_bytes = kChunk;
      put.timeout = Remaining();
      put.low_speed_bytes = kMinBytesPerS;
      HANGAR_TRY(PinRequest(options_.private_hosts, put));
      net::HttpClient client;
      HANGAR_ASSIGN_OR_RETURN(auto res, client.Perform(put));
      if (res.status / 100 != 2) {
        return RemoteError("the upload of LFS object " + p->oid.Hex(), res.status, res.body);
      }
      if (o.verify) {
        net::HttpRequest verify;
        verify.method = "POST";
        verify.url = o.verify->href;
        verify.headers = o.verify->headers;
        verify.headers.emplace_back("Content-Type", std::string(kLfsJson));
        verify.body_bytes = json::serialize(json::object{{"oid", p->oid.Hex()}, {"size", p->size}});
        verify.timeout = Remaining();
        HANGAR_TRY(PinRequest(options_.private_hosts, verify));
        HANGAR_ASSIGN_OR_RETURN(auto checked, client.Perform(verify));
        if (checked.status / 100 != 2) {
          return RemoteError("the verification of LFS object " + p->oid.Hex(), checked.status,
                             checked.body);
        }
      }
    }
  }
  return {};
}

}  // namespace hangar::services
