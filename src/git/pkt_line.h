#pragma once
// pkt-line framing (git-lfs.md §2): writing packets, and a reader over a buffer for
// inspecting requests (policy checks, logging).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace hangar::git {

// Largest payload of one pkt-line: 65520 bytes in all, minus the 4-byte length.
inline constexpr size_t kMaxPktPayload = 65516;

// One data packet: 4 lower-case hex digits giving payload.size() + 4, then the payload.
// Precondition: payload.size() <= kMaxPktPayload (split larger data yourself).
std::string PktLine(std::string_view payload);
// "0000": end of a message or list.
inline std::string_view PktFlush() { return "0000"; }
// "0001": (protocol v2) separates the sections of one message.
inline std::string_view PktDelim() { return "0001"; }
// An error packet, "ERR <message>\n"; git prints it as "remote error: <message>".
std::string PktError(std::string_view message);

enum class PktType { Data, Flush, Delim, ResponseEnd };

struct Pkt {
  PktType type = PktType::Data;
  std::string_view payload;  // empty for the special packets; points into the buffer
  // The payload without one trailing LF (text lines may or may not carry it).
  std::string_view Text() const {
    return !payload.empty() && payload.back() == '\n' ? payload.substr(0, payload.size() - 1)
                                                      : payload;
  }
};

// Reads pkt-lines one by one from a buffer it does not own.
class PktReader {
 public:
  explicit PktReader(std::string_view buffer) : buf_(buffer) {}

  // The next packet; nullopt at the end of the buffer. Errors: BadRequest when the bytes
  // are not a pkt-line (bad length digits, length 1..3 other than 0001/0002, more than
  // 65520) or the buffer ends inside a packet (see Incomplete()).
  Result<std::optional<Pkt>> Next();
  // True after Next() failed only because the buffer ends inside a packet: a streaming
  // caller may append more bytes and retry from Offset().
  bool Incomplete() const { return incomplete_; }
  // Bytes consumed so far: the start of the next packet.
  size_t Offset() const { return pos_; }
  // The bytes after the last packet read (e.g. the pack after a receive-pack command list).
  std::string_view Rest() const { return buf_.substr(pos_); }

 private:
  std::string_view buf_;
  size_t pos_ = 0;
  bool incomplete_ = false;
};

}  // namespace hangar::git
