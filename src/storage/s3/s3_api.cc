#include "storage/s3/s3_api.h"

#include <time.h>

#include <algorithm>
#include <random>
#include <thread>

#include "core/util.h"
#include "storage/s3/s3_sigv4_presign.h"
#include "storage/s3/s3_xml.h"

namespace hangar::storage {
namespace {

constexpr uint64_t kMaxCopyObject = uint64_t{5} << 30;  // S3's CopyObject limit
constexpr uint64_t kCopyPartBytes = uint64_t{1} << 30;  // UploadPartCopy range size
constexpr size_t kMaxIdleClients = 16;

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

bool Ok(const net::HttpResponse& r) { return r.status >= 200 && r.status < 300; }

}  // namespace

int64_t ParseS3Time(std::string_view s) {
  struct tm tm {};
  std::string str(s);
  if (strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

S3Api::S3Api(S3Options options) : options_(std::move(options)) {
  if (options_.endpoint.empty()) {
    options_.endpoint = "https://s3." + options_.region + ".amazonaws.com";
  }
  while (!options_.endpoint.empty() && options_.endpoint.back() == '/') {
    options_.endpoint.pop_back();
  }
  creds_ = net::AwsSigV4{options_.region, options_.access_key, options_.secret_key, "s3"};
}

std::string S3Api::Where() const { return options_.endpoint + " bucket '" + options_.bucket + "'"; }

std::pair<std::string, std::string> S3Api::Locate(std::string_view key) const {
  std::string path = "/" + AwsUriEncode(key, true);
  if (options_.path_style) {
    return {options_.endpoint, "/" + AwsUriEncode(options_.bucket, false) + path};
  }
  size_t scheme_end = options_.endpoint.find("://");
  std::string scheme = options_.endpoint.substr(0, scheme_end + 3);
  std::string host = options_.endpoint.substr(scheme_end + 3);
  return {scheme + options_.bucket + "." + host, path};
}

std::string S3Api::Url(std::string_view key, const Query& query) const {
  auto [origin, path] = Locate(key);
  std::string url = origin + path;
  if (!query.empty()) url += "?" + CanonicalQuery(query);
  return url;
}

std::string S3Api::Presign(std::string_view method, std::string_view key, const Query& query,
                           std::chrono::seconds ttl) const {
  auto [origin, path] = Locate(key);
  return PresignUrl(method, origin, path, query, creds_, ttl, NowUnix());
}

std::unique_ptr<net::HttpClient> S3Api::Acquire() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return std::make_unique<net::HttpClient>();
  auto c = std::move(idle_.back());
  idle_.pop_back();
  return c;
}

void S3Api::Release(std::unique_ptr<net::HttpClient> c) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kMaxIdleClients) idle_.push_back(std::move(c));
}

Result<net::HttpResponse> S3Api::Call(std::string_view method, std::string_view key,
                                      const Query& query,
                                      std::vector<std::pair<std::string, std::string>> headers,
                                      ByteSource* body, std::string body_bytes,
                                      const net::BodySink* sink) {
  net::HttpRequest req;
  req.method = std::string(method);
  req.url = Url(key, query);
  req.headers = std::move(headers);
  req.body = body;
  req.body_bytes = std::move(body_bytes);
  req.sigv4 = creds_;
  const bool replayable = body == nullptr && sink == nullptr;
  for (int attempt = 1;; ++attempt) {
    auto client = Acquire();
    auto res = client->Perform(req, sink);
    // A client whose transfer failed midway may hold a broken connection: drop it.
    if (res) Release(std::move(client));
    bool again = res ? Retryable(*res) : res.error().code == ErrorCode::Unavailable;
    if (!replayable || !again || attempt == 3) return res;
    Backoff(attempt);
  }
}

bool S3Api::Retryable(const net::HttpResponse& r) {
  return r.status == 500 || r.status == 502 || r.status == 503 || r.status == 504;
}

void S3Api::Backoff(int attempt) {
  std::this_thread::sleep_for(std::chrono::milliseconds(100) * (1 << (2 * (attempt - 1))));
}

Result<int64_t> S3Api::LastPartTime(std::string_view key, std::string_view upload_id) {
  HANGAR_ASSIGN_OR_RETURN(auto res, Call("GET", key, {{"uploadId", std::string(upload_id)}}));
  if (!Ok(res)) return Fail("ListParts " + std::string(key), res);
  int64_t last = 0;
  for (std::string_view part : s3xml::Elements(res.body, "Part")) {
    last = std::max(last, ParseS3Time(s3xml::Text(part, "LastModified").value_or("")));
  }
  return last;
}

Result<std::unique_ptr<net::HttpStream>> S3Api::Stream(
    std::string_view key, std::vector<std::pair<std::string, std::string>> headers) {
  net::HttpRequest req;
  req.url = Url(key, {});
  req.headers = std::move(headers);
  req.sigv4 = creds_;
  return net::HttpStream::Open(req);
}

Error S3Api::Fail(std::string_view what, const net::HttpResponse& res, ErrorCode not_found) const {
  std::string code = s3xml::Text(res.body, "Code").value_or("");
  std::string message = s3xml::Text(res.body, "Message").value_or("");
  std::string text =
      std::string(what) + ": S3 " + Where() + " answered " + std::to_string(res.status);
  if (!code.empty()) text += " " + code;
  if (!message.empty()) text += " (" + message + ")";
  ErrorCode ec = ErrorCode::Internal;
  if (res.status == 404)
    ec = not_found;
  else if (res.status == 416)
    ec = ErrorCode::RangeNotSatisfiable;
  else if (res.status == 503 || res.status == 500 || res.status == 502)
    ec = ErrorCode::Unavailable;
  return MakeError(ec, text);
}

Result<std::optional<uint64_t>> S3Api::Head(std::string_view key) {
  HANGAR_ASSIGN_OR_RETURN(auto res, Call("HEAD", key));
  if (res.status == 404) return std::optional<uint64_t>();
  if (!Ok(res)) return Fail("HEAD " + std::string(key), res);
  auto cl = res.Header("content-length");
  return std::optional<uint64_t>(cl ? std::strtoull(cl->c_str(), nullptr, 10) : 0);
}

Result<void> S3Api::DeleteObject(std::string_view key) {
  HANGAR_ASSIGN_OR_RETURN(auto res, Call("DELETE", key));
  if (!Ok(res) && res.status != 404) return Fail("DELETE " + std::string(key), res);
  return {};
}

Result<void> S3Api::Copy(std::string_view src, std::string_view dst, uint64_t size) {
  const std::string source = "/" + options_.bucket + "/" + AwsUriEncode(src, true);
  if (size <= kMaxCopyObject) {
    HANGAR_ASSIGN_OR_RETURN(auto res, Call("PUT", dst, {}, {{"x-amz-copy-source", source}}));
    // CopyObject may fail after a 200: the body then holds an <Error>.
    if (!Ok(res) || res.body.find("<Error>") != std::string::npos) {
      return Fail("copy to " + std::string(dst), res, ErrorCode::Internal);
    }
    return {};
  }
  HANGAR_ASSIGN_OR_RETURN(auto upload, CreateMultipart(dst));
  std::vector<std::pair<uint64_t, std::string>> parts;
  for (uint64_t off = 0, n = 1; off < size; off += kCopyPartBytes, ++n) {
    uint64_t last = std::min(size, off + kCopyPartBytes) - 1;
    auto res = Call(
        "PUT", dst, {{"partNumber", std::to_string(n)}, {"uploadId", upload}},
        {{"x-amz-copy-source", source},
         {"x-amz-copy-source-range", "bytes=" + std::to_string(off) + "-" + std::to_string(last)}});
    if (!res || !Ok(*res) || res->body.find("<Error>") != std::string::npos) {
      Error e = res ? Fail("copy part to " + std::string(dst), *res, ErrorCode::Internal)
                    : std::move(res).error();
      (void)AbortMultipart(dst, upload);
      return e;
    }
    parts.emplace_back(n, Unquote(s3xml::Text(res->body, "ETag").value_or("")));
  }
  auto done = CompleteMultipart(dst, upload, parts);
  if (!done) (void)AbortMultipart(dst, upload);
  return done;
}

Result<void> S3Api::ListObjects(std::string_view prefix,
                                const std::function<Result<void>(std::string_view contents)>& fn) {
  std::string token;
  for (;;) {
    Query q = {{"list-type", "2"}, {"prefix", std::string(prefix)}};
    if (!token.empty()) q.emplace_back("continuation-token", token);
    HANGAR_ASSIGN_OR_RETURN(auto res, Call("GET", "", q));
    if (!Ok(res)) return Fail("ListObjectsV2", res, ErrorCode::Internal);
    for (std::string_view c : s3xml::Elements(res.body, "Contents")) HANGAR_TRY(fn(c));
    if (s3xml::Text(res.body, "IsTruncated").value_or("false") != "true") return {};
    token = s3xml::Text(res.body, "NextContinuationToken").value_or("");
    if (token.empty()) return {};
  }
}

Result<void> S3Api::Touch(std::string_view key, uint64_t size) {
  if (size > kMaxCopyObject) return {};
  const std::string source = "/" + options_.bucket + "/" + AwsUriEncode(key, true);
  for (int attempt = 1;; ++attempt) {  // concurrent writers of one blob may collide: retry
    HANGAR_ASSIGN_OR_RETURN(
        auto res, Call("PUT", key, {},
                       {{"x-amz-copy-source", source}, {"x-amz-metadata-directive", "REPLACE"}}));
    if (Ok(res) && res.body.find("<Error>") == std::string::npos) return {};
    if (attempt == 6 || !Retryable(res)) {
      return Fail("touch " + std::string(key), res, ErrorCode::Internal);
    }
    // Jittered: writers of one blob that collided must not retry in lockstep.
    thread_local std::minstd_rand jitter(std::random_device{}());
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 200)(jitter) * attempt));
  }
}

Result<std::string> S3Api::CreateMultipart(std::string_view key) {
  HANGAR_ASSIGN_OR_RETURN(auto res, Call("POST", key, {{"uploads", ""}}));
  if (!Ok(res)) return Fail("CreateMultipartUpload " + std::string(key), res);
  auto id = s3xml::Text(res.body, "UploadId");
  if (!id || id->empty()) {
    return MakeError(ErrorCode::Internal, "CreateMultipartUpload " + std::string(key) + ": S3 " +
                                              Where() + " gave no UploadId");
  }
  return *id;
}

Result<std::string> S3Api::UploadPart(std::string_view key, std::string_view upload_id,
                                      uint64_t number, ByteSource& body) {
  HANGAR_ASSIGN_OR_RETURN(
      auto res, Call("PUT", key,
                     {{"partNumber", std::to_string(number)}, {"uploadId", std::string(upload_id)}},
                     {}, &body));
  if (!Ok(res)) return Fail("UploadPart " + std::string(key), res);
  return Unquote(res.Header("etag").value_or(""));
}

Result<void> S3Api::CompleteMultipart(std::string_view key, std::string_view upload_id,
                                      const std::vector<std::pair<uint64_t, std::string>>& parts) {
  std::string xml = "<CompleteMultipartUpload>";
  for (const auto& [n, etag] : parts) {
    xml += "<Part><PartNumber>" + std::to_string(n) + "</PartNumber><ETag>\"" +
           s3xml::Escape(etag) + "\"</ETag></Part>";
  }
  xml += "</CompleteMultipartUpload>";
  HANGAR_ASSIGN_OR_RETURN(auto res,
                          Call("POST", key, {{"uploadId", std::string(upload_id)}},
                               {{"Content-Type", "application/xml"}}, nullptr, std::move(xml)));
  // Like CopyObject, a 200 may carry an <Error> that came up while S3 assembled the parts.
  if (!Ok(res) || res.body.find("<Error>") != std::string::npos) {
    return Fail("CompleteMultipartUpload " + std::string(key), res);
  }
  return {};
}

Result<void> S3Api::AbortMultipart(std::string_view key, std::string_view upload_id) {
  HANGAR_ASSIGN_OR_RETURN(auto res, Call("DELETE", key, {{"uploadId", std::string(upload_id)}}));
  if (!Ok(res) && res.status != 404) {
    return Fail("AbortMultipartUpload " + std::string(key), res);
  }
  return {};
}

Result<std::vector<PartInfo>> S3Api::ListParts(std::string_view key, std::string_view upload_id) {
  std::vector<PartInfo> out;
  std::string marker;
  for (;;) {
    Query q = {{"uploadId", std::string(upload_id)}};
    if (!marker.empty()) q.emplace_back("part-number-marker", marker);
    HANGAR_ASSIGN_OR_RETURN(auto res, Call("GET", key, q));
    if (!Ok(res)) return Fail("ListParts " + std::string(key), res);
    for (std::string_view part : s3xml::Elements(res.body, "Part")) {
      PartInfo p;
      p.number = std::strtoull(s3xml::Text(part, "PartNumber").value_or("0").c_str(), nullptr, 10);
      p.size = std::strtoull(s3xml::Text(part, "Size").value_or("0").c_str(), nullptr, 10);
      p.etag = Unquote(s3xml::Text(part, "ETag").value_or(""));
      out.push_back(std::move(p));
    }
    if (s3xml::Text(res.body, "IsTruncated").value_or("false") != "true") break;
    marker = s3xml::Text(res.body, "NextPartNumberMarker").value_or("");
    if (marker.empty()) break;
  }
  std::sort(out.begin(), out.end(),
            [](const PartInfo& a, const PartInfo& b) { return a.number < b.number; });
  return out;
}

}  // namespace hangar::storage
