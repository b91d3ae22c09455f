#include "storage/s3/s3_blob_store.h"

#include <algorithm>

#include "core/hex.h"
#include "core/util.h"
#include "storage/s3/s3_api.h"
#include "storage/s3/s3_blob_writer.h"
#include "storage/s3/s3_xml.h"

namespace hangar::storage {
namespace {

constexpr uint64_t kMaxPartNumber = 10000;  // S3's limit

Error UnknownBlob(const Sha256& id) {
  return MakeError(ErrorCode::BlobUnknown, "blob sha256:" + id.Hex() + " is unknown");
}

bool Ok(const net::HttpResponse& r) { return r.status >= 200 && r.status < 300; }

// A parsed handle: "<name>:<upload id>", name as in the layout of s3_blob_store.h.
struct Handle {
  std::string name;
  std::string upload_id;
  uint64_t part_size = 0;  // from "<key>-<part_size>-<begun>"; 0 for writers' names
  int64_t begun = 0;       // unix seconds the staging area was opened; 0 if unknown
};

Result<Handle> ParseHandle(std::string_view handle) {
  size_t colon = handle.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      handle.substr(0, colon).find('/') != std::string_view::npos) {
    return MakeError(ErrorCode::NotFound, "no upload staging area '" + std::string(handle) + "'");
  }
  Handle h{std::string(handle.substr(0, colon)), std::string(handle.substr(colon + 1)), 0, 0};
  // "<key>-<part_size>-<begun>" or "w<hex>.<random>-<begun>".
  size_t last = h.name.rfind('-');
  if (last != std::string::npos) {
    h.begun = std::strtoll(h.name.c_str() + last + 1, nullptr, 10);
    size_t prev = h.name.rfind('-', last - 1);
    if (prev != std::string::npos && last > 0 && h.name[0] != 'w') {
      h.part_size = std::strtoull(h.name.c_str() + prev + 1, nullptr, 10);
    }
  }
  return h;
}

// The request body of PutPart: passes `size` bytes of `body` through, hashing them, and
// fails the read that would deliver the last byte when the body is too long or the digest
// is wrong, so the HTTP transfer aborts before S3 has the whole part.
class VerifyingSource final : public ByteSource {
 public:
  VerifyingSource(ByteSource& body, uint64_t size, std::optional<Sha256> sha256)
      : body_(body), left_(size), sha256_(sha256) {}

  Result<size_t> Read(std::span<char> buf) override {
    if (left_ == 0) return size_t{0};
    HANGAR_ASSIGN_OR_RETURN(auto n, body_.Read(buf.first(std::min<uint64_t>(buf.size(), left_))));
    if (n == 0) {
      return MakeError(ErrorCode::SizeInvalid,
                       "part body ended " + std::to_string(left_) + " bytes short");
    }
    hasher_.Update(std::string_view(buf.data(), n));
    left_ -= n;
    if (left_ == 0) {
      char extra;
      HANGAR_ASSIGN_OR_RETURN(auto more, body_.Read({&extra, 1}));
      if (more > 0) return MakeError(ErrorCode::SizeInvalid, "part body is longer than its size");
      Sha256 actual = hasher_.Finish();
      if (sha256_ && actual != *sha256_) {
        return MakeError(ErrorCode::DigestInvalid,
                         "part has sha256 " + actual.Hex() + ", expected " + sha256_->Hex());
      }
    }
    return n;
  }
  std::optional<uint64_t> Size() const override { return left_; }

 private:
  ByteSource& body_;
  uint64_t left_;
  std::optional<Sha256> sha256_;
  Sha256Hasher hasher_;
};

}  // namespace

S3BlobStore::S3BlobStore(S3Options options) : api_(std::make_shared<S3Api>(std::move(options))) {}
S3BlobStore::~S3BlobStore() = default;

size_t S3BlobStore::PendingWriters() const { return api_->pending_writers.load(); }

Result<uint64_t> S3BlobStore::Stat(const Sha256& id) {
  HANGAR_ASSIGN_OR_RETURN(auto size, api_->Head(api_->BlobKey(id)));
  if (!size) return UnknownBlob(id);
  return *size;
}

Result<std::unique_ptr<ByteSource>> S3BlobStore::Open(const Sha256& id, ByteRange range) {
  auto empty = [] { return std::unique_ptr<ByteSource>(std::make_unique<StringSource>("")); };
  if (range.length && *range.length == 0) {  // no Range header can ask for nothing
    HANGAR_ASSIGN_OR_RETURN(auto size, Stat(id));
    HANGAR_TRY(ResolveRange(range, size));
    return empty();
  }
  std::vector<std::pair<std::string, std::string>> headers;
  if (range.offset > 0 || range.length) {
    std::string spec = "bytes=" + std::to_string(range.offset) + "-";
    if (range.length) spec += std::to_string(range.offset + *range.length - 1);
    headers.emplace_back("Range", spec);
  }
  const std::string key = api_->BlobKey(id);
  HANGAR_ASSIGN_OR_RETURN(auto stream, api_->Stream(key, std::move(headers)));
  long status = stream->Status();
  if (status == 200 || status == 206) return std::unique_ptr<ByteSource>(std::move(stream));
  if (status == 404) return UnknownBlob(id);
  if (status == 416) {  // offset at or past the end: which one decides
    HANGAR_ASSIGN_OR_RETURN(auto size, Stat(id));
    HANGAR_TRY(ResolveRange(range, size));
    return empty();
  }
  net::HttpResponse res = stream->Head();
  if (auto body = ReadAll(*stream, 64 * 1024)) res.body = std::move(*body);
  return api_->Fail("GET " + key, res);
}

Result<std::unique_ptr<BlobWriter>> S3BlobStore::Create(const Sha256& expected,
                                                        std::optional<uint64_t> expected_size) {
  return MakeS3BlobWriter(api_, expected, expected_size);
}

Result<void> S3BlobStore::Delete(const Sha256& id) {
  const std::string key = api_->BlobKey(id);
  HANGAR_ASSIGN_OR_RETURN(auto size, api_->Head(key));
  if (!size) return UnknownBlob(id);
  return api_->DeleteObject(key);
}

Result<std::string> S3BlobStore::RedirectUrl(const Sha256& id, std::chrono::seconds ttl) {
  return api_->Presign("GET", api_->BlobKey(id), {}, ttl);
}

Result<std::string> S3BlobStore::BeginParts(std::string_view key, uint64_t size,
                                            uint64_t part_size) {
  if (!IsLowerHex(key, 32)) {
    return MakeError(ErrorCode::BadRequest, "upload key must be 32 lower-case hex characters");
  }
  if (part_size == 0) return MakeError(ErrorCode::BadRequest, "part size must not be 0");
  if (size > part_size && part_size < api_->options().min_part_size) {
    return MakeError(ErrorCode::BadRequest,
                     "part size " + std::to_string(part_size) + " is below the S3 minimum of " +
                         std::to_string(api_->options().min_part_size) + " bytes");
  }
  if ((size + part_size - 1) / part_size > kMaxPartNumber) {
    return MakeError(ErrorCode::BadRequest, "a blob of " + std::to_string(size) +
                                                " bytes needs more than 10000 parts of " +
                                                std::to_string(part_size) + " bytes");
  }
  const std::string name =
      std::string(key) + "-" + std::to_string(part_size) + "-" + std::to_string(NowUnix());
  HANGAR_ASSIGN_OR_RETURN(auto id, api_->CreateMultipart(api_->UploadsPrefix() + name));
  return name + ":" + id;
}

Result<PartInfo> S3BlobStore::PutPart(std::string_view handle, uint64_t number, uint64_t offset,
                                      uint64_t size, ByteSource& body,
                                      std::optional<Sha256> sha256) {
  HANGAR_ASSIGN_OR_RETURN(auto h, ParseHandle(handle));
  if (number == 0 || number > kMaxPartNumber) {
    return MakeError(ErrorCode::BadRequest, "part number must be 1 to 10000");
  }
  if (auto known = body.Size(); known && *known != size) {
    return MakeError(ErrorCode::SizeInvalid, "part body has " + std::to_string(*known) +
                                                 " bytes, expected " + std::to_string(size));
  }
  VerifyingSource verified(body, size, sha256);
  HANGAR_ASSIGN_OR_RETURN(
      auto etag, api_->UploadPart(api_->UploadsPrefix() + h.name, h.upload_id, number, verified));
  return PartInfo{number, size, etag};
}

Result<std::string> S3BlobStore::PartUrl(std::string_view handle, uint64_t number, uint64_t size,
                                         std::chrono::seconds ttl) {
  if (!api_->options().direct_parts) return std::string();
  auto h = ParseHandle(handle);
  if (!h) return MakeError(ErrorCode::Internal, h.error().message);
  return api_->Presign("PUT", api_->UploadsPrefix() + h->name,
                       {{"partNumber", std::to_string(number)}, {"uploadId", h->upload_id}}, ttl);
}

Result<std::vector<PartInfo>> S3BlobStore::ListParts(std::string_view handle) {
  HANGAR_ASSIGN_OR_RETURN(auto h, ParseHandle(handle));
  return api_->ListParts(api_->UploadsPrefix() + h.name, h.upload_id);
}

Result<void> S3BlobStore::CompleteParts(std::string_view handle, const Sha256& expected,
                                        uint64_t size) {
  HANGAR_ASSIGN_OR_RETURN(auto h, ParseHandle(handle));
  if (h.part_size == 0) return MakeError(ErrorCode::NotFound, "'" + h.name + "' takes no parts");
  const std::string staging = api_->UploadsPrefix() + h.name;
  const uint64_t count = std::max<uint64_t>(1, (size + h.part_size - 1) / h.part_size);

  auto parts = api_->ListParts(staging, h.upload_id);
  if (!parts && parts.error().code == ErrorCode::NotFound) {
    // Completed by an earlier call that failed later (copy, network): resume from the
    // staging object if it is there.
    HANGAR_ASSIGN_OR_RETURN(auto exists, api_->Head(staging));
    if (!exists) return std::move(parts).error();
  } else if (!parts) {
    return std::move(parts).error();
  } else {
    std::vector<std::pair<uint64_t, std::string>> use;
    std::string missing, wrong;
    auto it = parts->begin();
    for (uint64_t n = 1; n <= count; ++n) {
      while (it != parts->end() && it->number < n) ++it;
      uint64_t want = n < count ? h.part_size : size - (count - 1) * h.part_size;
      if (it == parts->end() || it->number != n) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(n);
      } else if (it->size != want) {
        wrong += (wrong.empty() ? "" : "; ") +
                 ("part " + std::to_string(n) + " has " + std::to_string(it->size) +
                  " bytes, expected " + std::to_string(want));
      } else {
        use.emplace_back(n, it->etag);
      }
    }
    if (!missing.empty() || !wrong.empty()) {
      std::string msg = "upload is incomplete:";
      if (!missing.empty()) msg += " missing parts " + missing;
      if (!wrong.empty()) msg += (missing.empty() ? " " : "; ") + wrong;
      return MakeError(ErrorCode::Conflict, msg);
    }
    HANGAR_TRY(api_->CompleteMultipart(staging, h.upload_id, use));
  }

  // S3 knows no sha256 of the whole: read the staging object back and hash it.
  HANGAR_ASSIGN_OR_RETURN(auto stream, api_->Stream(staging, {}));
  if (!Ok(stream->Head())) {
    net::HttpResponse res = stream->Head();
    if (auto body = ReadAll(*stream, 64 * 1024)) res.body = std::move(*body);
    return api_->Fail("GET " + staging, res);
  }
  Sha256Hasher hasher;
  uint64_t total = 0;
  std::vector<char> buf(256 * 1024);
  for (;;) {
    HANGAR_ASSIGN_OR_RETURN(auto n, stream->Read(buf));
    if (n == 0) break;
    hasher.Update(std::string_view(buf.data(), n));
    total += n;
  }
  stream.reset();
  if (total != size) {
    (void)api_->DeleteObject(staging);
    return MakeError(ErrorCode::SizeInvalid, "parts hold " + std::to_string(total) +
                                                 " bytes, expected " + std::to_string(size));
  }
  Sha256 actual = hasher.Finish();
  if (actual != expected) {
    (void)api_->DeleteObject(staging);
    return MakeError(ErrorCode::DigestInvalid,
                     "content has sha256 " + actual.Hex() + ", expected " + expected.Hex());
  }
  const std::string key = api_->BlobKey(expected);
  HANGAR_ASSIGN_OR_RETURN(auto exists, api_->Head(key));
  HANGAR_TRY(exists ? api_->Touch(key, *exists) : api_->Copy(staging, key, size));
  return api_->DeleteObject(staging);
}

Result<void> S3BlobStore::AbortParts(std::string_view handle) {
  auto h = ParseHandle(handle);
  if (!h) return {};  // nothing of ours can live under a malformed handle
  const std::string staging = api_->UploadsPrefix() + h->name;
  if (!h->upload_id.empty()) HANGAR_TRY(api_->AbortMultipart(staging, h->upload_id));
  return api_->DeleteObject(staging);
}

Result<std::vector<std::string>> S3BlobStore::ListStaleParts(std::chrono::seconds older_than) {
  const int64_t cutoff = NowUnix() - older_than.count();
  const std::string prefix = api_->UploadsPrefix();
  std::vector<std::string> out;
  // Open multipart uploads.
  std::string key_marker, id_marker;
  for (;;) {
    Query q = {{"uploads", ""}, {"prefix", prefix}};
    if (!key_marker.empty()) {
      q.emplace_back("key-marker", key_marker);
      q.emplace_back("upload-id-marker", id_marker);
    }
    HANGAR_ASSIGN_OR_RETURN(auto res, api_->Call("GET", "", q));
    if (!Ok(res)) return api_->Fail("ListMultipartUploads", res, ErrorCode::Internal);
    for (std::string_view u : s3xml::Elements(res.body, "Upload")) {
      std::string key = s3xml::Text(u, "Key").value_or("");
      if (!key.starts_with(prefix)) continue;
      std::string handle =
          key.substr(prefix.size()) + ":" + s3xml::Text(u, "UploadId").value_or("");
      // Our names carry their start time (some S3 doubles report no real Initiated).
      auto h = ParseHandle(handle);
      int64_t begun =
          h && h->begun > 0 ? h->begun : ParseS3Time(s3xml::Text(u, "Initiated").value_or(""));
      if (begun >= cutoff) continue;
      // Started long ago, but maybe still receiving parts: the last part's time decides.
      if (h) {
        auto last = api_->LastPartTime(key, h->upload_id);
        if (!last && last.error().code == ErrorCode::NotFound) continue;  // gone meanwhile
        if (!last) return std::move(last).error();
        if (*last >= cutoff) continue;
      }
      out.push_back(std::move(handle));
    }
    if (s3xml::Text(res.body, "IsTruncated").value_or("false") != "true") break;
    key_marker = s3xml::Text(res.body, "NextKeyMarker").value_or("");
    id_marker = s3xml::Text(res.body, "NextUploadIdMarker").value_or("");
    if (key_marker.empty()) break;
  }
  // Staging objects a completed-but-unfinished write left: handle "<name>:".
  HANGAR_TRY(api_->ListObjects(prefix, [&](std::string_view c) -> Result<void> {
    std::string key = s3xml::Text(c, "Key").value_or("");
    if (key.starts_with(prefix) &&
        ParseS3Time(s3xml::Text(c, "LastModified").value_or("")) < cutoff) {
      out.push_back(key.substr(prefix.size()) + ":");
    }
    return {};
  }));
  return out;
}

Result<void> S3BlobStore::ForEachBlob(const std::function<Result<void>(const BlobListing&)>& fn) {
  const std::string prefix = api_->options().prefix + "sha256/";
  return api_->ListObjects(prefix, [&](std::string_view c) -> Result<void> {
    std::string key = s3xml::Text(c, "Key").value_or("");
    auto id = Sha256::ParseHex(std::string_view(key).substr(std::min(key.size(), prefix.size())));
    if (!key.starts_with(prefix) || !id) return {};  // not ours
    BlobListing b;
    b.id = *id;
    b.size = std::strtoull(s3xml::Text(c, "Size").value_or("0").c_str(), nullptr, 10);
    b.modified = ParseS3Time(s3xml::Text(c, "LastModified").value_or(""));
    return fn(b);
  });
}

Result<std::vector<TmpListing>> S3BlobStore::SweepTemporaries(std::chrono::seconds, bool) {
  return std::vector<TmpListing>{};
}

Result<void> S3BlobStore::CheckUsable() {
  auto res = api_->Call("HEAD", "");
  if (!res) {
    return MakeError(ErrorCode::Unavailable,
                     "S3 " + api_->Where() + " is not reachable: " + res.error().message);
  }
  if (!Ok(*res)) {
    return MakeError(ErrorCode::Unavailable, "S3 " + api_->Where() + " is not usable: HEAD " +
                                                 "bucket answered " + std::to_string(res->status) +
                                                 (res->status == 404 ? " (no such bucket)" : "") +
                                                 (res->status == 403 ? " (access denied)" : ""));
  }
  return {};
}

Result<size_t> S3BlobStore::StagingCount() {
  auto stale = ListStaleParts(std::chrono::seconds(-3600));  // everything, however new
  if (!stale) return std::move(stale).error();
  return stale->size();
}

}  // namespace hangar::storage
