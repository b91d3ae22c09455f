#include "git/pkt_line.h"

#include <cassert>

namespace hangar::git {
namespace {

constexpr char kHex[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string PktLine(std::string_view payload) {
  assert(payload.size() <= kMaxPktPayload);
  size_t n = payload.size() + 4;
  std::string out;
  out.reserve(n);
  out.push_back(kHex[(n >> 12) & 0xf]);
  out.push_back(kHex[(n >> 8) & 0xf]);
  out.push_back(kHex[(n >> 4) & 0xf]);
  out.push_back(kHex[n & 0xf]);
  out.append(payload);
  return out;
}

std::string PktError(std::string_view message) {
  std::string payload = "ERR ";
  payload.append(message.substr(0, kMaxPktPayload - 5)).push_back('\n');
  return PktLine(payload);
}

Result<std::optional<Pkt>> PktReader::Next() {
  incomplete_ = false;
  if (pos_ == buf_.size()) return std::optional<Pkt>();
  if (buf_.size() - pos_ < 4) {
    incomplete_ = true;
    return MakeError(ErrorCode::BadRequest, "truncated pkt-line length");
  }
  size_t len = 0;
  for (size_t i = 0; i < 4; ++i) {
    int v = HexValue(buf_[pos_ + i]);
    if (v < 0) return MakeError(ErrorCode::BadRequest, "invalid pkt-line length");
    len = len * 16 + static_cast<size_t>(v);
  }
  Pkt pkt;
  if (len < 4) {
    if (len == 3) return MakeError(ErrorCode::BadRequest, "invalid pkt-line length 0003");
    pkt.type = len == 0 ? PktType::Flush : len == 1 ? PktType::Delim : PktType::ResponseEnd;
    pos_ += 4;
    return std::optional(pkt);
  }
  if (len > kMaxPktPayload + 4)
    return MakeError(ErrorCode::BadRequest, "pkt-line longer than 65520 bytes");
  if (buf_.size() - pos_ < len) {
    incomplete_ = true;
    return MakeError(ErrorCode::BadRequest, "truncated pkt-line");
  }
  pkt.payload = buf_.substr(pos_ + 4, len - 4);
  pos_ += len;
  return std::optional(pkt);
}

}  // namespace hangar::git
