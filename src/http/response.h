#pragma once
// Response: what a handler returns. A small body is a string; a large one is a ByteSource
// that http/ pumps to the socket chunk by chunk.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/byte_source.h"

namespace hangar::http {

class Response {
 public:
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                        // used when `stream` is null
  std::unique_ptr<ByteSource> stream;      // streamed body; chunked unless content_length set
  std::optional<uint64_t> content_length;  // stream length, or the length a HEAD announces
  bool close = false;                      // close the connection after this response
  // The stream's Read() may wait long on a peer (a proxied answer, an event stream): http/
  // reads it on a thread of its own (limits.streaming_bodies), not on a shared worker.
  bool stream_waits = false;

  // Replaces any header of that name (case-insensitive).
  void SetHeader(std::string_view name, std::string value);
  // Adds a header even if one of that name exists.
  void AddHeader(std::string_view name, std::string value);
  // Value of header `name` (case-insensitive), "" when absent.
  std::string_view GetHeader(std::string_view name) const;

  // A response whose body is `json` with Content-Type application/json (or `content_type`).
  static Response Json(int status, std::string json,
                       std::string_view content_type = "application/json");
  static Response Text(int status, std::string text,
                       std::string_view content_type = "text/plain; charset=utf-8");
  // A streamed body; its Size(), when known, becomes the Content-Length.
  static Response Stream(int status, std::unique_ptr<ByteSource> src,
                         std::string_view content_type = "application/octet-stream");
};

// A Content-Disposition value (RFC 6266) naming `filename` (the last path segment of a file,
// say): "inline" or "attachment", with the name percent-encoded in filename* (RFC 8187)
// and, for old clients, an ASCII filename with control bytes, quotes and backslashes as
// '_'. It ends in ';' as the public hub's does: huggingface_hub finds the name with the
// pattern `filename="(.*?)";`.
std::string ContentDisposition(std::string_view filename, bool attachment = false);

// `s` fit for a header value: CR, LF and other control bytes become spaces (messages can
// quote user input).
std::string HeaderSafe(std::string s);

}  // namespace hangar::http
