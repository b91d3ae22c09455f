// LfsService's HF multipart transfer (hf-api.md §7.4): part uploads into a per-upload
// directory under LfsServiceOptions::multipart_dir, and the completion that streams the
// parts, in order, into the blob store.
//
// Layout: <multipart_dir>/<sha256 hex of the ticket>/<part number>, each written as
// "<n>.tmp-<pid>-<counter>" first and renamed into place, so a re-sent part replaces the
// earlier one atomically and concurrent PUTs of one part never mix their bytes.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <system_error>
#include <vector>

#include "core/log.h"
#include "services/lfs/lfs_service.h"

namespace hangar::services {

namespace fs = std::filesystem;

namespace {

constexpr size_t kCopyChunk = 256 * 1024;

std::atomic<uint64_t> tmp_counter{0};

// "W/\"abc\"" / "\"abc\"" / "abc" → "abc" (clients echo the ETag header as received).
std::string_view BareEtag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return etag;
}

Error IoError(const fs::path& path, std::string_view what) {
  return MakeError(ErrorCode::Internal, std::string(what) + " " + path.string());
}

}  // namespace

uint64_t LfsService::ChunkSizeFor(uint64_t size) const {
  uint64_t chunk = std::max<uint64_t>(options_.multipart_chunk_bytes, 1);
  uint64_t smallest = (size + kMaxMultipartParts - 1) / kMaxMultipartParts;
  return std::max(chunk, smallest);
}

fs::path LfsService::PartsDir(std::string_view ticket) const {
  // Hashed: the ticket is a credential and must not show up in directory listings.
  return options_.multipart_dir / Sha256::Of(ticket).Hex();
}

Result<std::string> LfsService::UploadPart(std::string_view ticket, const Sha256& oid,
                                           uint64_t part, ByteSource& body,
                                           std::optional<uint64_t> content_length) {
  auto claims = CheckTicket(ticket, oid, TicketOp::Upload);
  if (!claims) return std::move(claims).error();
  if (options_.multipart_dir.empty()) {
    return MakeError(ErrorCode::NotFound, "multipart uploads are not enabled");
  }
  uint64_t chunk = ChunkSizeFor(claims->size);
  uint64_t count = (claims->size + chunk - 1) / chunk;
  if (part < 1 || part > count) {
    return MakeError(ErrorCode::NotFound, "no part " + std::to_string(part) + " of " + oid.Hex() +
                                              " (it has " + std::to_string(count) + " parts)");
  }
  uint64_t expected = std::min(part * chunk, claims->size) - (part - 1) * chunk;
  if (content_length && *content_length != expected) {
    return MakeError(ErrorCode::SizeInvalid, "part " + std::to_string(part) + " must be " +
                                                 std::to_string(expected) + " bytes, not " +
                                                 std::to_string(*content_length));
  }

  fs::path dir = PartsDir(ticket);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir, "cannot create " + ec.message() + ":");
  fs::path final_path = dir / std::to_string(part);
  fs::path tmp_path = dir / (std::to_string(part) + ".tmp-" + std::to_string(::getpid()) + "-" +
                             std::to_string(tmp_counter.fetch_add(1)));
  auto fail = [&](Error e) -> Result<std::string> {
    fs::remove(tmp_path, ec);
    return e;
  };
  std::ofstream out(tmp_path, std::ios::binary | std::ios::trunc);
  if (!out) return fail(IoError(tmp_path, "cannot create"));
  Sha256Hasher hasher;
  uint64_t written = 0;
  std::vector<char> buf(kCopyChunk);
  for (;;) {
    auto n = body.Read(buf);
    if (!n) return fail(std::move(n).error());
    if (*n == 0) break;
    written += *n;
    if (written > expected) {
      return fail(MakeError(ErrorCode::SizeInvalid, "part " + std::to_string(part) +
                                                        " is longer than " +
                                                        std::to_string(expected) + " bytes"));
    }
    hasher.Update(std::string_view(buf.data(), *n));
    out.write(buf.data(), static_cast<std::streamsize>(*n));
    if (!out) return fail(IoError(tmp_path, "cannot write"));
  }
  out.close();
  if (!out) return fail(IoError(tmp_path, "cannot write"));
  if (written != expected) {
    return fail(MakeError(ErrorCode::SizeInvalid,
                          "part " + std::to_string(part) + " has " + std::to_string(written) +
                              " bytes, expected " + std::to_string(expected)));
  }
  fs::rename(tmp_path, final_path, ec);
  if (ec) return fail(IoError(final_path, "cannot rename " + ec.message() + ":"));
  return "\"" + hasher.Finish().Hex() + "\"";
}

Result<void> LfsService::CompleteMultipart(std::string_view ticket, const Sha256& oid,
                                           const std::vector<LfsPartRef>& parts) {
  auto claims = CheckTicket(ticket, oid, TicketOp::Upload);
  if (!claims) return std::move(claims).error();
  if (options_.multipart_dir.empty()) {
    return MakeError(ErrorCode::NotFound, "multipart uploads are not enabled");
  }
  uint64_t chunk = ChunkSizeFor(claims->size);
  uint64_t count = (claims->size + chunk - 1) / chunk;
  // Each part number 1..count exactly once, in any order.
  std::vector<const LfsPartRef*> by_number(count, nullptr);
  for (const auto& p : parts) {
    if (p.number < 1 || p.number > count) {
      return MakeError(ErrorCode::BadRequest, "no part " + std::to_string(p.number) +
                                                  " (the object has " + std::to_string(count) +
                                                  " parts)");
    }
    if (by_number[p.number - 1] != nullptr) {
      return MakeError(ErrorCode::BadRequest,
                       "part " + std::to_string(p.number) + " is listed twice");
    }
    by_number[p.number - 1] = &p;
  }
  fs::path dir = PartsDir(ticket);
  std::error_code ec;
  for (uint64_t i = 1; i <= count; ++i) {
    if (by_number[i - 1] == nullptr) {
      return MakeError(ErrorCode::BadRequest, "part " + std::to_string(i) + " is not listed");
    }
    uint64_t expected = std::min(i * chunk, claims->size) - (i - 1) * chunk;
    uint64_t have = fs::file_size(dir / std::to_string(i), ec);
    if (ec || have != expected) {
      return MakeError(ErrorCode::BadRequest,
                       "part " + std::to_string(i) + " has not been uploaded; upload it again");
    }
  }

  auto writer = blobs_.Create(oid, claims->size);
  if (!writer) return std::move(writer).error();
  std::vector<char> buf(kCopyChunk);
  for (uint64_t i = 1; i <= count; ++i) {
    fs::path path = dir / std::to_string(i);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      (*writer)->Abort();
      return MakeError(ErrorCode::BadRequest,
                       "part " + std::to_string(i) + " has gone; upload it again");
    }
    Sha256Hasher hasher;
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      size_t n = static_cast<size_t>(in.gcount());
      if (n == 0) break;
      hasher.Update(std::string_view(buf.data(), n));
      auto appended = (*writer)->Append(std::span<const char>(buf.data(), n));
      if (!appended) {  // the writer aborted itself
        if (appended.error().code == ErrorCode::SizeInvalid) fs::remove_all(dir, ec);
        return appended;
      }
    }
    if (in.bad()) {
      (*writer)->Abort();
      return IoError(path, "cannot read");
    }
    if (hasher.Finish().Hex() != BareEtag(by_number[i - 1]->etag)) {
      (*writer)->Abort();
      return MakeError(ErrorCode::BadRequest, "the etag given for part " + std::to_string(i) +
                                                  " does not match the uploaded part");
    }
  }
  auto committed = (*writer)->Commit();
  if (!committed) {
    ErrorCode code = committed.error().code;
    if (code == ErrorCode::DigestInvalid || code == ErrorCode::SizeInvalid) {
      fs::remove_all(dir, ec);  // the bytes are wrong: starting over is the only way
    }
    return committed;
  }
  HANGAR_TRY(links_.Link(claims->repo_id, oid, claims->size));
  fs::remove_all(dir, ec);
  if (ec) Log("services")->warn("cannot remove multipart parts {}: {}", dir.string(), ec.message());
  return {};
}

}  // namespace hangar::services
