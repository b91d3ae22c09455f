#pragma once
// S3Api: the S3 REST calls S3BlobStore makes (internal to storage/s3/), over pooled
// net::HttpClients. Thread-safe. Keys passed in are full object keys (prefix included).

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/http_client.h"
#include "storage/s3/s3_blob_store.h"

namespace hangar::storage {

using Query = std::vector<std::pair<std::string, std::string>>;

class S3Api {
 public:
  explicit S3Api(S3Options options);

  const S3Options& options() const { return options_; }
  std::string BlobKey(const Sha256& id) const { return options_.prefix + "sha256/" + id.Hex(); }
  std::string UploadsPrefix() const { return options_.prefix + "uploads/"; }
  // "<endpoint> bucket <bucket>", for messages.
  std::string Where() const;

  // One request on `key` ("" = the bucket) with `query` (unencoded). The body is
  // `body` (streamed) or `body_bytes`; the response body goes to `sink` when given.
  // Without a streamed body or a sink, transport failures and Retryable() answers are
  // tried again (3 tries in all).
  // Errors: Unavailable (transport), or the body's/sink's own.
  Result<net::HttpResponse> Call(std::string_view method, std::string_view key,
                                 const Query& query = {},
                                 std::vector<std::pair<std::string, std::string>> headers = {},
                                 ByteSource* body = nullptr, std::string body_bytes = "",
                                 const net::BodySink* sink = nullptr);
  // A GET of `key` whose body the caller pulls.
  Result<std::unique_ptr<net::HttpStream>> Stream(
      std::string_view key, std::vector<std::pair<std::string, std::string>> headers);
  // A presigned URL for `method` on `key` with `query`.
  std::string Presign(std::string_view method, std::string_view key, const Query& query,
                      std::chrono::seconds ttl) const;

  // The error for a failed S3 response: S3's <Code> and <Message> in the message; the code
  // by status (404: `not_found`, 416: RangeNotSatisfiable, 503/5xx: Unavailable,
  // else Internal).
  Error Fail(std::string_view what, const net::HttpResponse& res,
             ErrorCode not_found = ErrorCode::NotFound) const;

  // HEAD of `key`: its size, or nullopt when missing.
  Result<std::optional<uint64_t>> Head(std::string_view key);
  // DELETE of `key` (S3: no error when missing).
  Result<void> DeleteObject(std::string_view key);
  // Server-side copy of `src` (`size` bytes) to `dst`: CopyObject up to 5 GiB, else a
  // multipart upload of UploadPartCopy ranges.
  Result<void> Copy(std::string_view src, std::string_view dst, uint64_t size);
  // Refreshes the LastModified time of `key` (`size` bytes) by copying it onto itself with
  // its metadata replaced, so GC's grace period counts from this upload of the bytes
  // (BlobStore::ForEachBlob). Objects over 5 GiB are left as they are (S3 cannot copy them
  // in one call). Errors: as Copy.
  Result<void> Touch(std::string_view key, uint64_t size);
  // ListObjectsV2 of every key under `prefix`, page by page: calls `fn` with each
  // <Contents> element's XML; stops at fn's first error. Errors: Internal, Unavailable.
  Result<void> ListObjects(std::string_view prefix,
                           const std::function<Result<void>(std::string_view contents)>& fn);

  // Multipart uploads. Upload ids are opaque strings.
  Result<std::string> CreateMultipart(std::string_view key);
  // UploadPart from `body` (Size() must be known); returns the part's ETag, unquoted.
  Result<std::string> UploadPart(std::string_view key, std::string_view upload_id, uint64_t number,
                                 ByteSource& body);
  // `parts`: (number, etag) in ascending order.
  Result<void> CompleteMultipart(std::string_view key, std::string_view upload_id,
                                 const std::vector<std::pair<uint64_t, std::string>>& parts);
  // AbortMultipartUpload; a missing upload is not an error.
  Result<void> AbortMultipart(std::string_view key, std::string_view upload_id);
  // ListParts, all pages. Errors: NotFound when the upload is unknown.
  Result<std::vector<PartInfo>> ListParts(std::string_view key, std::string_view upload_id);

  // The newest LastModified of the upload's parts (first ListParts page), unix seconds;
  // 0 when it has none. Errors: NotFound when the upload is unknown.
  Result<int64_t> LastPartTime(std::string_view key, std::string_view upload_id);

  // Whether S3 asks for the request to be retried (500, 502, 503, 504).
  static bool Retryable(const net::HttpResponse& r);
  // Sleeps before try `attempt` + 1: 100 ms, 400 ms, 1.6 s, ...
  static void Backoff(int attempt);

  // Writers alive (S3BlobStore::PendingWriters).
  std::atomic<size_t> pending_writers{0};

 private:
  // A client from the pool, returned on destruction.
  class Lease;
  std::unique_ptr<net::HttpClient> Acquire();
  void Release(std::unique_ptr<net::HttpClient> c);
  // Origin ("scheme://host[:port]") and the encoded path of `key`.
  std::pair<std::string, std::string> Locate(std::string_view key) const;
  std::string Url(std::string_view key, const Query& query) const;

  S3Options options_;
  net::AwsSigV4 creds_;
  std::mutex mu_;
  std::vector<std::unique_ptr<net::HttpClient>> idle_;
};

// "2026-11-30T01:13:42.000Z" (S3's LastModified, Initiated) as unix seconds; 0 if malformed.
int64_t ParseS3Time(std::string_view s);

}  // namespace hangar::storage
